#!/usr/bin/env bash
# Format and lint checks with each ecosystem's own tools; any finding fails.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="$PWD/build/cargo"

# No absolute path of this machine (checkout, home, workspace) in any file a commit can hold.
.venv/bin/python scripts/check_paths.py

cargo fmt --all --check
cargo clippy --workspace --all-targets --quiet -- -D warnings

unformatted=$(gofmt -l $(git ls-files '*.go'))
[ -z "$unformatted" ] || { echo "gofmt: not formatted: $unformatted" >&2; exit 1; }
go vet ./...

mapfile -t cfiles < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
((${#cfiles[@]} == 0)) || clang-format --dry-run -Werror "${cfiles[@]}"

.venv/bin/ruff check .
.venv/bin/ruff format --check .
echo "lint: clean"
