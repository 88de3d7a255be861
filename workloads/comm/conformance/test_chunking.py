"""Frames split across reads anywhere, and many frames in one write, give the same replies."""

from __future__ import annotations

import time

import frames
import pytest
from frames import Reader, frame

STREAM_MESSAGES = [
    (frames.DEFAULT, b"hello"),
    (frames.TEXT, b""),
    (frames.BINARY, bytes(range(40))),
]
STREAM = b"".join(frame(k, b) for k, b in STREAM_MESSAGES) + frame(frames.END)
EXPECTED = [(frames.REPLY, b) for _, b in STREAM_MESSAGES]


def run(port: int, parts: list[bytes], pause: float) -> tuple[list, str]:
    with frames.connect(port) as s:
        for i, p in enumerate(parts):
            if i and pause:
                time.sleep(pause)
            s.sendall(p)
        r = Reader(s)
        replies = [r.frame() for _ in STREAM_MESSAGES]
        return replies, frames.session_end(r)


def test_split_at_every_offset(server):
    for cut in range(1, len(STREAM)):
        replies, end = run(server.port, [STREAM[:cut], STREAM[cut:]], 0.002)
        assert replies == EXPECTED, f"split at byte {cut}"
        assert end == "END", f"split at byte {cut}"


def test_one_byte_per_write(server):
    replies, end = run(server.port, [STREAM[i : i + 1] for i in range(len(STREAM))], 0.0005)
    assert replies == EXPECTED and end == "END"


@pytest.mark.parametrize("count", [1000, 20000])
def test_many_frames_in_one_write(server, count):
    messages = [(frames.DEFAULT, frames.pattern(2, m, 1 + m % 64)) for m in range(count)]
    with frames.connect(server.port) as s:
        frames.send_in_background(s, b"".join(frame(k, b) for k, b in messages) + frame(frames.END))
        r = Reader(s)
        for m, (_, body) in enumerate(messages):
            assert r.frame() == (frames.REPLY, body), f"reply {m}"
        assert frames.session_end(r) == "END"
