#!/usr/bin/env bash
# Re-generate requirements/lock.txt, the exact Python packages (with their hashes) that
# scripts/setup.sh installs: pyproject.toml's dependencies with every extra, plus pip and the
# build backend (requirements/tools.in). Versions already in the lock are kept unless asked:
#   scripts/lock.sh                          # after editing pyproject.toml: add what is new
#   scripts/lock.sh --upgrade-package NAME   # move one package to its newest allowed version
#   scripts/lock.sh --upgrade                # move everything
# The locking tool (uv, pinned here) lives in a throw-away venv, never in .venv.
set -euo pipefail
cd "$(dirname "$0")/.."

UV_VERSION=0.13.8
python=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$python" -m venv "$tmp/venv"
"$tmp/venv/bin/pip" install -q "uv==$UV_VERSION"
# Resolved for CPython 3.11 on x86-64 Linux (the lab's machines); a 3.11.0 floor keeps packages
# that older 3.11 patch releases need (async-timeout for redis-py).
"$tmp/venv/bin/uv" pip compile pyproject.toml requirements/tools.in \
    --all-extras --generate-hashes \
    --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
    --custom-compile-command scripts/lock.sh \
    --quiet -o requirements/lock.txt "$@"
