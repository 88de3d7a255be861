"""server_main and client_main: command lines, the body pattern, the report, and both
programs run as the harness runs them."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time

import pytest
from comm_py import client_main, frame, server_main
from comm_py.client_main import Bodies, UsageError

PYTHON = [sys.executable, "-E", "-S"]  # as profiles.toml runs {python}: standard library only


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_arguments():
    assert server_main.parse_args(["--port", "7"]) == (7, 8, 64 << 20)
    assert server_main.parse_args(["--port=7", "--pool", "1", "--max-body=0"]) == (7, 1, 0)
    assert (
        server_main.parse_args(["--max-body", str((1 << 64) - 1), "--port", "65535"])[2]
        == (1 << 64) - 1
    )
    for bad in (
        [], ["--port"], ["--port", "0"], ["--port", "70000"], ["--port", "+5"], ["--port", "x"],
        ["--port", "1", "--pool", "0"], ["--port", "1", "--max-body", "-1"],
        ["--port", "1", "--max-body", str(1 << 64)], ["--port", "1", "--verbose"],
    ):  # fmt: skip
        with pytest.raises(server_main.UsageError):
            server_main.parse_args(bad)


def test_client_arguments():
    o = client_main.parse_args(["--port", "9"])
    assert (o.port, o.host, o.clients, o.messages, o.size) == (9, "127.0.0.1", 1, 1000, 4096)
    assert (o.type, o.mode, o.end, o.warmup) == (0, "stream", "end", 0)
    o = client_main.parse_args(
        "--port 9 --clients 16 --messages 5 --size 0 --type 3 --mode rtt --end eof --warmup 2"
        " --host localhost".split()
    )
    assert (o.clients, o.messages, o.size, o.type, o.mode, o.end, o.warmup, o.host) == (
        16, 5, 0, 3, "rtt", "eof", 2, "localhost",
    )  # fmt: skip
    for bad in ("", "--clients 2", "--port 9 --type 4", "--port 9 --type 8", "--port 9 --mode x",
                "--port 9 --end never", "--port 9 --size -1", "--port 9 --clients 0",
                "--port 9 --bogus 1", "--port 9 --size"):  # fmt: skip
        with pytest.raises(UsageError):
            client_main.parse_args(bad.split())


@pytest.mark.parametrize("size", [0, 1, 250, 251, 4096, 300_000])
def test_bodies_follow_the_spec_pattern(size):
    bodies = Bodies(size)
    assert (bodies.table is None) == (size * 251 > client_main.TABLE_BYTES)
    for c, m in [(0, 0), (3, 17), (15, 999), (250, 250)]:
        want = bytes((c * 7 + m * 13 + i) % 251 for i in range(size))
        assert bodies.expected(c, m) == want
        assert bytes(bodies.posted(c, m)) == want


def test_percentiles_are_nearest_rank():
    ns = [i * 1000 for i in range(1, 101)]  # 1..100 µs
    assert client_main.percentile_us(ns, 0.5) == 50
    assert client_main.percentile_us(ns, 0.99) == 99
    assert client_main.percentile_us(ns, 0.999) == 100
    assert client_main.percentile_us([7000], 0.5) == 7


def run_client(port: int, *args: str) -> tuple[int, dict]:
    p = subprocess.run(
        [*PYTHON, "client_main.py", "--port", str(port), *args],
        cwd=client_main.__file__.rsplit("/", 1)[0], capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return p.returncode, json.loads(p.stdout)


def test_the_client_against_the_in_process_server(server):
    status, doc = run_client(server.port, "--clients", "3", "--messages", "200", "--size", "777")
    assert status == 0, doc
    assert doc["bytes"] == 3 * 200 * 777 and doc["mb_per_s"] > 0
    status, doc = run_client(server.port, "--mode", "rtt", "--messages", "50", "--warmup", "5")
    assert status == 0, doc
    lat = doc["latency_us"]
    assert 0 < lat["min"] <= lat["p50"] <= lat["p99"] <= lat["max"]


def test_the_client_reports_a_wrong_reply():
    """A server that answers with someone else's body: exit 1 and an error document."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    port = ls.getsockname()[1]
    proc = subprocess.Popen(
        [*PYTHON, "client_main.py", "--port", str(port), "--messages", "1", "--size", "10"],
        cwd=client_main.__file__.rsplit("/", 1)[0], stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    conn, _ = ls.accept()
    with conn, ls:
        conn.recv(100)
        conn.sendall(frame.encode(frame.REPLY, Bodies(10).expected(1, 0)))
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "wrong body" in json.loads(out)["error"]


def test_the_client_reports_a_refused_connection():
    status, doc = run_client(free_port(), "--messages", "1")
    assert status == 1 and "connect" in doc["error"]


def test_the_server_program_usage_error_and_sigterm():
    cwd = server_main.__file__.rsplit("/", 1)[0]
    p = subprocess.run([*PYTHON, "server_main.py", "--pool", "0", "--port", "1"], cwd=cwd,
                       capture_output=True, text=True, timeout=30)  # fmt: skip
    assert p.returncode == 2 and p.stdout == "" and len(p.stderr.splitlines()) == 1

    port = free_port()
    proc = subprocess.Popen([*PYTHON, "server_main.py", "--port", str(port)], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                conn = socket.create_connection(("127.0.0.1", port), timeout=1)
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
