"""Many clients at once, and bad clients that must not disturb good ones."""

from __future__ import annotations

import socket
import struct
import threading

import pytest
import resp
from resp import command

# Needs a real key-value server (the floor answers +OK to everything).
pytestmark = pytest.mark.semantics


def test_256_concurrent_clients(server):
    port = server.port
    errors: list[str] = []
    start = threading.Barrier(256)

    def client(i: int) -> None:
        try:
            with resp.connect(port) as s:
                start.wait(10)
                want = b""
                for round_no in range(5):
                    s.sendall(
                        command("SET", f"k{i}", f"{i}:{round_no}")
                        + command("INCR", "shared")
                        + command("GET", f"k{i}")
                    )
                    v = f"{i}:{round_no}".encode()
                    tail = b"$%d\r\n%s\r\n" % (len(v), v)
                    data, closed = resp.read_until(s, tail)
                    if closed or not data.startswith(b"+OK\r\n:"):
                        errors.append(f"client {i}: {data!r}")
                        return
                    want = data
                del want
        except Exception as e:  # reported below with the client's number
            errors.append(f"client {i}: {e!r}")

    threads = [threading.Thread(target=client, args=(i,)) for i in range(256)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors[:5]
    assert resp.call(port, "GET", "shared") == b"$4\r\n1280\r\n"
    assert resp.call(port, "DBSIZE") == b":257\r\n"


def _rst(s: socket.socket) -> None:
    s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    s.close()


def test_bad_clients_do_not_disturb_a_good_one(server):
    port = server.port
    with resp.connect(port) as good:
        good.sendall(command("RPUSH", "l", "a") + command("SET", "x", "1"))
        assert resp.read_until(good, b"+OK\r\n")[0] == b":1\r\n+OK\r\n"
        # garbage: a protocol error closes only that connection
        with resp.connect(port) as bad:
            bad.sendall(b"*1\r\n+garbage\r\n")
            data, closed = resp.read_until(bad, b"never")
            assert closed and data.startswith(b"-ERR Protocol error")
        # disconnect in the middle of a bulk, politely and with a reset
        half = resp.connect(port)
        half.sendall(b"*3\r\n$3\r\nSET\r\n$1\r\ny\r\n$100\r\nabc")
        half.close()
        rst = resp.connect(port)
        rst.sendall(b"*2\r\n$4\r\nECHO\r\n$50000\r\n" + b"z" * 20000)
        _rst(rst)
        # binary junk
        with resp.connect(port) as junk:
            junk.sendall(bytes(range(256)) * 16)
        good.sendall(command("RPUSH", "l", "b") + command("GET", "x") + command("EXISTS", "y"))
        data, closed = resp.read_until(good, b":0\r\n")
        assert not closed and data == b":2\r\n$1\r\n1\r\n:0\r\n"
    assert server.alive()


def test_reconnect_storm(server):
    """redis-benchmark reconnects every client for every test: 2,000 connect/command/close."""
    for _ in range(2000):
        with resp.connect(server.port) as s:
            s.sendall(b"PING\r\n")
            assert resp.read_until(s, b"+PONG\r\n")[0] == b"+PONG\r\n"
    assert resp.call(server.port, "PING") == b"+PONG\r\n"
