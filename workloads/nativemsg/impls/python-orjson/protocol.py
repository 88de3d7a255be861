"""Requests to replies with orjson: ping, echo, fill, and an error reply for everything else.

handle() takes one frame body (any bytes-like object) and returns the reply body as bytes,
never more than framing.MAX_REPLY. Bad input of any kind becomes an {"error": ...} reply; it
never raises for anything a peer can send.

orjson parses the body straight from the frame's memoryview (it validates the UTF-8 itself)
and writes compact UTF-8. Where orjson refuses a body, the request is answered by the standard
library's json exactly as the `python` host answers it (the slow path below), so every input
gets the same verdict as there:
- valid JSON that orjson will not read: a lone surrogate escape ("\\ud800"), a number beyond
  the double range (1e400: an error for an echo, ignored in a ping), nesting deeper than
  orjson's 1024 levels (json then stops at Python's recursion limit);
- invalid JSON: json's error message is the one sent (parsed twice, on error paths only).
And where orjson cannot write a reply, json writes it: nesting deeper than orjson's writer
allows (254 levels).

One difference remains, allowed by SPEC §2 (numbers are equal as doubles): orjson reads an
integer beyond the 64-bit range (above 2**64 - 1 or below -2**63) as the nearest double, so its
echo is that double (1.2345678901234568e+29), where json keeps every digit.
"""

import json

import orjson
from framing import MAX_REPLY

_loads = orjson.loads
_dumps = orjson.dumps
_OrjsonDecodeError = orjson.JSONDecodeError  # a ValueError (and json.JSONDecodeError)
_OrjsonEncodeError = orjson.JSONEncodeError  # a TypeError

PONG = _dumps({"op": "pong"})

# The smallest fill reply is {"op":"fill","data":""}: each byte asked for beyond that is one "x".
FILL_OVERHEAD = len(_dumps({"op": "fill", "data": ""}))

_OP_SHOWN = 64  # an op name quoted in an error is cut so the error stays small


# --- the slow path: the standard library, as in the `python` host ---------------------------


def _reject_constant(name):
    # json accepts NaN, Infinity and -Infinity by default; they are not JSON (RFC 8259).
    raise ValueError(f"{name} is not valid JSON")


# Built once (json.loads/dumps with keyword arguments build a decoder or encoder per call).
_raw_decode = json.JSONDecoder(parse_constant=_reject_constant).raw_decode
_JSON_WHITESPACE = " \t\n\r"  # str.strip() alone would also strip other Unicode spaces
_encode = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
).encode
# Error replies, and strings holding lone surrogates (no UTF-8 encoding): \u escapes.
_encode_ascii = json.JSONEncoder(
    ensure_ascii=True, separators=(",", ":"), allow_nan=False, check_circular=False
).encode


def error(message):
    """An error reply body: {"error": message}, ASCII (the message may quote a lone surrogate)."""
    return _encode_ascii({"error": message}).encode()


def _too_big(size):
    return error(f"reply of at least {size} bytes would exceed the {MAX_REPLY}-byte limit")


def _to_body_json(value):
    """Serialise a reply with json (values orjson did not parse, or cannot write)."""
    try:
        text = _encode(value)
        # Cheap pre-check: a UTF-8 encoding is never shorter than the string's length.
        if len(text) > MAX_REPLY:
            return _too_big(len(text))
        try:
            body = text.encode()
        except UnicodeEncodeError:
            body = _encode_ascii(value).encode()
    except RecursionError:
        return error("reply is nested too deeply to serialise")
    except (ValueError, MemoryError) as e:  # NaN/Infinity (1e400 parses as inf), no memory
        return error(f"cannot serialise reply: {e}")
    if len(body) > MAX_REPLY:
        return _too_big(len(body))
    return body


def _handle_json(body):
    """Answer a body orjson refused, the way the `python` host does."""
    try:
        text = str(body, "utf-8").strip(_JSON_WHITESPACE)
        request, end = _raw_decode(text)
        if end != len(text):
            raise json.JSONDecodeError("Extra data", text, end)
    except UnicodeDecodeError as e:
        return error(f"request is not valid UTF-8: {e.reason} at byte {e.start}")
    except json.JSONDecodeError as e:
        return error(f"request is not valid JSON: {e}")
    except RecursionError:
        return error("request is nested too deeply")
    except (ValueError, MemoryError) as e:
        # e.g. an integer beyond sys.get_int_max_str_digits(), or NaN/Infinity
        return error(f"request cannot be parsed: {e}")
    return _answer(request, _to_body_json)


# --- the fast path ---------------------------------------------------------------------------


def _to_body(value):
    """Serialise a reply parsed by orjson; json takes over what orjson cannot write."""
    try:
        body = _dumps(value)
    except _OrjsonEncodeError:  # nesting beyond orjson's writer limit
        return _to_body_json(value)
    except MemoryError as e:
        return error(f"cannot serialise reply: {e}")
    if len(body) > MAX_REPLY:
        return _too_big(len(body))
    return body


def handle(body):
    """Answer one request body."""
    try:
        request = _loads(body)
    except (_OrjsonDecodeError, RecursionError):
        return _handle_json(body)
    except MemoryError as e:
        return error(f"request cannot be parsed: {e}")
    return _answer(request, _to_body)


def _answer(request, to_body):
    """The reply to a parsed request; `to_body` serialises an echo."""
    if type(request) is not dict:
        return error("request is not a JSON object")
    op = request.get("op")
    if op == "ping":
        return PONG
    if op == "echo":
        if "data" not in request:
            return error('echo request has no "data" member')
        return to_body({"op": "echo", "data": request["data"]})
    if op == "fill":
        return _fill(request)
    if op is None and "op" not in request:
        return error('request has no "op" member')
    if type(op) is not str:
        return error('"op" is not a string')
    return error(f"unknown op {_encode_ascii(op[:_OP_SHOWN])}")


def _fill(request):
    size = request.get("bytes")
    # type() rather than isinstance(): true and false are ints in Python but not in JSON, and
    # 5.0 is a JSON number that is not an integer.
    if type(size) is not int:
        return error('fill needs an integer "bytes" member')
    if not FILL_OVERHEAD <= size <= MAX_REPLY:
        return error(f'fill "bytes" must be between {FILL_OVERHEAD} and {MAX_REPLY}')
    return _dumps({"op": "fill", "data": "x" * (size - FILL_OVERHEAD)})
