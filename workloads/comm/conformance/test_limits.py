"""The body-length cap: checked before anything is allocated, only that connection closed."""

from __future__ import annotations

import struct
import threading
import time

import frames
import pytest
from frames import Reader, frame

SLACK_KB = 32 * 1024


def header(kind: int, length: int) -> bytes:
    return struct.pack(">BQ", kind, length)


@pytest.mark.parametrize("length", [(64 << 20) + 1, 1 << 40, (1 << 64) - 1],
                         ids=["cap+1", "1TiB", "2^64-1"])  # fmt: skip
def test_length_above_the_cap_closes_at_once_without_allocating(server, length):
    before = server.rss_kb()
    with frames.connect(server.port) as other:
        other.sendall(frame(frames.DEFAULT, b"first"))
        with frames.connect(server.port) as bad:
            bad.sendall(header(frames.DEFAULT, length) + b"x" * 1000)
            assert Reader(bad).eof_next(5), "the connection must close without a body"
        grown = server.rss_kb() - before
        assert grown < SLACK_KB, f"resident size grew by {grown} KiB"
        other.sendall(frame(frames.DEFAULT, b"second") + frame(frames.END))
        r = Reader(other)
        assert r.frame() == (frames.REPLY, b"first")
        assert r.frame() == (frames.REPLY, b"second")


def test_cap_is_configurable_and_exact(start_server):
    srv = start_server("--max-body", "1000")
    with frames.connect(srv.port) as s:
        s.sendall(frame(frames.DEFAULT, b"y" * 1000) + frame(frames.END))
        r = Reader(s)
        assert r.frame() == (frames.REPLY, b"y" * 1000)
    with frames.connect(srv.port) as s:
        s.sendall(frame(frames.DEFAULT, b"ok") + header(frames.DEFAULT, 1001))
        r = Reader(s)
        assert r.frame() == (frames.REPLY, b"ok")
        assert r.eof_next(5)


def test_slow_sender_of_a_large_body_does_not_block_others(server):
    """A client trickles a 1 MiB body; others keep being served meanwhile."""
    stop = threading.Event()

    def trickle() -> None:
        with frames.connect(server.port) as s:
            s.sendall(header(frames.DEFAULT, 1 << 20))
            while not stop.is_set():
                s.sendall(b"z" * 100)
                time.sleep(0.01)

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    try:
        for m in range(20):
            t0 = time.monotonic()
            with frames.connect(server.port) as s:
                s.sendall(frame(frames.DEFAULT, b"ping") + frame(frames.END))
                assert Reader(s).frame(5) == (frames.REPLY, b"ping")
            assert time.monotonic() - t0 < 2.0, f"message {m} waited behind a slow sender"
    finally:
        stop.set()
        t.join(5)
