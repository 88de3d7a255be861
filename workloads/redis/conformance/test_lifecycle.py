"""Start-up and shutdown: a clean exit on SIGTERM with clients connected, a usage error for
bad arguments."""

from __future__ import annotations

import subprocess
import time

import pytest
import resp
from resp import command


def test_sigterm_exits_cleanly_with_clients_connected(fresh_server):
    clients = [resp.connect(fresh_server.port) for _ in range(20)]
    clients[0].sendall(command("SET", "a", "1"))
    resp.read_until(clients[0], b"+OK\r\n")
    clients[1].sendall(b"*3\r\n$3\r\nSET\r\n$1\r\nb\r\n$10\r\nabc")  # mid-request
    t0 = time.monotonic()
    status = fresh_server.terminate(timeout=5)
    took = time.monotonic() - t0
    for c in clients:
        c.close()
    assert status == 0, f"exit status {status} after SIGTERM:\n{fresh_server.log_tail()}"
    assert took < 2.0, f"took {took:.2f} s to exit after SIGTERM"


@pytest.mark.lab_cli
@pytest.mark.parametrize(
    "args", [["--port"], ["--port", "notaport"], ["--port", "70000"], ["--no-such-option"]]
)
def test_bad_arguments_are_a_usage_error(impl, args):
    argv = [a for a in impl.argv() if a != "{port}"]
    i = argv.index("--port")
    argv = argv[:i] + argv[i + 1 :] + args
    p = subprocess.run(argv, cwd=impl.cwd(), capture_output=True, text=True, timeout=10)
    assert p.returncode == 2, f"exit status {p.returncode}"
    assert p.stderr.strip(), "no message on stderr"
    assert p.stdout == ""
