"""A Native Messaging host that misbehaves on purpose, one way per mode, so the tests can show
what Chromium itself does with each mistake (what an extension sees).

    python -E -S fixture_host.py MODE [ARG] [ORIGIN]

Modes: each reads one request frame and then, for every request,
  text      writes a line of text to stdout (a host that logs to stdout)
  len8      replies {"op":"pong"} with an 8-byte length (usize/size_t instead of u32)
  over      replies with a valid JSON body of 1,048,577 bytes (one over Chromium's cap)
  exact     replies with a valid JSON body of exactly 1,048,576 bytes (a fill reply)
  exit      replies {"op":"pong"} to the first request, then exits 0 (mid-session)
  badjson   writes a valid frame whose body is not JSON, then the real {"op":"pong"}
  silent    reads requests and never answers (for timeouts)
  record    echoes each body back byte for byte (a valid echo reply, like the baseline) and
            appends {"len": n, "sha256": hex} per request to the file ARG
Every mode first writes "fixture_host: mode MODE started" to stderr.
Test equipment only: plain, obviously right Python, not a host of the lab.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys

MAX_REPLY = 1024 * 1024
PONG = b'{"op":"pong"}'
FILL_ENVELOPE = len(b'{"op":"fill","data":""}')


def read_frame(stdin) -> bytes | None:
    prefix = stdin.read(4)
    if len(prefix) < 4:
        return None
    (n,) = struct.unpack("<I", prefix)
    body = stdin.read(n)
    return body if len(body) == n else None


def fill_body(size: int) -> bytes:
    return b'{"op":"fill","data":"' + b"x" * (size - FILL_ENVELOPE) + b'"}'


def main(argv: list[str]) -> int:
    mode = argv[1]
    # On stderr, which Chromium passes on to its own: the driver's --impl-stderr must show it.
    sys.stderr.write(f"fixture_host: mode {mode} started\n")
    sys.stderr.flush()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    count = 0
    while (body := read_frame(stdin)) is not None:
        count += 1
        if mode == "text":
            out = b"host started, processing request\n"
        elif mode == "len8":
            out = struct.pack("<Q", len(PONG)) + PONG
        elif mode == "over":
            out = struct.pack("<I", MAX_REPLY + 1) + fill_body(MAX_REPLY + 1)
        elif mode == "exact":
            out = struct.pack("<I", MAX_REPLY) + fill_body(MAX_REPLY)
        elif mode == "badjson":
            bad = b'{"op": pong'
            out = struct.pack("<I", len(bad)) + bad + struct.pack("<I", len(PONG)) + PONG
        elif mode == "silent":
            continue
        elif mode == "record":
            with open(argv[2], "a") as log:
                log.write(
                    json.dumps({"len": len(body), "sha256": hashlib.sha256(body).hexdigest()})
                )
                log.write("\n")
            out = struct.pack("<I", len(body)) + body
        elif mode == "exit":
            out = struct.pack("<I", len(PONG)) + PONG
        else:
            sys.stderr.write(f"fixture_host: unknown mode {mode!r}\n")
            return 2
        stdout.write(out)
        stdout.flush()
        if mode == "exit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
