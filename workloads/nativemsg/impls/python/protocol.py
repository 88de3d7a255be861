"""Requests to replies: ping, echo, fill, and an error reply for everything else.

handle() takes one frame body (any bytes-like object) and returns the reply body as bytes,
never more than framing.MAX_REPLY. Bad input of any kind becomes an {"error": ...} reply; it
never raises for anything a peer can send.
"""

import json

from framing import MAX_REPLY


def _reject_constant(name):
    # json accepts NaN, Infinity and -Infinity by default; they are not JSON (RFC 8259).
    raise ValueError(f"{name} is not valid JSON")


# Built once: json.loads/json.dumps with keyword arguments construct a new decoder or encoder on
# every call. strict=True (the default) rejects raw control characters inside strings.
# raw_decode on the text stripped of JSON whitespace does what decode() does without its two
# regular-expression passes, which cost more than parsing a small request.
_raw_decode = json.JSONDecoder(parse_constant=_reject_constant).raw_decode
_JSON_WHITESPACE = " \t\n\r"  # str.strip() alone would also strip other Unicode spaces

# Compact, UTF-8 output; allow_nan=False refuses to write NaN/Infinity (1e400 parses as inf).
# check_circular is off because a value parsed from JSON cannot contain a cycle.
_encode = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), allow_nan=False, check_circular=False
).encode
# For strings holding lone surrogates (valid JSON escapes such as "\ud800", but not encodable as
# UTF-8): \u escapes carry them through unchanged.
_encode_ascii = json.JSONEncoder(
    ensure_ascii=True, separators=(",", ":"), allow_nan=False, check_circular=False
).encode

PONG = _encode({"op": "pong"}).encode()

# The smallest fill reply is {"op":"fill","data":""}: each byte asked for beyond that is one "x".
FILL_OVERHEAD = len(_encode({"op": "fill", "data": ""}))

_OP_SHOWN = 64  # an op name quoted in an error is cut so the error stays small


def error(message):
    """An error reply body: {"error": message}."""
    return _encode_ascii({"error": message}).encode()


def to_body(value):
    """Serialise a reply, or return an error reply if it cannot be sent (over 1 MiB, NaN...)."""
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
    except (ValueError, MemoryError) as e:
        return error(f"cannot serialise reply: {e}")
    if len(body) > MAX_REPLY:
        return _too_big(len(body))
    return body


def _too_big(size):
    return error(f"reply of at least {size} bytes would exceed the {MAX_REPLY}-byte limit")


def handle(body):
    """Answer one request body."""
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
    return _encode({"op": "fill", "data": "x" * (size - FILL_OVERHEAD)}).encode()
