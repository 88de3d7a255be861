"""client_main: the command line, the report, and the program run as the harness runs it."""

from __future__ import annotations

import json
import socket
import subprocess

import pytest
from comm_py import IMPL_DIR, client_main, frame
from comm_py.client_main import UsageError
from comm_py.pattern import Bodies


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
    with pytest.raises(UsageError):
        client_main.parse_args(["--port", "9", "--host", ""])


def test_percentiles_are_nearest_rank():
    ns = [i * 1000 for i in range(1, 101)]  # 1..100 µs
    assert client_main.percentile_us(ns, 0.5) == 50
    assert client_main.percentile_us(ns, 0.99) == 99
    assert client_main.percentile_us(ns, 0.999) == 100
    assert client_main.percentile_us([7000], 0.5) == 7


def run_client(interpreter: list[str], port: int, *args: str) -> tuple[int, dict]:
    p = subprocess.run(
        [*interpreter, "client_main.py", "--port", str(port), *args],
        cwd=IMPL_DIR, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return p.returncode, json.loads(p.stdout)


def test_the_client_against_the_in_process_server(interpreter, server):
    status, doc = run_client(
        interpreter, server.port, "--clients", "3", "--messages", "200", "--size", "777"
    )
    assert status == 0, doc
    assert doc["bytes"] == 3 * 200 * 777 and doc["mb_per_s"] > 0
    status, doc = run_client(
        interpreter, server.port, "--mode", "rtt", "--messages", "50", "--warmup", "5"
    )
    assert status == 0, doc
    lat = doc["latency_us"]
    assert 0 < lat["min"] <= lat["p50"] <= lat["p99"] <= lat["max"]


def test_the_client_reports_a_wrong_reply(interpreter):
    """A server that answers with someone else's body: exit 1 and an error document."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    port = ls.getsockname()[1]
    proc = subprocess.Popen(
        [*interpreter, "client_main.py", "--port", str(port), "--messages", "1", "--size", "10"],
        cwd=IMPL_DIR, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    conn, _ = ls.accept()
    with conn, ls:
        conn.recv(100)
        conn.sendall(frame.encode(frame.REPLY, Bodies(10).expected(1, 0)))
        out, _ = proc.communicate(timeout=30)
    assert proc.returncode == 1
    assert "wrong body" in json.loads(out)["error"]


def test_the_client_reports_a_refused_connection(interpreter, free_port):
    status, doc = run_client(interpreter, free_port, "--messages", "1")
    assert status == 1 and "connect" in doc["error"]
