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

# 3. The Python virtual environment (re-installed when pyproject.toml changes).
if [ ! -x .venv/bin/python ] || [ pyproject.toml -nt .venv/.installed ]; then
    say "creating .venv and installing the harness"
    "$python" -m venv .venv
    .venv/bin/pip install -q --upgrade pip
    .venv/bin/pip install -q -e .
    touch .venv/.installed
fi

# 4. Rust crates and Go modules, fetched once into their caches.
say "fetching Rust crates and Go modules"
cargo fetch --quiet
go mod download
say "ready"
