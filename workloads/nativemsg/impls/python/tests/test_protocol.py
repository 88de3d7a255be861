"""protocol: ping, echo (re-serialised), fill (exact byte size), error replies, the 1 MiB cap.

SPEC-level, so every test runs against both hosts' handle(): this one's (stdlib json) and
python-orjson's (../python-orjson/protocol.py, which needs orjson from the venv). Both modules
are named `protocol`, so both are loaded by path under distinct names; python-orjson's own
tests cover only where it differs (its fast path, the hand-over to json, the allocator).
"""

import importlib.util
import json
import math
import random
from pathlib import Path

import pytest
from framing import MAX_REPLY

IMPLS = Path(__file__).resolve().parent.parent.parent


def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PROTOCOLS = {
    "python": _load("python_protocol", IMPLS / "python" / "protocol.py"),
    "python-orjson": _load("orjson_protocol", IMPLS / "python-orjson" / "protocol.py"),
}
FILL_OVERHEAD = PROTOCOLS["python"].FILL_OVERHEAD
_handle = None  # the handle() of the host under test (set by the fixture below)


@pytest.fixture(autouse=True, params=sorted(PROTOCOLS))
def _host(request):
    global _handle
    _handle = PROTOCOLS[request.param].handle
    yield
    _handle = None


def handle(body):
    return _handle(body)


def ask(request) -> dict:
    """handle() a request (an object, a str or raw bytes) and parse the reply strictly."""
    if isinstance(request, bytes):
        body = request
    elif isinstance(request, str):
        body = request.encode()
    else:
        body = json.dumps(request).encode()
    reply = handle(memoryview(bytearray(body)))  # the type framing hands over
    assert isinstance(reply, bytes)
    assert len(reply) <= MAX_REPLY
    return json.loads(reply.decode("utf-8"), parse_constant=_no_constants)


def _no_constants(name):
    raise AssertionError(f"reply contains {name}, which is not JSON")


def assert_error(reply: dict):
    assert isinstance(reply.get("error"), str) and reply["error"], reply


# --- ping ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "request_",
    ['{"op":"ping"}', ' \t\r\n{ "op" : "ping" }\n ', '{"op":"ping","extra":[1,{"a":null}]}'],
)
def test_ping(request_):
    assert ask(request_) == {"op": "pong"}


def test_pong_is_compact_json():
    assert handle(b'{"op":"ping"}') == b'{"op":"pong"}'


# --- echo ----------------------------------------------------------------------------------

ECHO_VALUES = [
    None,
    True,
    False,
    0,
    -1,
    2**53,
    2**64 - 1,  # the largest integer orjson keeps exact
    -(2**63),
    -0.0,
    1.5,
    1e300,
    5e-324,
    "",
    "plain",
    'quote " backslash \\ slash / newline \n tab \t',
    "\u0000 nul and \u001f unit separator",
    "é € 😀 \u2028 \ufeff",
    [],
    {},
    [1, "two", [3, [4, [5]]], {"six": 6}],
    {"seq": 7, "text": "x" * 1000, "nested": {"a": [None, True, {"b": -2.5}]}},
    {"": "empty key", "é": "non-ASCII key"},
]


@pytest.mark.parametrize("value", ECHO_VALUES, ids=range(len(ECHO_VALUES)))
def test_echo_round_trips(value):
    reply = ask({"op": "echo", "data": value})
    assert set(reply) == {"op", "data"}
    assert reply["op"] == "echo"
    assert reply["data"] == value
    assert type(reply["data"]) is type(value)
    if isinstance(value, float):
        assert math.copysign(1.0, reply["data"]) == math.copysign(1.0, value)  # -0.0 stays


def test_python_echoes_an_integer_beyond_64_bits_exactly():
    # python-orjson reads it as the nearest double (SPEC §2 allows it): its own tests.
    reply = PROTOCOLS["python"].handle(b'{"op":"echo","data":123456789012345678901234567890}')
    assert reply == b'{"op":"echo","data":123456789012345678901234567890}'


def test_fill_overhead_is_the_same_in_both_hosts():
    assert {p.FILL_OVERHEAD for p in PROTOCOLS.values()} == {FILL_OVERHEAD}


def test_echo_is_reserialised_not_copied():
    reply = handle(b'{ "op" : "echo" , "data" : [ 1 , 2 , {"a" : "\\u00e9"} ] }')
    assert reply == '{"op":"echo","data":[1,2,{"a":"é"}]}'.encode()


def test_echo_writes_utf8_and_keeps_nul_escaped():
    reply = handle('{"op":"echo","data":"\\u0000é😀"}'.encode())
    assert reply == '{"op":"echo","data":"\\u0000é😀"}'.encode()


def test_echo_carries_lone_surrogates_as_escapes():
    # "\ud800" is valid JSON text but has no UTF-8 encoding: the reply must stay valid UTF-8.
    reply = handle(b'{"op":"echo","data":["\\ud800","\\udfff x"]}')
    reply.decode("utf-8")  # strict: raises if a surrogate slipped through
    assert json.loads(reply)["data"] == ["\ud800", "\udfff x"]


def test_echo_without_data_is_an_error():
    assert_error(ask({"op": "echo"}))


def test_echo_of_null_is_not_missing_data():
    assert ask({"op": "echo", "data": None}) == {"op": "echo", "data": None}


# --- the 1 MiB reply cap (bytes, not characters) --------------------------------------------

ECHO_STRING_OVERHEAD = len('{"op":"echo","data":""}')


