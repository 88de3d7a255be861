"""SPEC §2: ping, echo and fill, and their replies compared as JSON (fill: as bytes).

Requests are written as JSON text by hand (not by a serialiser) so that the exact spellings a
browser may send — escapes, exponents, raw UTF-8 — reach the host.
"""

from __future__ import annotations

import pytest
from checks import PING, assert_echo, assert_error_reply, assert_pong, echo_body
from hostproc import MAX_REPLY
from jsoneq import loads

FILL_MIN = len(b'{"op":"fill","data":""}')  # 23: the smallest body a fill reply can have


# ------------------------------------------------------------------------------ ping


@pytest.mark.parametrize(
    "body",
    [
        b'{"op":"ping"}',
        b'{"op":"ping","seq":1,"data":[1,2,{"x":null}],"pad":"\xc3\xa9\xe2\x82\xac"}',
        b'{"seq":7,"op":"ping"}',
        b'{ "op" : "ping" }',
    ],
    ids=["plain", "extra-members", "op-not-first", "whitespace"],
)
def test_ping_pong(host, body):
    """ping → exactly {"op":"pong"}; extra members are ignored.
    Catches: a host that rejects or echoes unknown members, answers ping with anything but
    {"op":"pong"}, or only recognises `op` as the first member."""
    assert_pong(host.request(body))


@pytest.mark.json
def test_ping_with_surrounding_whitespace(host):
    """Leading/trailing JSON whitespace is valid JSON (RFC 8259 `ws value ws`).
    Catches: a host whose "trailing garbage" check also rejects trailing whitespace/newlines."""
    assert_pong(host.request(b' \t\r\n{"op":"ping"}\n '))


# ------------------------------------------------------------------------------ echo


def test_echo_simple(host):
    """Echo of a small object with non-ASCII text: works on every host, the baseline included.
    Catches: no echo support at all, a reply with a wrong op, data lost."""
    data = '{"a":[1,2.5,"é€😀中"],"b":{"c":null,"d":true}}'.encode()
    assert_echo(host.request(echo_body(data)), data)


DEEP_100_ARRAYS = b"[" * 100 + b"]" * 100
DEEP_100_OBJECTS = b'{"a":' * 100 + b"0" + b"}" * 100

# (id, JSON text of the echoed value). Compared equal as JSON, never as bytes.
ECHO_VALUES = [
    ("null", b"null"),
    ("true", b"true"),
    ("false", b"false"),
    ("zero", b"0"),
    ("minus-zero", b"-0"),
    ("int", b"42"),
    ("negative-int", b"-17"),
    ("decimal-0.1", b"0.1"),
    ("small-exponent", b"-0.5e-7"),
    ("big-exponent", b"1e300"),
    ("exponent-forms", b"[1E2,1e+2,2.5E-3,1.0,100.000]"),
    ("shortest-doubles", b"[0.2,0.30000000000000004,1.0000000000000002,123456789.12345679]"),
    ("subnormal-double", b"5e-324"),
    ("max-double", b"1.7976931348623157e308"),
    ("min-normal-double", b"2.2250738585072014e-308"),
    ("2^53", b"9007199254740992"),
    ("-2^53", b"-9007199254740992"),
    ("2^53-1", b"9007199254740991"),
    ("ints", b"[1,-1,255,256,65535,65536,2147483647,2147483648,4294967295,4294967296]"),
    ("empty-string", b'""'),
    ("escapes", b'"quote \\" backslash \\\\ slash \\/ \\b \\f \\n \\r \\t"'),
    ("nul-inside", b'"a\\u0000b"'),
    ("control-chars", b'"\\u0001\\u001f\\u007f"'),
    ("non-ascii-raw", '"é € 😀 and 中"'.encode()),
    ("lone-cjk", '"中"'.encode()),
    ("non-ascii-escaped", b'"\\u00e9 \\u20ac \\ud83d\\ude00 \\u4e2d"'),
    ("html-chars", b'"<script>&amp;</script> \\u2028 \\u2029"'),
    ("empty-array", b"[]"),
    ("empty-object", b"{}"),
    ("nested-empty", b'[[],{},[{}],{"a":[]}]'),
    ("mixed", b'{"k":[1,"two",{"three":3.5,"four":[true,false,null]}],"":0,"\\u00e9":"\xc3\xa9"}'),
    ("member-order", b'{"z":1,"a":2,"m":{"y":1,"b":2}}'),
    ("many-members", b"{" + b",".join(b'"k%d":%d' % (i, i) for i in range(200)) + b"}"),
    ("deep-arrays-100", DEEP_100_ARRAYS),
    ("deep-objects-100", DEEP_100_OBJECTS),
    ("long-string-100k", b'"' + b'abc\\n\\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 ' * 6000 + b'"'),
]


@pytest.mark.json
@pytest.mark.parametrize("data", [v for _, v in ECHO_VALUES], ids=[i for i, _ in ECHO_VALUES])
def test_echo_value(host, data):
    """Echo of one JSON value: the reply's data must be equal as JSON to the request's.
    Catches: lossy number handling (0.1, exponents, ints above 2^31/2^32 squeezed into int32/u32,
    1e300 overflow), mangled escapes, strings cut at \\u0000 (C strings), non-ASCII broken into
    mojibake or wrong surrogate handling, empty containers turned into null, objects turned
    into arrays, a recursion limit below 100, extra members in the reply."""
    assert_echo(host.request(echo_body(data)), data)


