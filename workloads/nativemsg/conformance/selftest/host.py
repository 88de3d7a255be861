"""A correct nativemsg host in plain Python: the self-test's control sample.

The self-test (test_selftest.py) runs the whole suite against it and expects every test to pass,
which shows that the failures it sees with a bug come from the bug, not from the suite. impl.py
starts it, after replacing ONE of its functions with a classic mistake when given --bug NAME.
(This is test equipment, not one of the lab's hosts: it is written to be obviously right, not
fast.)
"""

from __future__ import annotations

import json
import os
import struct
import sys

MAX_REQUEST = 64 * 1024 * 1024
MAX_REPLY = 1024 * 1024
FILL_OVERHEAD = len(b'{"op":"fill","data":""}')


class BrokenStream(Exception):
    """The input stream cannot be read as frames any more: exit 1 with a message."""


def read_exact(stream, n: int) -> bytes:
    """n bytes, fewer only at EOF. A BufferedReader read(n) loops over short reads itself."""
    return stream.read(n)


def read_length(stream) -> int | None:
    """The next frame's length; None on EOF exactly at a frame boundary."""
    prefix = read_exact(stream, 4)
    if not prefix:
        return None
    if len(prefix) < 4:
        raise BrokenStream(f"EOF inside a length prefix ({len(prefix)} of 4 bytes)")
    return struct.unpack("<I", prefix)[0]


def check_length(n: int) -> None:
    if n > MAX_REQUEST:
        raise BrokenStream(f"frame length {n} exceeds the 64 MiB cap")


def read_frame(stream) -> bytes | None:
    n = read_length(stream)
    if n is None:
        return None
    check_length(n)
    body = read_exact(stream, n)
    if len(body) < n:
        raise BrokenStream(f"EOF inside a frame body ({len(body)} of {n} bytes)")
    return body


def encode_frame(body: bytes) -> bytes:
    return struct.pack("<I", len(body)) + body


def write_frame(out, body: bytes) -> None:
    out.write(encode_frame(body))
    out.flush()


def _reject_constant(name):
    raise ValueError(f"{name} is not JSON")


def decode_body(body: bytes):
    return json.loads(body.decode("utf-8"), parse_constant=_reject_constant)


def serialise(reply) -> bytes:
    return json.dumps(reply, ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()


def error(message: str) -> dict:
    return {"error": message}


def answer(request) -> dict:
    if not isinstance(request, dict):
        return error("request is not a JSON object")
    op = request.get("op")
    if not isinstance(op, str):
        return error("request has no string member 'op'")
    if op == "ping":
        return {"op": "pong"}
    if op == "echo":
        if "data" not in request:
            return error("echo without 'data'")
        return {"op": "echo", "data": request["data"]}
    if op == "fill":
        n = request.get("bytes")
        if not isinstance(n, int) or isinstance(n, bool):
            return error("fill needs an integer 'bytes'")
        if n < FILL_OVERHEAD or n > MAX_REPLY:
            return error(f"fill size {n} out of range")
        return {"op": "fill", "data": "x" * (n - FILL_OVERHEAD)}
    return error(f"unknown op {op!r}")


def reply_cap(body: bytes) -> bytes:
    if len(body) > MAX_REPLY:
        return serialise(error(f"reply of {len(body)} bytes exceeds 1 MiB"))
    return body


def respond(body: bytes) -> bytes:
    try:
        return reply_cap(serialise(answer(decode_body(body))))
    except (ValueError, RecursionError) as e:  # UnicodeError and JSONDecodeError are ValueErrors
        return serialise(error(f"bad request: {e}"[:200]))


def serve(stream, out) -> int:
    while True:
        body = read_frame(stream)
        if body is None:
            return 0
        write_frame(out, respond(body))


def main() -> None:
    try:
        status = serve(sys.stdin.buffer, sys.stdout.buffer)
    except BrokenStream as e:
        print(f"nativemsg reference host: {e}", file=sys.stderr)
        status = 1
    except BrokenPipeError:
        print("nativemsg reference host: stdout closed by the reader", file=sys.stderr)
        # The unwritten reply is still buffered: point stdout at /dev/null so that the
        # interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 1
    sys.exit(status)
