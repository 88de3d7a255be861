"""server_main: the command line, and the program run as the harness runs it."""

from __future__ import annotations

import signal
import socket
import subprocess
import time

import pytest
from comm_py import IMPL_DIR, frame, server_main


def test_server_arguments():
    assert server_main.parse_args(["--port", "7"]) == (7, 8, 64 << 20, "127.0.0.1")
    assert server_main.parse_args(["--port=7", "--pool", "1", "--max-body=0"])[:3] == (7, 1, 0)
    assert server_main.parse_args(["--port", "7", "--host", "127.0.0.2"])[3] == "127.0.0.2"
    assert server_main.parse_args(["--host=0.0.0.0", "--port", "7"])[3] == "0.0.0.0"
    assert (
        server_main.parse_args(["--max-body", str((1 << 64) - 1), "--port", "65535"])[2]
        == (1 << 64) - 1
    )
    for bad in (
        [], ["--port"], ["--port", "0"], ["--port", "70000"], ["--port", "+5"], ["--port", "x"],
        ["--port", "1", "--pool", "0"], ["--port", "1", "--max-body", "-1"],
        ["--port", "1", "--max-body", str(1 << 64)], ["--port", "1", "--verbose"],
        ["--port", "1", "--host", "nope"], ["--port", "1", "--host", "300.1.1.1"],
        ["--port", "1", "--host", ""], ["--port", "1", "--host=::1"], ["--port", "1", "--host"],
    ):  # fmt: skip
        with pytest.raises(server_main.UsageError):
            server_main.parse_args(bad)


def test_the_server_program_usage_error_and_sigterm(interpreter, free_port):
    p = subprocess.run(
        [*interpreter, "server_main.py", "--pool", "0", "--port", "1"],
        cwd=IMPL_DIR, capture_output=True, text=True, timeout=30,
    )  # fmt: skip
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1

    proc = subprocess.Popen(
        [*interpreter, "server_main.py", "--port", str(free_port)],
        cwd=IMPL_DIR, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", free_port), timeout=1)
                break
            except OSError:
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.02)
        conn.sendall(frame.encode(0, b"abc")[:5])  # a session in the middle of a frame
        time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(3) == 0
        assert proc.stdout.read() == b""
        conn.close()
    finally:
        proc.kill()
        proc.wait()
