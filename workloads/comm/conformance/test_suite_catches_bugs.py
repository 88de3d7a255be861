"""The suite's self-test: a small correct server (selftest/echo_server.py) passes it, and the
same server with one classic bug fails the tests that should notice."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parent
SERVER = SUITE / "selftest" / "echo_server.py"

pytestmark = pytest.mark.selftest


def run_suite(bug: str, tests: str) -> tuple[int, str]:
    argv = [
        sys.executable, "-m", "pytest", str(SUITE), "-q", "-p", "no:cacheprovider", "-rf",
        "-k", tests, "--server-argv", f"{sys.executable} {SERVER} --port {{port}} --bug {bug}",
    ]  # fmt: skip
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600, cwd=SUITE)
    return p.returncode, p.stdout + p.stderr


def test_faithful_server_passes():
    status, out = run_suite("faithful", "not selftest and not 16_mib")
    assert status == 0, out[-3000:]


@pytest.mark.parametrize(
    "bug,caught",
    [
        ("echo-type", "test_every_type_is_echoed_as_reply"),
        ("little-endian", "test_echo_sizes"),
        ("end-before-drain", "test_end_and_quit_drain_then_end_then_close"),
        ("no-close-after-end", "test_end_and_quit_drain_then_end_then_close"),
        ("ignore-cap", "test_cap_is_configurable_and_exact"),
        ("drop-split-header", "test_split_at_every_offset"),
    ],
)
def test_broken_server_fails(bug, caught):
    status, out = run_suite(bug, caught)
    summary = out.split("short test summary")[-1]
    assert status == 1 and "FAILED" in summary and caught in summary, out[-3000:]
