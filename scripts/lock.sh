#!/usr/bin/env bash
# Re-generate requirements/lock.txt, the exact Python packages (with their hashes) that
# scripts/setup.sh installs: pyproject.toml's dependencies with every extra but `ray`, plus pip
# and the build backend (requirements/tools.in); and requirements/ray-lock.txt, the same with
# Ray (scripts/setup.sh --ray, make setup-ray). Versions already in the lock are kept unless asked:
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
# Every extra but `ray` (the optional cluster runner, docs/hosts.md), read from pyproject.toml.
mapfile -t extras < <("$python" -c '
import tomllib
extras = tomllib.load(open("pyproject.toml", "rb"))["project"]["optional-dependencies"]
print("\n".join(f"--extra={e}" for e in extras if e != "ray"))')
# Resolved for CPython 3.11 on x86-64 Linux (the lab's machines); a 3.11.0 floor keeps packages
# that older 3.11 patch releases need (async-timeout for redis-py).
compile() {
    "$tmp/venv/bin/uv" pip compile pyproject.toml requirements/tools.in \
        --generate-hashes \
        --python-version 3.11 --python-platform x86_64-unknown-linux-gnu \
        --custom-compile-command scripts/lock.sh \
        --quiet "$@"
}
compile "${extras[@]}" -o requirements/lock.txt "$@"
# requirements/ray-lock.txt: the same packages at the same versions (lock.txt as constraints),
# and Ray with what it needs (make setup-ray).
compile --all-extras -c requirements/lock.txt -o requirements/ray-lock.txt "$@"
