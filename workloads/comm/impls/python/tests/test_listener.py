"""listener: connections spread over the pool, every client served at once, shutdown."""

from __future__ import annotations

import socket
import time

from comm_py import frame
from comm_py.frame import REPLY


def read_frame(sock: socket.socket) -> tuple[int, bytes]:
    data = b""
    while len(data) < 9 or len(data) < 9 + frame.decode_header(data)[1]:
        chunk = sock.recv(1 << 16)
        assert chunk, "EOF"
        data += chunk
    kind, n = frame.decode_header(data)
    return kind, data[9 : 9 + n]


def test_connections_go_to_the_least_loaded_worker(start_server):
    srv = start_server(pool=4)
    conns = [socket.create_connection(("127.0.0.1", srv.port)) for _ in range(8)]
    try:
        for i, c in enumerate(conns):  # every client answered before any session ends
            c.sendall(frame.encode(0, b"hi %d" % i))
        for i, c in enumerate(conns):
            c.settimeout(5)
            assert read_frame(c) == (REPLY, b"hi %d" % i)
        assert [w.load for w in srv.listener._workers] == [2, 2, 2, 2]
    finally:
        for c in conns:
            c.close()
    deadline = time.monotonic() + 5
    while any(w.load for w in srv.listener._workers) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [w.load for w in srv.listener._workers] == [0, 0, 0, 0]


def test_stop_closes_open_sessions(start_server):
    srv = start_server(pool=2)
    c = socket.create_connection(("127.0.0.1", srv.port))
    c.sendall(frame.encode(0, b"x"))
    c.settimeout(5)
    assert read_frame(c) == (REPLY, b"x")
    t0 = time.monotonic()
    srv.stop()
    assert time.monotonic() - t0 < 2
    assert c.recv(10) == b""  # closed by the server
    c.close()


def test_cap_is_logged(start_server):
    srv = start_server(pool=1, max_body=10)
    with socket.create_connection(("127.0.0.1", srv.port)) as c:
        c.sendall(frame.encode_header(0, 11))
        c.settimeout(5)
        assert c.recv(10) == b""
    assert len(srv.lines) == 1 and "above --max-body 10" in srv.lines[0]
