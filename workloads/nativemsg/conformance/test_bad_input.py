"""SPEC §3, bad bodies inside good frames: each gets an error reply and the host keeps serving."""

from __future__ import annotations

import pytest
from checks import PING, assert_error_reply, assert_pong
from hostproc import frame
from jsoneq import parse_reply

# (id, body). Every one is a well-formed frame whose body breaks a rule of SPEC §2/§3.
BAD_BODIES = [
    # not UTF-8 (the JSON text must be UTF-8, RFC 8259 §8.1)
    ("utf8-ff-fe", b"\xff\xfe"),
    ("utf8-invalid-byte-in-string", b'{"op":"echo","data":"a\xffb"}'),
    ("utf8-bare-continuation", b'{"op":"echo","data":"\x80"}'),
    ("utf8-overlong-2", b'{"op":"echo","data":"\xc0\xaf"}'),
    ("utf8-overlong-3", b'{"op":"echo","data":"\xe0\x80\xaf"}'),
    ("utf8-overlong-nul", b'{"op":"echo","data":"\xc0\x80"}'),
    ("utf8-surrogate", b'{"op":"echo","data":"\xed\xa0\x80"}'),
    ("utf8-above-10ffff", b'{"op":"echo","data":"\xf4\x90\x80\x80"}'),
    ("utf8-truncated", b'{"op":"echo","data":"\xe2\x82"}'),
    ("utf8-latin1", b'{"op":"echo","data":"caf\xe9"}'),
    # not JSON
    ("empty-body", b""),
    ("text", b"hello"),
    ("truncated-object", b'{"op":"ping"'),
    ("single-quotes", b"{'op':'ping'}"),
    ("trailing-comma", b'{"op":"ping",}'),
    ("unquoted-key", b'{op:"ping"}'),
    ("raw-control-char", b'{"op":"echo","data":"a\nb"}'),
    ("bad-escape", b'{"op":"echo","data":"\\x41"}'),
    ("nan", b'{"op":"echo","data":NaN}'),
    ("infinity", b'{"op":"echo","data":Infinity}'),
    ("minus-infinity", b'{"op":"echo","data":-Infinity}'),
    ("leading-zero", b'{"op":"echo","data":007}'),
    ("trailing-garbage", b'{"op":"ping"}x'),
    ("two-objects", b'{"op":"ping"}{"op":"ping"}'),
    ("trailing-bracket", b'{"op":"ping"} ]'),
    ("nul-after-object", b'{"op":"ping"}\x00'),
    # valid JSON, not an object
    ("array", b'[{"op":"ping"}]'),
    ("string", b'"ping"'),
    ("number", b"42"),
    ("null", b"null"),
    ("true", b"true"),
    # an object, but not a valid request
    ("no-op", b"{}"),
    ("no-op-with-data", b'{"data":1}'),
    ("op-number", b'{"op":1}'),
    ("op-null", b'{"op":null}'),
    ("op-array", b'{"op":["ping"]}'),
    ("op-object", b'{"op":{"ping":1}}'),
    ("op-bool", b'{"op":true}'),
    ("unknown-op", b'{"op":"frob"}'),
    ("op-empty", b'{"op":""}'),
    ("op-wrong-case", b'{"op":"PING"}'),
    ("op-trailing-space", b'{"op":"ping "}'),
    ("op-with-nul", b'{"op":"ping\\u0000"}'),
    ("echo-without-data", b'{"op":"echo"}'),
    ("echo-data-misspelt", b'{"op":"echo","date":1}'),
]


