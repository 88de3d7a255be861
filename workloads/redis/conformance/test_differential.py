"""Every case of cases.py: the implementation's reply bytes equal redis-server's, and it closes
the connection exactly when redis-server does (protocol errors, QUIT)."""

from __future__ import annotations

import time

import pytest
import resp
from cases import CASES, NEEDS

# Needs a real key-value server (the floor answers +OK to everything).
pytestmark = pytest.mark.semantics

PARTIAL_WAIT_S = 0.3
_reference_replies: dict[str, tuple[bytes, bool]] = {}


def replies(port: int, name: str, stream: bytes) -> tuple[bytes, bool]:
    if name.startswith("partial-"):
        return partial_replies(port, stream)
    return resp.exchange(port, [stream])


def partial_replies(port: int, stream: bytes) -> tuple[bytes, bool]:
    """What arrives within a short wait after a stream that ends inside a request."""
    with resp.connect(port) as s:
        s.sendall(stream)
        time.sleep(PARTIAL_WAIT_S)
        s.setblocking(False)
        try:
            data = s.recv(1 << 20)
        except BlockingIOError:
            data = b""
    return data, False


def _sorted_arrays(value):
    if isinstance(value, list):
        return sorted((_sorted_arrays(v) for v in value), key=repr)
    return value


def same(name: str, got: bytes, want: bytes) -> bool:
    """Byte equality; for KEYS, whose order follows redis's per-start random hash seed,
    equality of the replies with every array taken as a set."""
    if got == want:
        return True
    if name.startswith("keys-"):
        return _sorted_arrays(resp.parse(got)) == _sorted_arrays(resp.parse(want))
    return False


_has_command: dict[tuple[int, str], bool] = {}


def has_command(port: int, name: str) -> bool:
    """Whether the server knows a command (its bare name gets anything but "unknown command":
    an arity error, or a reply), asked on a connection of its own."""
    if (port, name) not in _has_command:
        with resp.connect(port) as s:
            s.sendall(resp.command(name))
            first, _ = resp.read_until(s, b"\r\n")
        _has_command[(port, name)] = not first.startswith(b"-ERR unknown command")
    return _has_command[(port, name)]


def expected(reference, name: str, stream: bytes) -> tuple[bytes, bool]:
    if name not in _reference_replies:
        resp.flushall(reference.port)
        _reference_replies[name] = replies(reference.port, name, stream)
    return _reference_replies[name]


@pytest.mark.parametrize("name,stream", CASES, ids=[n for n, _ in CASES])
def test_same_bytes_as_redis(server, reference, name, stream):
    missing = [n for n in NEEDS.get(name, ()) if not has_command(server.port, n)]
    if missing:
        pytest.skip(f"n/a: no {', '.join(missing).upper()}, which the SPEC does not require")
    want, want_closed = expected(reference, name, stream)
    resp.flushall(server.port)  # the reference may be the server under test (redis-server itself)
    got, got_closed = replies(server.port, name, stream)
    assert same(name, got, want), f"request {stream[:300]!r}\n got {got!r}\nwant {want!r}"
    assert got_closed == want_closed, (
        "redis-server closes the connection here" if want_closed else "redis-server keeps it open"
    )
    assert server.alive()
