"""The checks of the atheris target `host`, shared by the python and python-orjson hosts'
fuzz_host.py scripts (each imports its host's framing, protocol and host under atheris's
instrumentation first, then this module): an in-memory stdin, the model of SPEC §1-§3, and
test_one_input(data, equal), which runs host.serve over the input whole and in small reads.
"""

import json
import operator
import struct

import host
from framing import MAX_REPLY, MAX_REQUEST, FrameReader, FramingError
from protocol import FILL_OVERHEAD

MAX_READ = 64 * 1024 * 1024 + 8  # no read may ask for room beyond the request cap


def _strict_constant(name):
    raise ValueError(f"{name} in a reply")


_check_json = json.JSONDecoder(parse_constant=_strict_constant).decode


class Source:
    """An in-memory stdin: readinto(view) copies the next bytes; `chunks` bounds each read
    (cycled), None for reads as large as the view."""

    def __init__(self, data, chunks=None):
        self.data = memoryview(data)
        self.pos = 0
        self.chunks = chunks
        self.reads = 0

    def readinto(self, view):
        size = len(view)
        if size == 0 or size > MAX_READ:
            raise AssertionError(f"read into a view of {size} bytes")
        if self.chunks:
            size = min(size, self.chunks[self.reads % len(self.chunks)])
        self.reads += 1
        got = self.data[self.pos : self.pos + size]
        view[: len(got)] = got
        self.pos += len(got)
        return len(got)


def chunk_sizes(data):
    """Read sizes 1-16 taken from the input's bytes: deterministic, and the fuzzer steers them."""
    return [1 + (b ^ (i * 7)) % 16 for i, b in enumerate(data[-8:])] or [1]


def serve(data, chunks):
    """Run host.serve over `data`; return (replies, end): end is None at a clean EOF or the
    FramingError's message."""
    source = Source(data, chunks)
    out = []

    def write(buf):
        out.append(bytes(buf))
        return len(buf)

    try:
        host.serve(FrameReader(source.readinto), write)
        end = None
    except FramingError as e:
        end = str(e)
    if source.pos != len(data) and end is None:
        raise AssertionError(f"clean end after {source.pos} of {len(data)} bytes")
    return out, end


def model(data):
    """The frames a host must answer (SPEC §1-§3) and whether the stream ends cleanly."""
    bodies = []
    p = 0
    while len(data) - p >= 4:
        (length,) = struct.unpack_from("<I", data, p)
        if length > MAX_REQUEST or p + 4 + length > len(data):
            return bodies, False
        bodies.append(data[p + 4 : p + 4 + length])
        p += 4 + length
    return bodies, p == len(data)


def expected(body):
    """What SPEC §2 says of a request: ('pong'|'echo'|'fill'|'error', the value), or None
    where either an answer or an error is right (nesting deeper than json handles)."""
    try:
        request = _check_json(body.decode("utf-8").strip(" \t\n\r"))
    except RecursionError:
        return None
    except ValueError:  # not UTF-8, not JSON, NaN/Infinity, an integer json refuses
        return "error", None
    if type(request) is not dict:
        return "error", None
    op = request.get("op")
    if op == "ping":
        return "pong", None
    if op == "echo" and "data" in request:
        return "echo", request["data"]
    if op == "fill" and type(request.get("bytes")) is int:
        n = request["bytes"]
        return ("fill", n) if FILL_OVERHEAD <= n <= MAX_REPLY else ("error", None)
    return "error", None


def same_json(a, b):
    """Equal as JSON (SPEC §2): same types and structure, numbers compared as doubles."""
    ta, tb = type(a), type(b)
    if ta in (int, float) and tb in (int, float):
        if ta is int and tb is int:
            return a == b
        try:
            return float(a) == float(b)
        except OverflowError:  # an integer beyond the double range: never a double's equal
            return False
    if ta is not tb:
        return False
    if ta is dict:
        return a.keys() == b.keys() and all(same_json(a[k], b[k]) for k in a)
    if ta is list:
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b, strict=True))
    return a == b


def check_reply(frame, body, equal):
    """One reply frame: well-formed (length, at most 1 MiB, strict JSON) and what SPEC §2
    says of its request `body`; `equal` compares an echo's data with the request's."""
    if len(frame) < 4:
        raise AssertionError(f"reply of {len(frame)} bytes has no header")
    (length,) = struct.unpack_from("<I", frame)
    reply_body = frame[4:]
    if length != len(reply_body) or length > MAX_REPLY:
        raise AssertionError(f"reply header says {length}, body is {len(reply_body)} bytes")
    try:
        reply = _check_json(reply_body.decode("utf-8"))
    except RecursionError:
        return  # an echo of deep nesting: json reads back what it can
    if type(reply) is not dict:
        raise AssertionError(f"reply is not an object: {reply_body[:80]!r}")
    want = expected(body)
    if want is None or (want[0] == "echo" and "error" in reply):
        return  # an echo may be refused (over 1 MiB, too deep to write, NaN from 1e400)
    kind, value = want
    if kind == "error":
        ok = type(reply.get("error")) is str and reply["error"] != ""
    elif kind == "pong":
        ok = reply == {"op": "pong"}
    elif kind == "echo":
        ok = reply.keys() == {"op", "data"} and reply["op"] == "echo"
        try:
            ok = ok and equal(reply["data"], value)
        except RecursionError:
            return  # nesting deeper than the comparison's recursion: json read it back
    else:
        data = reply.get("data")
        ok = reply.get("op") == "fill" and length == value and type(data) is str
        ok = ok and data == "x" * len(data)
    if not ok:
        raise AssertionError(f"{kind} request {bytes(body[:80])!r}: reply {reply_body[:80]!r}")


def test_one_input(data: bytes, equal=operator.eq):
    """The checks of one input; `equal` compares echoed data (== or same_json)."""
    whole = serve(data, None)
    bodies, clean = model(data)
    replies, end = whole
    if len(replies) != len(bodies) or (end is None) != clean:
        raise AssertionError(f"{len(replies)} replies, end {end!r}; model {len(bodies)}, {clean}")
    for frame, body in zip(replies, bodies, strict=True):
        check_reply(frame, body, equal)
    split = serve(data, chunk_sizes(data))
    if split != whole:
        raise AssertionError(f"split reads differ: {split[1]!r} vs {whole[1]!r}")
