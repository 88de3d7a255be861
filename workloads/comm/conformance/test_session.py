"""The session rules (SPEC §2): END and QUIT drain then END then close; EOF after a frame
drains then closes; EOF inside a frame closes with nothing more."""

from __future__ import annotations

import socket

import frames
import pytest
from frames import Reader, frame


@pytest.mark.parametrize("closer", [frames.END, frames.QUIT])
def test_end_and_quit_drain_then_end_then_close(server, closer):
    bodies = [frames.pattern(3, m, 2000) for m in range(50)]
    with frames.connect(server.port) as s:
        s.sendall(b"".join(frame(frames.DEFAULT, b) for b in bodies) + frame(closer))
        r = Reader(s)
        for b in bodies:
            assert r.frame() == (frames.REPLY, b)
        assert r.frame() == (frames.END, b""), "a header-only END must follow the last reply"
        assert r.eof_next(), "the connection must close after END"


def test_frames_after_end_are_not_answered(server):
    with frames.connect(server.port) as s:
        s.sendall(frame(frames.DEFAULT, b"a") + frame(frames.END) + frame(frames.DEFAULT, b"b"))
        r = Reader(s)
        assert r.frame() == (frames.REPLY, b"a")
        assert r.frame() == (frames.END, b"")
        assert r.eof_next()


def test_eof_after_a_frame_drains_then_closes(server):
    bodies = [frames.pattern(4, m, 3000) for m in range(20)]
    with frames.connect(server.port) as s:
        s.sendall(b"".join(frame(frames.TEXT, b) for b in bodies))
        s.shutdown(socket.SHUT_WR)
        r = Reader(s)
        for b in bodies:
            assert r.frame() == (frames.REPLY, b)
        assert frames.session_end(r) in ("END", "EOF")


@pytest.mark.parametrize(
    "tail", [b"\x00", b"\x00\x00\x00\x00", frame(0, b"abcdef")[:12]], ids=["1", "4", "body"]
)
def test_eof_inside_a_frame_closes(server, tail):
    with frames.connect(server.port) as s:
        s.sendall(frame(frames.DEFAULT, b"whole") + tail)
        s.shutdown(socket.SHUT_WR)
        r = Reader(s)
        assert r.frame() == (frames.REPLY, b"whole")
        assert r.eof_next(), "a partial frame gets no reply; the connection closes"
    assert server.alive()


def test_abrupt_disconnects_leave_the_server_serving(server):
    for cut in (0, 4, 9, 500):
        s = frames.connect(server.port)
        s.sendall((frame(frames.DEFAULT, b"x" * 1000) * 3)[: 9 + cut] if cut else b"")
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
    with frames.connect(server.port) as s:
        s.sendall(frame(frames.DEFAULT, b"still here") + frame(frames.END))
        r = Reader(s)
        assert r.frame() == (frames.REPLY, b"still here")


def test_input_after_end_does_not_destroy_replies(server):
    """A client keeps sending after END: the server must not close with that input unread
    (the kernel would answer with a reset and destroy replies still in flight); it drains."""
    bodies = [frames.pattern(6, m, 1000) for m in range(200)]
    with frames.connect(server.port) as s:
        data = b"".join(frame(frames.DEFAULT, b) for b in bodies) + frame(frames.END)
        sender = frames.send_in_background(s, data + b"\x00" * (1 << 20))
        r = Reader(s)
        for m, b in enumerate(bodies):
            assert r.frame() == (frames.REPLY, b), f"reply {m} lost or wrong"
        assert r.frame() == (frames.END, b"")
        sender.join(10)
