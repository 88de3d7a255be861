"""Assertions shared by the test modules: what an error reply, an echo and a pong look like."""

from __future__ import annotations

from jsoneq import difference, loads

PING = b'{"op":"ping"}'
PONG = {"op": "pong"}


def echo_body(data_text: bytes) -> bytes:
    """An echo request; compact and starting with {"op":"echo" so that the baseline's byte
    copy (SPEC §4) is itself a valid reply."""
    return b'{"op":"echo","data":' + data_text + b"}"


def assert_error_reply(reply: dict, what: str) -> None:
    """SPEC §2: an error reply is an object with a non-empty, human-readable string `error`."""
    err = reply.get("error")
    assert isinstance(err, str) and err.strip(), (
        f"{what}: expected an error reply (a non-empty string member 'error'), got {reply!r:.300}"
    )


def assert_pong(reply: dict, what: str = "ping") -> None:
    assert difference(PONG, reply) is None, f"{what}: expected {{'op':'pong'}}, got {reply!r:.300}"


def assert_echo(reply: dict, data_text: bytes) -> None:
    """The reply has exactly op and data, and data is equal as JSON to the request's."""
    assert set(reply) == {"op", "data"}, (
        f"echo reply must have exactly the members op and data, got {sorted(reply)}: {reply!r:.300}"
    )
    assert reply["op"] == "echo", f"echo reply has op {reply['op']!r}"
    d = difference(loads(data_text), reply["data"])
    assert d is None, f"echo data differs from the request's ({data_text[:120]!r}): {d}"
