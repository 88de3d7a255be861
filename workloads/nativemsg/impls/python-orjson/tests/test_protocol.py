"""protocol, where python-orjson differs from the python host: the fast path written by orjson,
and the hand-over to the python host's protocol (json) where orjson refuses or cannot write.
The SPEC-level tests (ping, echo, fill, errors, the 1 MiB cap) are the python host's
tests/test_protocol.py, which runs them against this host's handle() too."""

import json

import orjson
import protocol
import pytest
from protocol import handle


def ask(request) -> dict:
    body = request if isinstance(request, bytes) else request.encode()
    return json.loads(handle(memoryview(bytearray(body))))


# --- where orjson and json differ --------------------------------------------------------------


def test_replies_are_written_by_orjson():
    reply = handle(b'{"op":"echo","data":{"b":[1.5,-0.0,1e300,"\\u00e9\\u2028"],"a":null}}')
    assert reply == orjson.dumps({"op": "echo", "data": orjson.loads(reply)["data"]})
    assert reply == '{"op":"echo","data":{"b":[1.5,-0.0,1e+300,"é\u2028"],"a":null}}'.encode()


@pytest.mark.parametrize(
    "text", ["123456789012345678901234567890", "18446744073709551616", "-9223372036854775809"]
)
def test_integer_beyond_64_bits_comes_back_as_the_nearest_double(text):
    # SPEC §2: numbers are equal as IEEE-754 doubles. orjson reads these as floats.
    data = ask('{"op":"echo","data":' + text + "}")["data"]
    assert type(data) is float and data == float(int(text))


def test_integer_beyond_the_double_range_is_echoed_exactly_by_json():
    # orjson refuses it (it would be infinity); json reads and writes every digit.
    assert ask('{"op":"echo","data":' + "9" * 400 + "}")["data"] == int("9" * 400)


def test_lone_surrogate_in_an_ignored_member_still_gets_a_pong():
    # orjson refuses "\ud800"; json reads it, as the python host does.
    assert handle(b'{"op":"ping","x":"\\ud800"}') == b'{"op":"pong"}'


def test_number_beyond_the_double_range_in_an_ignored_member_still_gets_a_pong():
    assert handle(b'{"op":"ping","x":[1e400,-1e999]}') == b'{"op":"pong"}'


def test_json_errors_name_the_problem():
    # Refused bodies are answered by json: its message, as the python host sends it.
    assert ask(b'{"op":"ping"} x')["error"].startswith("request is not valid JSON: Extra data")
    assert ask(b'{"op":"echo","data":"\xff"}')["error"].startswith("request is not valid UTF-8")


def test_nesting_beyond_the_writer_limit_is_written_by_json():
    # orjson parses up to 1024 levels but writes only 254; json writes the rest.
    data = "[" * 600 + "]" * 600
    reply = handle(('{"op":"echo","data":' + data + "}").encode())
    assert reply == ('{"op":"echo","data":' + data + "}").encode()
    with pytest.raises(orjson.JSONEncodeError):
        orjson.dumps(json.loads(data))


@pytest.mark.parametrize("depth", [1023, 1024, 1025, 5000])
def test_nesting_around_orjson_parse_limit_never_raises(depth):
    reply = ask('{"op":"echo","data":' + "[" * depth + "]" * depth + "}")
    assert "error" in reply or reply["op"] == "echo"


def test_fast_and_slow_paths_give_the_same_reply_to_what_both_read():
    body = '{"op":"echo","data":{"seq":1,"text":"a \\"q\\" b\\\\s n\\n é € 😀"}}'.encode()
    assert handle(body) == protocol.json_protocol.handle(body)


def test_slow_path_is_the_python_hosts_protocol():
    assert protocol.json_protocol.__file__.endswith("/python/protocol.py")
    assert protocol.PONG == protocol.json_protocol.PONG == b'{"op":"pong"}'


@pytest.mark.parametrize(
    "body",
    [b"[1]", b'{"op":"frob"}', b'{"op":2}', b"{}", b'{"op":"echo"}', b'{"op":"fill","bytes":5}'],
)
def test_errors_are_the_python_hosts(body):
    assert handle(body) == protocol.json_protocol.handle(body)
