"""The suite's self-test: run it against redis-server behind a proxy that breaks one thing
(broken/proxy.py) and check that the tests that should notice do fail — and that the same
proxy without damage passes them (so the failures come from the damage, not the proxy)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parent
PROXY = SUITE / "broken" / "proxy.py"
CASES = ["arity-get-too-few", "set-get", "incr", "proto-invalid-mbulk-len", "lpop-count"]

pytestmark = [
    pytest.mark.selftest,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed"),
]


def run_suite(mode: str) -> tuple[int, str]:
    k = " or ".join(f"adhoc-{c}]" for c in CASES)
    argv = [
        sys.executable, "-m", "pytest", str(SUITE / "test_differential.py"), "-q",
        "-p", "no:cacheprovider", "-k", k, "-rf",
        "--server-argv", f"{sys.executable} {PROXY} --port {{port}} --mode {mode}",
    ]  # fmt: skip
    p = subprocess.run(argv, capture_output=True, text=True, timeout=300, cwd=SUITE)
    return p.returncode, p.stdout + p.stderr


def test_faithful_proxy_passes():
    status, out = run_suite("faithful")
    assert status == 0, out[-3000:]
    assert f"{len(CASES)} passed" in out, out[-3000:]


@pytest.mark.parametrize(
    "mode,caught",
    [
        ("lowercase-errors", "arity-get-too-few"),
        ("keep-open", "proto-invalid-mbulk-len"),
        ("nil-as-empty", "set-get"),
        ("int-as-bulk", "incr"),
    ],
)
def test_broken_server_fails(mode, caught):
    status, out = run_suite(mode)
    assert status == 1, out[-3000:]
    assert "FAILED" in out and f"adhoc-{caught}]" in out.split("short test summary")[-1], out[
        -3000:
    ]
