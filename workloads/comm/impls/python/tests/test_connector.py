"""connector: post/get/close against the implementation's own server, and failures from a
scripted one."""

from __future__ import annotations

import socket
import threading

import pytest
from comm_py import frame
from comm_py.connector import Connector, ConnectorError, send_all
from comm_py.frame import REPLY


def test_stream_then_end(server):
    with Connector("127.0.0.1", server.port) as c:
        bodies = [bytes([m % 256]) * (m * 37 % 5000) for m in range(300)]
        for m, b in enumerate(bodies):
            c.post(m % 3, b)
        c.close("end")
        for b in bodies:
            assert c.get(timeout=10) == (REPLY, b)
        assert c.get(timeout=10) is None
        assert c.get() is None  # and it stays over


@pytest.mark.parametrize("how", ["quit", "eof"])
def test_other_session_ends(server, how):
    with Connector("127.0.0.1", server.port) as c:
        c.post(frame.TEXT, b"one")
        c.close(how)
        assert c.get(timeout=10) == (REPLY, b"one")
        assert c.get(timeout=10) is None


def test_bodies_of_any_bytes_like_type_and_size(server):
    big = bytes(range(251)) * 8000  # 2 MB: larger than the receive buffer
    with Connector("127.0.0.1", server.port) as c:
        c.post(0, memoryview(big)[3:])
        c.post(0, bytearray(b"ba"))
        c.post(0, b"")
        c.close()
        assert c.get(timeout=20) == (REPLY, big[3:])
        assert c.get(timeout=10) == (REPLY, b"ba")
        assert c.get(timeout=10) == (REPLY, b"")
        assert c.get(timeout=10) is None


def test_post_checks_its_arguments(server):
    with Connector("127.0.0.1", server.port) as c:
        with pytest.raises(ValueError):
            c.post(256, b"")
        with pytest.raises(ValueError):
            c.close("later")
        c.close()
        with pytest.raises(ConnectorError):
            c.post(0, b"late")
        assert c.get(timeout=10) is None


def test_abort_wakes_get(server):
    with Connector("127.0.0.1", server.port) as c:
        threading.Timer(0.05, c.abort, args=("stop now",)).start()
        with pytest.raises(ConnectorError, match="stop now"):
            c.get(timeout=10)


def test_get_timeout(server):
    with Connector("127.0.0.1", server.port) as c:
        with pytest.raises(TimeoutError):
            c.get(timeout=0.05)


def test_refused_connection():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(OSError):
        Connector("127.0.0.1", port)


def scripted_server(reply: bytes):
    """Accepts one connection, sends `reply`, closes. Returns (port, thread)."""
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)

    def serve():
        conn, _ = ls.accept()
        with conn:
            conn.sendall(reply)
            conn.shutdown(socket.SHUT_WR)
            conn.recv(1 << 16)
        ls.close()

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    return ls.getsockname()[1], t


@pytest.mark.parametrize(
    "reply, error",
    [
        (frame.encode(REPLY, b"ok") + frame.encode(REPLY, b"cut")[:7], "inside a frame"),
        (frame.encode(REPLY, b"ok") + frame.encode_header(REPLY, 1 << 40), "above the cap"),
    ],
)
def test_a_broken_stream_is_an_error_after_the_good_replies(reply, error):
    port, t = scripted_server(reply)
    with Connector("127.0.0.1", port) as c:
        assert c.get(timeout=10) == (REPLY, b"ok")
        with pytest.raises(ConnectorError, match=error):
            c.get(timeout=10)
    t.join(5)


def test_end_of_file_after_whole_frames_ends_the_session():
    port, t = scripted_server(frame.encode(REPLY, b"ok"))
    with Connector("127.0.0.1", port) as c:
        assert c.get(timeout=10) == (REPLY, b"ok")
        assert c.get(timeout=10) is None
    t.join(5)


class TrickleSocket:
    """sendmsg() that takes at most `most` bytes per call, like a signal-interrupted send."""

    def __init__(self, most: int) -> None:
        self.most = most
        self.out = bytearray()
        self.calls = 0

    def sendmsg(self, buffers):
        self.calls += 1
        data = b"".join(bytes(b) for b in buffers)[: self.most]
        self.out += data
        return len(data)


@pytest.mark.parametrize("most", [1, 2, 5, 9, 1000])
def test_send_all_finishes_partial_writes(most):
    buffers = [b"head", memoryview(b"body-one"), b"", bytearray(b"x" * 20), b"tail"]
    sock = TrickleSocket(most)
    send_all(sock, list(buffers))
    assert sock.out == b"".join(bytes(b) for b in buffers)
