"""SET and GET alone, compared with redis-server byte for byte: what every server here must get
right, and all that a seed's own server implementing only those commands (mini-redis) is held
to. Keys carry a prefix of their own instead of a FLUSHALL, which such a server lacks."""

from __future__ import annotations

import itertools

import pytest
import resp
from resp import command

pytestmark = [pytest.mark.semantics, pytest.mark.setget]

_prefix = itertools.count()

STREAMS = {
    "set-get": lambda p: command("SET", f"{p}a", "1") + command("GET", f"{p}a"),
    "get-missing": lambda p: command("GET", f"{p}missing"),
    "overwrite": lambda p: (
        command("SET", f"{p}a", "1") + command("SET", f"{p}a", "two") + command("GET", f"{p}a")
    ),
    "empty-value": lambda p: command("SET", f"{p}e", "") + command("GET", f"{p}e"),
    "binary": lambda p: (
        command("SET", f"{p}k\x00\r\n", b"v\x00\r\n\xfe") + command("GET", f"{p}k\x00\r\n")
    ),
    "lowercase": lambda p: command("set", f"{p}a", "x") + command("get", f"{p}a"),
    "value-64k": lambda p: command("SET", f"{p}big", b"v" * 65536) + command("GET", f"{p}big"),
}


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_set_get_same_bytes_as_redis(server, reference, name):
    prefix = f"setget{next(_prefix)}:"
    stream = STREAMS[name](prefix)
    want, want_closed = resp.exchange(reference.port, [stream], setget_marker=True)
    got, got_closed = resp.exchange(server.port, [stream], setget_marker=True)
    assert got == want, f"request {stream[:200]!r}\n got {got[:300]!r}\nwant {want[:300]!r}"
    assert not got_closed and not want_closed
    assert server.alive()
