"""Atheris target `host` (workloads/nativemsg/fuzz/README.md): an input is the bytes the host
reads on stdin. host.serve, the loop main() runs, reads them through FrameReader from memory
and writes its replies to a list, until EOF or FramingError (the host's exit 1).

Checked per input: one reply per complete frame, and a clean end exactly when the input ends
at a frame boundary; every reply is a well-formed frame (4-byte little-endian length equal to
the body's, body at most 1 MiB, a JSON object in strict UTF-8 JSON) that says what SPEC §2
says of its request (pong, the echo of an equal value or an error, a fill of exactly N bytes
of x, an error for anything else); serving the input split into small reads (sizes taken
from the input) gives the same replies and the same end. The model is the standard library's
json (what the host falls back to where orjson refuses a body), and echoes are compared as
SPEC §2 says, numbers as doubles: orjson reads an integer beyond 64 bits as a double.

Run: .venv/bin/python workloads/nativemsg/impls/python-orjson/fuzz/fuzz_host.py
[libFuzzer flags] [corpus dirs | files to replay].
"""

import json
import os
import struct
import sys

import atheris

from msgbench.fuzz import atheris_fix  # noqa: F401  (before instrumenting: see its docstring)

# This implementation's folder only: the other workloads' Python programs use the same module
# names (protocol, framing...), and the script's own folder (fuzz/) is no package.
IMPL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, IMPL_DIR)
sys.path.insert(1, os.path.join(os.path.dirname(IMPL_DIR), "python"))  # framing.py, shared

with atheris.instrument_imports(include=["framing", "protocol", "host"]):
    import framing
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


def check_reply(frame, body):
    """One reply frame: well-formed (length, at most 1 MiB, strict JSON) and what SPEC §2
    says of its request `body`."""
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
            ok = ok and same_json(reply["data"], value)
        except RecursionError:
            return  # nesting deeper than the comparison's recursion: json read it back
    else:
        data = reply.get("data")
        ok = reply.get("op") == "fill" and length == value and type(data) is str
        ok = ok and data == "x" * len(data)
    if not ok:
        raise AssertionError(f"{kind} request {bytes(body[:80])!r}: reply {reply_body[:80]!r}")


def TestOneInput(data: bytes):
    whole = serve(data, None)
    bodies, clean = model(data)
    replies, end = whole
    if len(replies) != len(bodies) or (end is None) != clean:
        raise AssertionError(f"{len(replies)} replies, end {end!r}; model {len(bodies)}, {clean}")
    for frame, body in zip(replies, bodies, strict=True):
        check_reply(frame, body)
    split = serve(data, chunk_sizes(data))
    if split != whole:
        raise AssertionError(f"split reads differ: {split[1]!r} vs {whole[1]!r}")


def main():
    # The modules must be this host's (protocol, host) and the python host's (framing), not
    # another workload's of the same name.
    for module, folder in (
        (host, IMPL_DIR),
        (framing, os.path.join(os.path.dirname(IMPL_DIR), "python")),
    ):
        if os.path.dirname(os.path.abspath(module.__file__)) != os.path.abspath(folder):
            raise SystemExit(f"{module.__name__} imported from {module.__file__}, not {folder}")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
