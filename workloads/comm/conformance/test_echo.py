"""Every message is echoed with its body intact and type REPLY, in order, for every type code
and body sizes from 0 B to 16 MiB."""

from __future__ import annotations

import frames
import pytest
from frames import Reader, frame

SIZES = [0, 1, 8, 9, 100, 4095, 4096, 4097, 65535, 65536, 65537, 1 << 20]
TYPES = [frames.DEFAULT, frames.TEXT, frames.REPLY, frames.FLUSH, frames.STRING, frames.BINARY, 3]


def echo(port: int, messages: list[tuple[int, bytes]]) -> tuple[list[tuple[int, bytes]], str]:
    """Send from a thread while reading: a server may stream a large body's reply back before
    it has read all of it (SPEC §2), so a client that only reads after sending could deadlock."""
    with frames.connect(port) as s:
        data = b"".join(frame(k, b) for k, b in messages) + frame(frames.END)
        sender = frames.send_in_background(s, data)
        r = Reader(s)
        replies = [r.frame(60) for _ in messages]
        end = frames.session_end(r)
        sender.join(10)
        return replies, end


@pytest.mark.parametrize("size", SIZES)
def test_echo_sizes(server, size):
    body = frames.pattern(1, size, size)
    replies, end = echo(server.port, [(frames.DEFAULT, body)])
    assert replies == [(frames.REPLY, body)]
    assert end == "END"


@pytest.mark.parametrize("kind", TYPES)
def test_every_type_is_echoed_as_reply(server, kind):
    body = frames.pattern(kind, 3, 777)
    replies, _ = echo(server.port, [(kind, body), (kind, b"")])
    assert replies == [(frames.REPLY, body), (frames.REPLY, b"")]


@pytest.mark.timeout(180)
def test_echo_16_mib(server):
    body = frames.pattern(5, 5, 16 << 20)
    replies, end = echo(server.port, [(frames.BINARY, body)])
    assert replies[0][0] == frames.REPLY and len(replies[0][1]) == len(body)
    assert replies[0][1] == body
    assert end == "END"


def test_replies_in_order(server):
    messages = [(frames.TEXT, frames.pattern(0, m, m % 300)) for m in range(500)]
    replies, _ = echo(server.port, messages)
    assert replies == [(frames.REPLY, b) for _, b in messages]


def test_binary_bodies_that_look_like_headers(server):
    body = frame(frames.END) + frame(frames.QUIT) + bytes(range(256))
    replies, end = echo(server.port, [(frames.DEFAULT, body)])
    assert replies == [(frames.REPLY, body)] and end == "END"
