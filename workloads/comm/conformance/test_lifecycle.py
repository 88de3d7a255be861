"""Start-up and shutdown: clean exit on SIGTERM with sessions open, usage errors."""

from __future__ import annotations

import subprocess
import time

import frames
import pytest
from frames import frame


def test_sigterm_exits_cleanly_with_sessions_open(start_server):
    srv = start_server()
    conns = [frames.connect(srv.port) for _ in range(10)]
    conns[0].sendall(frame(frames.DEFAULT, b"a"))
    conns[1].sendall(frame(frames.DEFAULT, b"b" * 100)[:50])  # mid-frame
    time.sleep(0.1)
    t0 = time.monotonic()
    status = srv.terminate(timeout=5)
    took = time.monotonic() - t0
    for c in conns:
        c.close()
    assert status == 0, f"exit status {status} after SIGTERM:\n{srv.log_tail()}"
    assert took < 2.5, f"{took:.2f} s to exit after SIGTERM"


@pytest.mark.lab_cli
@pytest.mark.parametrize(
    "args",
    [["--port"], ["--port", "notaport"], ["--port", "70000"], ["--pool", "0"],
     ["--max-body", "-1"], ["--no-such-option"]],
)  # fmt: skip
def test_bad_arguments_are_a_usage_error(impl, args):
    argv = [a for a in impl.argv() if a != "{port}"]
    i = argv.index("--port")
    argv = argv[:i] + argv[i + 1 :]
    if args[0] != "--port":
        argv += ["--port", "1"]  # an otherwise valid line; the bad option is the only fault
    p = subprocess.run(argv + args, cwd=impl.cwd(), capture_output=True, text=True, timeout=10)
    assert p.returncode == 2, f"exit status {p.returncode}: {p.stderr}"
    assert p.stderr.strip() and p.stdout == ""
