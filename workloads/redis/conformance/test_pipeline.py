"""Pipelining: 10,000 requests in one write, replies in order and byte-identical to redis's."""

from __future__ import annotations

import random

import pytest
import resp
from resp import command

# Needs a real key-value server (the floor answers +OK to everything).
pytestmark = pytest.mark.semantics


def mixed_requests(n: int, seed: int = 7) -> bytes:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        k = f"key:{rng.randrange(100):03d}"
        op = rng.randrange(9)
        if op == 0:
            out.append(command("SET", k, f"v{i}"))
        elif op == 1:
            out.append(command("GET", k))
        elif op == 2:
            out.append(command("INCR", f"counter:{rng.randrange(10)}"))
        elif op == 3:
            out.append(command("LPUSH", "list", f"e{i}"))
        elif op == 4:
            out.append(command("LRANGE", "list", 0, rng.randrange(20)))
        elif op == 5:
            out.append(command("HSET", "hash", f"f{rng.randrange(50)}", i))
        elif op == 6:
            out.append(
                command("ZADD", "zset", str(rng.randrange(1000) / 7), f"m{rng.randrange(60)}")
            )
        elif op == 7:
            out.append(command("ZRANGE", "zset", 0, 3, "WITHSCORES"))
        else:
            out.append(b"PING\r\n")
    return b"".join(out)


def test_10000_pipelined_in_one_write(server, reference):
    stream = mixed_requests(10_000)
    resp.flushall(reference.port)
    want = resp.exchange(reference.port, [stream])
    resp.flushall(server.port)
    got = resp.exchange(server.port, [stream])
    assert not got[1], "server closed the connection"
    assert got[0] == want[0], "replies differ from redis-server's"
    assert len(resp.parse(got[0])) == 10_000


@pytest.mark.setget
def test_10000_pipelined_gets_binary_values(server):
    value = bytes(range(256)) * 4
    resp.call(server.port, "SET", "bin", value, setget_marker=True)
    got, closed = resp.exchange(server.port, [command("GET", "bin") * 10_000], setget_marker=True)
    assert not closed
    assert got == (b"$1024\r\n" + value + b"\r\n") * 10_000