def test_echo_reply_of_exactly_one_mib_is_sent():
    text = "x" * (MAX_REPLY - ECHO_STRING_OVERHEAD)
    reply = handle(json.dumps({"op": "echo", "data": text}).encode())
    assert len(reply) == MAX_REPLY
    assert json.loads(reply)["data"] == text


def test_echo_reply_one_byte_over_is_an_error():
    text = "x" * (MAX_REPLY - ECHO_STRING_OVERHEAD + 1)
    assert_error(ask({"op": "echo", "data": text}))


def test_reply_cap_counts_utf8_bytes_not_characters():
    # 600,000 characters (under 1 MiB) but 1,200,000 bytes of UTF-8 (over).
    reply = ask('{"op":"echo","data":"' + "é" * 600_000 + '"}')
    assert_error(reply)


def test_echo_of_two_mib_is_an_error():
    assert_error(ask({"op": "echo", "data": "a" * (2 << 20)}))


# --- fill ----------------------------------------------------------------------------------


def test_fill_overhead():
    assert FILL_OVERHEAD == len(b'{"op":"fill","data":""}') == 23


@pytest.mark.parametrize("size", [FILL_OVERHEAD, FILL_OVERHEAD + 1, 100, 65536, MAX_REPLY])
def test_fill_reply_is_exactly_n_bytes(size):
    reply = handle(json.dumps({"op": "fill", "bytes": size}).encode())
    assert len(reply) == size
    parsed = json.loads(reply)
    assert set(parsed) == {"op", "data"} and parsed["op"] == "fill"
    assert parsed["data"] == "x" * (size - FILL_OVERHEAD)


@pytest.mark.parametrize(
    "size",
    [FILL_OVERHEAD - 1, 0, -1, MAX_REPLY + 1, 2**64, 5.0, 100.5, True, False, None, "100", [100]],
)
def test_invalid_fill_is_an_error(size):
    assert_error(ask({"op": "fill", "bytes": size}))


def test_fill_without_bytes_is_an_error():
    assert_error(ask({"op": "fill"}))


# --- bad input -----------------------------------------------------------------------------

NOT_UTF8 = [
    b"\xff",
    b'{"op":"echo","data":"\xff"}',
    b'{"op":"echo","data":"\xc0\x80"}',  # overlong NUL
    b'{"op":"echo","data":"\xed\xa0\x80"}',  # an encoded surrogate (CESU-8)
    b'{"op":"echo","data":"\xe2\x82"}',  # truncated sequence
    '{"op":"ping"}'.encode("utf-16"),
]


@pytest.mark.parametrize("body", NOT_UTF8, ids=range(len(NOT_UTF8)))
def test_body_that_is_not_utf8_is_an_error(body):
    assert_error(ask(body))


NOT_JSON = [
    "",
    " ",
    "{",
    '{"op":"ping"',
    '{"op":"ping"} x',
    '{"op":"ping"}{"op":"ping"}',
    "{'op':'ping'}",
    '{"op":"ping",}',
    '{"op":"echo","data":NaN}',
    '{"op":"echo","data":Infinity}',
    '{"op":"echo","data":-Infinity}',
    '{"op":"ping","ignored":NaN}',  # not JSON even where the value would be ignored
    '{"op":"echo","data":01}',
    '{"op":"echo","data":"raw\ncontrol"}',
    '{"op":"echo","data":"\\x41"}',
    "\ufeff" + '{"op":"ping"}',  # a byte-order mark is not JSON whitespace
    '{"op":"ping"}\u00a0',  # nor is a no-break space
]


@pytest.mark.parametrize("body", NOT_JSON, ids=range(len(NOT_JSON)))
def test_body_that_is_not_json_is_an_error(body):
    assert_error(ask(body))


@pytest.mark.parametrize("body", ["[]", '["op","ping"]', '"ping"', "1", "null", "true"])
def test_body_that_is_not_an_object_is_an_error(body):
    assert_error(ask(body))


@pytest.mark.parametrize(
    "request_",
    [{}, {"opp": "ping"}, {"op": None}, {"op": 1}, {"op": ["ping"]}, {"op": ""}, {"op": "PING"}],
)
def test_bad_or_unknown_op_is_an_error(request_):
    assert_error(ask(request_))


def test_unknown_op_is_named_in_the_error():
    assert ask({"op": "frob"})["error"] == 'unknown op "frob"'


def test_huge_unknown_op_gives_a_small_error():
    reply = handle(json.dumps({"op": "z" * (2 << 20)}).encode())
    assert len(reply) < 1000
    assert_error(json.loads(reply))


def test_number_out_of_double_range_is_an_error_not_infinity():
    assert_error(ask('{"op":"echo","data":1e400}'))
    assert_error(ask('{"op":"echo","data":[-1e400]}'))


def test_integer_with_too_many_digits_is_an_error():
    assert_error(ask('{"op":"echo","data":' + "9" * 5000 + "}"))


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_deep_nesting_is_an_error_not_a_crash(opener):
    assert_error(ask('{"op":"echo","data":' + opener * 1_000_000))


def test_moderate_nesting_is_echoed():
    value = []
    for i in range(200):  # 400 levels: arrays and objects alternating
        value = [i, {"k": value}]
    assert ask({"op": "echo", "data": value})["data"] == value


def test_random_bytes_never_raise():
    rng = random.Random(1234)
    alphabet = b'{}[]":,0123456789.eE+-truefalsnNIy\\u \x00\xff\xc3\xa9op'
    for _ in range(3000):
        body = bytes(rng.choice(alphabet) for _ in range(rng.randrange(40)))
        reply = ask(b'{"op":"echo","data":' + body) if rng.random() < 0.5 else ask(body)
        assert "error" in reply or reply.get("op") in ("pong", "echo", "fill")