@pytest.mark.json
def test_echo_values_in_one_session(host):
    """All echo values one after another on one connection: state must not leak between
    requests. Catches: a reused parse buffer that is not reset, replies that repeat or mix
    parts of an earlier request."""
    for _, data in ECHO_VALUES:
        assert_echo(host.request(echo_body(data)), data)


@pytest.mark.json
@pytest.mark.parametrize("text", [b'"\\ud800"', b'"a\\udc00b"', b'"\\ude00\\ud83d"'])
def test_echo_lone_surrogate_escape(host, text):
    """A lone surrogate escape is valid JSON syntax but no Unicode character (RFC 8259 §8.2
    leaves the result to the parser). Allowed: an error reply, or an echo of the same escape or
    of U+FFFD in its place. Not allowed: a crash, or a reply that is not UTF-8 (a naive
    encoder writes the surrogate as the bytes ED A0 80, which no browser accepts).
    Catches: Python's UnicodeEncodeError escaping as a traceback, CESU-8 output."""
    reply = host.request(echo_body(text))
    if "error" in reply:
        assert_error_reply(reply, f"echo of {text!r}")
    else:
        assert set(reply) == {"op", "data"} and reply["op"] == "echo", f"bad reply {reply!r}"
        allowed = {
            loads(text),
            loads(text).encode("utf-16", "surrogatepass").decode("utf-16", "replace"),
        }
        assert reply["data"] in allowed, f"echo of {text!r} gave {reply['data']!r}"
    assert_pong(host.request(PING), "ping after a lone surrogate")


@pytest.mark.json
def test_echo_request_with_whitespace_and_data_first(host):
    """The request is ordinary JSON: members in any order, any whitespace.
    Catches: a host that copies bytes instead of parsing, or expects `op` first."""
    reply = host.request(b'{ "data" : [ 1 , { "k" : "v" } ] ,\n "op" : "echo" }')
    assert_echo(reply, b'[1,{"k":"v"}]')


# ------------------------------------------------------------------------------ fill


def fill(host, n: int):
    host.send_frame(b'{"op":"fill","bytes":%d}' % n)
    return host.read_frame()


@pytest.mark.json
def test_fill_sizes(host):
    """fill N → a reply whose WHOLE body is exactly N bytes, data only 'x', for N = the minimum
    (23) and one more, 1000, 65536, 1,048,575 and exactly 1,048,576 (the cap is inclusive).
    Catches: N taken as the data length instead of the body length, pretty-printed replies,
    an off-by-one at the 1 MiB cap (`>=` instead of `>`), replies not flushed when large."""
    for n in (FILL_MIN, FILL_MIN + 1, 1000, 65536, MAX_REPLY - 1, MAX_REPLY):
        body = fill(host, n)
        assert len(body) == n, f"fill {n}: reply body is {len(body)} bytes, must be exactly {n}"
        reply = loads(body)
        assert isinstance(reply, dict) and set(reply) == {"op", "data"}, (
            f"fill {n}: reply must be an object with exactly op and data: {body[:100]!r}"
        )
        assert reply["op"] == "fill", f"fill {n}: reply op is {reply['op']!r}"
        data = reply["data"]
        assert isinstance(data, str) and data == "x" * len(data), (
            f"fill {n}: data must be a string of 'x' only: {body[:100]!r}"
        )


@pytest.mark.json
@pytest.mark.parametrize(
    "bytes_text",
    [
        b"1048577",  # one over the reply cap
        b"22",  # one below the smallest possible fill reply
        b"0",
        b"-1",
        b"100.5",  # not an integer, though its integer part is a valid size
        b'"1000"',  # a string, though it spells a valid size
        b"true",
        b"null",
        b"[100]",
        b"4294967319",  # 2^32 + 23: truncated to u32 it is a valid 23
        b"18446744073709551639",  # 2^64 + 23: wraps to 23 in 64 bits
        b"1e400",
        None,  # member missing
    ],
    ids=[
        "over-cap",
        "below-min",
        "zero",
        "negative",
        "float",
        "string",
        "bool",
        "null",
        "array",
        "2^32+23",
        "2^64+23",
        "huge-float",
        "missing",
    ],
)
def test_fill_invalid(host, bytes_text):
    """fill with an N that no reply can meet (or not an integer) → an error reply, and the
    host keeps serving. Catches: a 1,048,577-byte reply (Chromium drops the port), a negative
    N wrapping to a huge size_t, integer truncation/overflow turning 2^32+23 into 23, "1000"
    or 100.5 coerced to a number, a crash on a missing member."""
    body = b'{"op":"fill"}' if bytes_text is None else b'{"op":"fill","bytes":' + bytes_text + b"}"
    assert_error_reply(host.request(body), f"fill with bytes={bytes_text!r}")
    assert_pong(host.request(PING), "ping after an invalid fill")