@pytest.mark.json
@pytest.mark.parametrize("body", [b for _, b in BAD_BODIES], ids=[i for i, _ in BAD_BODIES])
def test_bad_body_gets_error_reply_and_host_keeps_serving(host, body):
    """A bad body → an error reply (object with a non-empty string `error`), then a ping
    right after still gets pong.
    Catches: Go's encoding/json silently turning invalid UTF-8 into U+FFFD (and Python's
    errors="replace"), decoders that accept overlong/surrogate UTF-8, Python's json accepting
    NaN/Infinity, stream decoders that ignore trailing data, C string compares that stop at
    \\u0000 ("ping\\0" == "ping"), an exit/crash/silence on a bad request, a reply that is not
    an error (e.g. pong for an unknown op)."""
    reply = host.request(body)
    assert_error_reply(reply, f"body {body[:60]!r}")
    assert_pong(host.request(PING), f"no pong after the bad body {body[:60]!r}")


@pytest.mark.json
def test_all_bad_bodies_in_one_session(host):
    """Every bad body on one connection, each followed by a ping, all sent in ONE write.
    Catches: error paths that leave state behind (a half-consumed buffer, a parser in an
    error state), so that a later good request is misread."""
    host.send(b"".join(frame(b) + frame(PING) for _, b in BAD_BODIES))
    for name, body in BAD_BODIES:
        assert_error_reply(host.read_reply(), f"{name} ({body[:60]!r})")
        assert_pong(host.read_reply(), f"ping after {name}")


def test_garbage_bodies_keep_the_host_serving(host):
    """Bodies that are not requests (binary, empty, not JSON) each get some reply frame
    holding a JSON object, and the host keeps serving. Applies to every host, the baseline
    included (which answers pong).
    Catches: a host that dies or stalls on an empty body or binary bytes."""
    for body in (b"\xff\xfe", b"", b"\x00" * 16, b"hello", b"[1,2]"):
        host.request(body)  # read_reply fails if the reply is not a JSON object
        assert_pong(host.request(PING), f"no pong after body {body!r}")


@pytest.mark.parametrize(
    "body",
    [
        b'{"op":"echo","data":' + b"[" * 1_000_000 + b"]" * 1_000_000 + b"}",
        b'{"op":"echo","data":' + b'{"a":' * 1_000_000 + b"0" + b"}" * 1_000_000 + b"}",
        pytest.param(b'{"op":"echo","data":' + b"[" * 1_000_000, marks=pytest.mark.json),
    ],
    ids=["arrays-1e6", "objects-1e6", "unterminated-1e6"],
)
def test_deep_nesting_never_crashes(host, body):
    """A million nesting levels: the host must answer with an error reply (a correct echo
    would be over 1 MiB, so an error is the only right answer) and keep serving.
    Catches: recursive parsers/serialisers that overflow the stack (SIGSEGV, Rust "has
    overflowed its stack", Go's fatal stack overflow, Python's RecursionError traceback)."""
    assert_error_reply(host.request(body, timeout=20), "a million nesting levels")
    assert_pong(host.request(PING), "no pong after deeply nested JSON")
    host.assert_no_crash()


@pytest.mark.json
def test_deep_nesting_within_reply_cap(host):
    """100,000 nesting levels (a 200 KB reply): an error reply or a correct echo, never a
    crash, and the host keeps serving. Catches stack overflows below the 1 MiB reply cap,
    where an echo is a legal answer."""
    depth = 100_000
    data = b"[" * depth + b"]" * depth
    host.send_frame(b'{"op":"echo","data":' + data + b"}")
    body = host.read_frame(timeout=20)
    compact = body.translate(None, b" \t\r\n")
    if compact.startswith((b'{"op":"echo"', b'{"data":')):
        # Compare without a recursive parser: the only valid echo texts, whitespace removed.
        assert compact in (
            b'{"op":"echo","data":' + data + b"}",
            b'{"data":' + data + b',"op":"echo"}',
        ), f"neither an error reply nor a correct echo: {body[:80]!r}…"
    else:
        assert_error_reply(parse_reply(body, host.describe), "100,000 nesting levels")
    assert_pong(host.request(PING), "no pong after deeply nested JSON")
    host.assert_no_crash()
