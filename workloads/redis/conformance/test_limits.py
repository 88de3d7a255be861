"""Limits as redis 7.0: oversized inline lines and headers are refused (and that connection
closed), announced sizes are never allocated up front, a client that never reads cannot grow
the server without bound — and none of it disturbs another client."""

from __future__ import annotations

import threading
import time

import pytest
import resp
from resp import command

# Needs a real key-value server (the floor answers +OK to everything).
pytestmark = pytest.mark.semantics

MIB = 1024 * 1024
#: Slack over the server's resident size for the tests that check nothing big was allocated.
ALLOC_SLACK_KB = 48 * 1024


def same_as_reference(server, reference, stream: bytes, closes: bool = False):
    """The replies to `stream` equal redis-server's; `closes`: the stream must end the
    connection, so read until it is closed instead of sending a marker request after it."""
    exchange = resp.until_closed if closes else (lambda port, s: resp.exchange(port, [s]))
    resp.flushall(reference.port)
    want = exchange(reference.port, stream)
    assert want[1] == closes, "redis-server did not behave as this test expects"
    resp.flushall(server.port)
    got = exchange(server.port, stream)
    assert got == want
    return got


def test_inline_over_64k_refused_and_closed(server, reference):
    got, closed = same_as_reference(server, reference, b"PING\r\n" + b"a" * 70_000, closes=True)
    assert closed and got.endswith(b"-ERR Protocol error: too big inline request\r\n")


def test_inline_just_under_64k_served(server, reference):
    same_as_reference(server, reference, b"ECHO " + b"x" * 60_000 + b"\r\n")


def test_mbulk_header_over_64k_refused(server, reference):
    got, closed = same_as_reference(server, reference, b"*" + b"1" * 70_000, closes=True)
    assert closed


def test_bulk_header_over_64k_refused(server, reference):
    got, closed = same_as_reference(server, reference, b"*1\r\n$" + b"1" * 70_000, closes=True)
    assert closed


def test_big_inline_argument_list(server, reference):
    same_as_reference(server, reference, b"RPUSH l " + b"a " * 20_000 + b"\r\nLLEN l\r\n")


def test_big_multibulk_argument_list(server, reference):
    stream = command("RPUSH", "l", *[str(i) for i in range(100_000)]) + command("LLEN", "l")
    same_as_reference(server, reference, stream)


def test_bulk_of_8_mib_round_trips(server):
    value = bytes(range(256)) * (8 * MIB // 256)
    got, closed = resp.exchange(server.port, [command("SET", "big", value), command("GET", "big")])
    assert not closed
    assert got == b"+OK\r\n$%d\r\n%s\r\n" % (len(value), value)


def _rss_after_announcing(server, header: bytes, body: bytes = b"") -> int:
    before = server.rss_kb()
    with resp.connect(server.port) as s:
        s.sendall(header + body)
        time.sleep(0.3)
        assert resp.call(server.port, "PING") == b"+PONG\r\n", "another client is not served"
        grown = server.rss_kb() - before
    return grown


def test_512mb_bulk_announced_is_not_allocated(fresh_server):
    grown = _rss_after_announcing(
        fresh_server, b"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$536870912\r\n", b"x" * MIB
    )
    assert grown < ALLOC_SLACK_KB, f"resident size grew by {grown} KiB for 1 MiB received"


def test_huge_multibulk_count_is_not_allocated(fresh_server):
    grown = _rss_after_announcing(fresh_server, b"*2147483647\r\n", b"$1\r\na\r\n" * 1000)
    assert grown < ALLOC_SLACK_KB, f"resident size grew by {grown} KiB for 1,000 arguments"


def test_over_512mb_bulk_refused_other_client_unaffected(server, reference):
    same_as_reference(server, reference, b"*2\r\n$3\r\nGET\r\n$536870913\r\n", closes=True)
    with resp.connect(server.port) as other:
        other.sendall(command("SET", "a", "1"))
        data, closed = resp.until_closed(server.port, b"*2\r\n$3\r\nGET\r\n$536870913\r\n")
        assert closed and data == b"-ERR Protocol error: invalid bulk length\r\n"
        other.sendall(command("GET", "a"))
        data, _ = resp.read_until(other, b"$1\r\n1\r\n")
        assert data == b"+OK\r\n$1\r\n1\r\n"


@pytest.mark.timeout(180)
def test_client_that_never_reads_is_bounded(fresh_server):
    """300 replies of 1 MB to a client that never reads: the server must not buffer them all
    (redis: disconnect past the 64 MiB output-buffer cap; stopping reading from that client is
    also bounded), and another client keeps being served meanwhile."""
    port = fresh_server.port
    item = b"v" * 1000
    resp.exchange(port, [command("RPUSH", "big", *([item] * 1000))])
    base_kb = fresh_server.rss_kb("VmHWM")
    hog = resp.connect(port)
    hog.setsockopt(resp.socket.SOL_SOCKET, resp.socket.SO_RCVBUF, 64 * 1024)
    hog.sendall(command("LRANGE", "big", 0, -1) * 300)
    slow = []
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        t0 = time.monotonic()
        assert resp.call(port, "PING") == b"+PONG\r\n"
        slow.append(time.monotonic() - t0)
        time.sleep(0.05)
    assert max(slow) < 1.0, f"another client waited {max(slow):.2f} s for PING"
    peak_kb = fresh_server.rss_kb("VmHWM")
    assert peak_kb - base_kb < (64 + 128) * 1024, (
        f"peak resident size grew {(peak_kb - base_kb) // 1024} MiB for a client that never reads"
    )
    # Drain what the server still sends; a server that kept everything would send ~300 MB.
    hog.settimeout(10)
    received = 0
    try:
        while chunk := hog.recv(1 << 20):
            received += len(chunk)
            if received > 300 * 1_000_000:
                break
    except (TimeoutError, ConnectionResetError):
        pass
    hog.close()
    assert fresh_server.alive()
    assert resp.call(port, "LLEN", "big") == b":1000\r\n"


def test_pipelining_client_does_not_starve_others(server):
    """One client pipelines batches of 5,000 requests back to back for 2 s; another's PINGs
    still return."""
    port = server.port
    resp.exchange(port, [command("RPUSH", "l", *range(10))])
    one_reply = resp.call(port, "LRANGE", "l", 0, 9)
    batch = command("LRANGE", "l", 0, 9) * 5000
    stop = threading.Event()
    failures: list[str] = []

    def hog() -> None:
        try:
            with resp.connect(port) as s:
                while not stop.is_set():
                    s.sendall(batch)
                    got = 0
                    while got < len(one_reply) * 5000:
                        chunk = s.recv(1 << 20)
                        if not chunk:
                            raise ConnectionError("server closed the pipelining client")
                        got += len(chunk)
        except OSError as e:
            failures.append(repr(e))

    t = threading.Thread(target=hog, daemon=True)
    t.start()
    time.sleep(0.2)
    waits = []
    try:
        for _ in range(20):
            t0 = time.monotonic()
            assert resp.call(port, "PING") == b"+PONG\r\n"
            waits.append(time.monotonic() - t0)
            time.sleep(0.05)
    finally:
        stop.set()
        t.join(10)
    assert not failures, failures
    assert max(waits) < 1.0, f"PING waited up to {max(waits):.2f} s behind a pipelining client"
