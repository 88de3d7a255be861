"""Requests to replies with orjson: ping, echo, fill, and an error reply for everything else.

handle() takes one frame body (any bytes-like object) and returns the reply body as bytes,
never more than framing.MAX_REPLY. Bad input of any kind becomes an {"error": ...} reply; it
never raises for anything a peer can send.

orjson parses the body straight from the frame's memoryview (it validates the UTF-8 itself)
and writes compact UTF-8: that is the fast path, for a ping, an echo and a valid fill. Every
other body is answered by the `python` host's own protocol module (../python/protocol.py,
loaded here as `json_protocol`, the standard library's json), so it gets that host's reply:
- valid JSON that orjson will not read: a lone surrogate escape ("\\ud800"), a number beyond
  the double range (1e400: an error for an echo, ignored in a ping), nesting deeper than
  orjson's 1024 levels (json then stops at Python's recursion limit);
- every error: invalid JSON, not an object, a bad or unknown op, an echo without data, a bad
  fill (such bodies are parsed twice, on error paths only).
And where orjson cannot write a reply, json writes it: nesting deeper than orjson's writer
allows (254 levels).

One difference remains, allowed by SPEC §2 (numbers are equal as doubles): orjson reads an
integer beyond the 64-bit range (above 2**64 - 1 or below -2**63) as the nearest double, so its
echo is that double (1.2345678901234568e+29), where json keeps every digit.

The first large frame also tunes glibc's malloc (keep_heap): a 512 KiB echo allocates a few
MiB (the text as a 4-byte-per-character str, the reply), and glibc's defaults hand that memory
back to the kernel after each request (mmap'd blocks above its threshold are unmapped, and the
top of the heap is trimmed), so the next request faults every page in again: ~660 page faults
per 512 KiB echo (~40 once tuned), which on a busy machine cost more than the parse itself.
Small requests never pay for this (ctypes is imported only then): a spawned ping starts no
slower. It is done here, in handle(), because the serve loop is the python host's.
"""

import os
import sys
from importlib.machinery import ModuleSpec, SourceFileLoader

import framing
import orjson
from framing import MAX_REPLY


def _load_json_protocol():
    """The python host's protocol.py (beside the framing.py found on sys.path), imported as
    `json_protocol`: this module is `protocol` too, so it cannot be imported by name."""
    path = os.path.join(os.path.dirname(framing.__file__), "protocol.py")
    loader = SourceFileLoader("json_protocol", path)
    module = type(sys)("json_protocol")
    module.__file__, module.__loader__ = path, loader
    module.__spec__ = ModuleSpec("json_protocol", loader, origin=path)
    sys.modules["json_protocol"] = module
    loader.exec_module(module)
    return module


json_protocol = _load_json_protocol()

_loads = orjson.loads
_dumps = orjson.dumps
_OrjsonDecodeError = orjson.JSONDecodeError  # a ValueError (and json.JSONDecodeError)
_OrjsonEncodeError = orjson.JSONEncodeError  # a TypeError
_handle_json = json_protocol.handle  # the slow path: the python host's answer
_to_body_json = json_protocol.to_body
_too_big = json_protocol._too_big
error = json_protocol.error
FILL_OVERHEAD = json_protocol.FILL_OVERHEAD
PONG = json_protocol.PONG

# A frame this large (or larger) makes allocations above glibc's 128 KiB mmap threshold: a
# 32 KiB text becomes a 128 KiB str when one character needs 4 bytes.
LARGE_FRAME = 32 * 1024

# glibc mallopt(3) parameters (<malloc.h>) and the values set. Blocks up to 8 MiB come from the
# heap (a 1 MiB reply's text is at most 4 MiB as a str) and up to 32 MiB of free heap is kept;
# a 64 MiB request's buffer is still mmap'd and given back once served.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 8 * 1024 * 1024
_TRIM_THRESHOLD = 32 * 1024 * 1024

_small = True  # no large frame yet: the allocator is as glibc set it


def keep_heap():
    """Have glibc keep freed memory for the next request; False where that is not possible."""
    try:
        import ctypes  # here, not at the top: about 2 ms, paid only once a large frame comes

        mallopt = ctypes.CDLL(None).mallopt
        mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        return bool(
            mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
            and mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
        )
    except (ImportError, OSError, AttributeError):  # no ctypes, or a libc without mallopt
        return False


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
    global _small
    if _small and len(body) >= LARGE_FRAME:
        _small = False
        keep_heap()
    try:
        request = _loads(body)
    except (_OrjsonDecodeError, RecursionError):
        return _handle_json(body)
    except MemoryError as e:
        return error(f"request cannot be parsed: {e}")
    if type(request) is dict:
        op = request.get("op")
        if op == "ping":
            return PONG
        if op == "echo" and "data" in request:
            return _to_body({"op": "echo", "data": request["data"]})
        if op == "fill":
            size = request.get("bytes")
            # type() rather than isinstance(): true and false are ints in Python, not in JSON.
            if type(size) is int and FILL_OVERHEAD <= size <= MAX_REPLY:
                return _dumps({"op": "fill", "data": "x" * (size - FILL_OVERHEAD)})
    return _handle_json(body)  # an error: worded as the python host words it
