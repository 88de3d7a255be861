#!/usr/bin/env bash
# Every test of the lab: each language's own unit tests with its own runner, the lint and
# format checks, the harness's tests, and every workload's conformance suite against every
# implementation. Stops at the first failing step.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="$PWD/build/cargo"

# Each step says when it started (seconds since the start): make test must stay well under CI's
# budget (25 minutes), and a log that says where the time went is how it stays there.
start=$SECONDS
step() { printf '\n\033[1m== [%4ds] %s\033[0m\n' "$((SECONDS - start))" "$*"; }

step "lint and format"
scripts/lint.sh

step "Rust unit tests (cargo test)"
cargo test --workspace --quiet

step "Go unit tests (go test)"
go test ./...

step "C and C++ unit tests (ctest)"
cmake --build build/cmake
ctest --test-dir build/cmake --output-on-failure

step "harness and Python unit tests (pytest)"
.venv/bin/pytest -q --durations=12 tests workloads/*/browser/tests drivers/redisbench
# Each Python implementation's own tests alone (the lab's, and wrappers such as echonet's
# uecho): they share module names (protocol.py, ...).
for d in workloads/*/impls/*/tests; do
    compgen -G "$d/test_*.py" >/dev/null || continue
    .venv/bin/pytest -q "$d"
done

# Every fuzz target once over its shared seed corpus and its crash regressions (seconds, not a
# campaign: `msgbench fuzz WORKLOAD --seconds N` runs those; docs/robustness.md). Most of its
# time is compiling the sanitizer builds of the C and C++ targets, so it runs beside the
# conformance suites, which spend much of theirs waiting on sockets and timeouts; its output is
# printed when it ends, and its failure fails the run like any step's.
step "fuzz targets: corpora and crash regressions replayed (msgbench fuzz --replay), in the background"
mkdir -p build/logs
replay_log=build/logs/fuzz-replay.log
./msgbench fuzz --replay >"$replay_log" 2>&1 &
replay_pid=$!
trap 'kill "$replay_pid" 2>/dev/null || true' EXIT

# Each workload's suite in a session of its own: every suite has its own conftest and helper
# modules (imported by their bare names). Each suite's self-test (test_selftest.py) runs here
# too: with no --impl, the plugin keeps it.
for d in workloads/*/conformance; do
    step "conformance: $d (pytest)"
    .venv/bin/pytest -q "$d"
done

step "fuzz replay: its result"
replay_status=0
wait "$replay_pid" || replay_status=$?
trap - EXIT
cat "$replay_log"
((replay_status == 0)) || { echo "fuzz replay failed (exit $replay_status)" >&2; exit 1; }
step "all passed"
