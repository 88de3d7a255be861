"""The same request streams split across reads: replies must not depend on where TCP cuts them.

Each stream is sent in two writes split at every byte offset (a short pause between them so
the server sees two reads), and once one byte per write. The replies must equal redis-server's
for the whole stream in one write.
"""

from __future__ import annotations

import pytest
import resp
from cases import CASES, c, raw
from resp import command

# Needs a real key-value server (the floor answers +OK to everything).
pytestmark = pytest.mark.semantics

PAUSE_S = 0.002

_BY_NAME = dict(CASES)
CHOSEN = [
    "set-get",
    "set-binary",
    "set-ex",
    "incr",
    "mset-mget",
    "lpop-count",
    "hset-hget",
    "zadd-doubles",
    "inline-set-get",
    "inline-lf-only",
    "inline-empty-lines",
    "inline-double-quotes",
    "inline-escapes",
    "inline-mixed-with-mbulk",
    "unknown-inline-args",
    "proto-expected-dollar",
    "proto-invalid-mbulk-len",
    "proto-invalid-bulk-len-neg",
    "proto-after-good",
    "proto-unbalanced-close-after",
    "proto-mbulk-zero",
    "arity-get-too-few",
]
STREAMS = [(n, _BY_NAME[n]) for n in CHOSEN] + [
    # A bulk whose payload holds CR LF and '*' / '$' bytes that look like headers.
    ("bulk-looks-like-headers", c(["SET", "k", b"*1\r\n$4\r\nPING\r\n"], "GET k")),
    ("long-bulk", c(["SET", "k", b"x" * 3000], "STRLEN k")),
    ("many-small", c(*[f"INCR n{i % 3}" for i in range(20)])),
    ("crlf-inline-then-mbulk", raw(b"SET a 1\r\n" + command("GET", "a") + b"\r\nGET a\n")),
]

_whole: dict[str, tuple[bytes, bool]] = {}


def whole(reference, name: str, stream: bytes) -> tuple[bytes, bool]:
    if name not in _whole:
        resp.flushall(reference.port)
        _whole[name] = resp.exchange(reference.port, [stream])
    return _whole[name]


@pytest.mark.parametrize("name,stream", STREAMS, ids=[n for n, _ in STREAMS])
def test_split_at_every_offset(server, reference, name, stream):
    want = whole(reference, name, stream)
    for cut in range(1, len(stream)):
        resp.flushall(server.port)
        got = resp.exchange(server.port, [stream[:cut], stream[cut:]], pause_s=PAUSE_S)
        assert got == want, f"split at byte {cut} of {stream[:200]!r}"


@pytest.mark.parametrize("name,stream", STREAMS, ids=[n for n, _ in STREAMS])
def test_one_byte_per_write(server, reference, name, stream):
    want = whole(reference, name, stream)
    resp.flushall(server.port)
    parts = [stream[i : i + 1] for i in range(len(stream))]
    got = resp.exchange(server.port, parts, pause_s=0.0002)
    assert got == want, f"one byte per write of {stream[:200]!r}"
