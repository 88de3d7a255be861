#!/usr/bin/env bash
# Idempotent set-up of everything the lab needs: Debian packages, the Python virtual
# environment, Rust crates and Go modules. Safe to run again: each step checks first.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1msetup:\033[0m %s\n' "$*"; }
die() { printf 'setup: error: %s\n' "$*" >&2; exit 1; }

# 1. Debian packages (scripts/apt-packages.txt, one per line).
mapfile -t wanted < <(sed 's/#.*//' scripts/apt-packages.txt | tr -s ' \t' '\n' | grep -v '^$')
missing=()
for p in "${wanted[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
    sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    say "installing Debian packages: ${missing[*]}"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# 2. Toolchains that come from outside Debian: say exactly what is missing.
command -v cargo >/dev/null || die "cargo not found: install Rust with rustup (https://rustup.rs)"
command -v go >/dev/null || die "go not found: install Go 1.22 or later (https://go.dev/dl)"
python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' \
    || die "$python is older than 3.11: set PYTHON=/path/to/python3.11"

# 3. The Python virtual environment: exactly the versions of requirements/lock.txt, every file
#    checked against its hash (scripts/lock.sh writes the lock), then msgbench itself, editable,
#    built by the locked setuptools. Done again whenever the lock or pyproject.toml changes
#    (.venv/.installed keeps their hash); packages the lock does not name are removed.
#    `--ray` (make setup-ray) installs requirements/ray-lock.txt instead: the same packages and
#    Ray, the optional cluster runner (docs/hosts.md); .venv/.ray remembers it, so a later plain
#    set-up keeps Ray.
lock=requirements/lock.txt
if [ "${1:-}" = "--ray" ] || [ -e .venv/.ray ]; then
    lock=requirements/ray-lock.txt
fi
want=$(cat "$lock" pyproject.toml | sha256sum | cut -d' ' -f1)
if [ ! -x .venv/bin/python ] || [ "$(cat .venv/.installed 2>/dev/null)" != "$want" ]; then
    say "installing the Python environment (.venv) from $lock"
    [ -x .venv/bin/python ] || "$python" -m venv .venv
    .venv/bin/python -m pip install -q --disable-pip-version-check --require-hashes \
        -r "$lock"
    .venv/bin/python -m pip install -q --disable-pip-version-check --no-deps \
        --no-build-isolation -e .
    mapfile -t stray < <(.venv/bin/python - "$lock" <<'PY'
import re
import sys
from importlib.metadata import distributions

def norm(name):
    return re.sub(r"[-_.]+", "-", name).lower()

locked = {norm(m) for m in re.findall(r"^([A-Za-z0-9][\w.-]*)==", open(sys.argv[1]).read(), re.M)}
for name in sorted({norm(d.metadata["Name"]) for d in distributions()} - locked - {"msgbench"}):
    print(name)
PY
    )
    if ((${#stray[@]})); then
        say "removing packages the lock does not name: ${stray[*]}"
        .venv/bin/python -m pip uninstall -q -y "${stray[@]}"
    fi
    echo "$want" >.venv/.installed
    if [ "$lock" = requirements/ray-lock.txt ]; then touch .venv/.ray; fi
fi

# 4. Rust crates and Go modules, fetched once into their caches.
say "fetching Rust crates and Go modules"
cargo fetch --quiet
go mod download
say "ready"
