"""Atheris target `resp` (workloads/redis/fuzz/README.md): an input is the bytes of one client.
protocol.RequestParser, the parser connection.py feeds every read to, parses them the way
connection.Connection does (feed each read, then feed(b"") while `ready`), until the input is
used up or the parser reports its ProtocolError. Commands are not run.

Checked per input: parsing the input as one read, as many small reads (sizes taken from the
input), and as one read with a small per-turn request limit gives the same requests and the
same error; every request is a non-empty list of bytes arguments.

Run: .venv/bin/python workloads/redis/impls/python/fuzz/fuzz_resp.py [libFuzzer flags]
[corpus dirs | files to replay].
"""

import os
import sys

import atheris

from msgbench.fuzz import atheris_fix  # noqa: F401  (before instrumenting: see its docstring)

# This implementation's folder only: the other workloads' Python programs use the same module
# names (protocol, server...), and the script's own folder (fuzz/) is no package.
IMPL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, IMPL_DIR)

with atheris.instrument_imports(include=["protocol"]):
    import protocol
    from protocol import RequestParser

REQUESTS_PER_TURN = 4096  # connection.REQUESTS_PER_TURN (connection imports the event loop)


def chunk_sizes(data):
    """Read sizes 1-16 taken from the input's bytes: deterministic, and the fuzzer steers them."""
    return [1 + (b ^ (i * 7)) % 16 for i, b in enumerate(data[-8:])] or [1]


def reads(data, sizes):
    pos = i = 0
    while pos < len(data):
        size = sizes[i % len(sizes)]
        yield data[pos : pos + size]
        pos += size
        i += 1


def parse(chunks, limit):
    """(requests as lists, the error reply or None), fed as Connection feeds them."""
    parser = RequestParser()
    requests = []
    for chunk in chunks:
        got = parser.feed(chunk, limit)
        if len(got) > limit:
            raise AssertionError(f"{len(got)} requests past a limit of {limit}")
        requests += got
        while parser.ready:
            got = parser.feed(b"", limit)
            if len(got) > limit or (not got and parser.ready):
                # Still ready after a turn that parsed nothing: the server would spin.
                raise AssertionError(f"ready, then {len(got)} requests (limit {limit})")
            requests += got
        if parser.error is not None:
            if parser.feed(b"*1\r\n$4\r\nPING\r\n", limit) or parser.ready:
                raise AssertionError("requests after the protocol error")
            break
    out = []
    for argv in requests:
        if not argv or not all(type(a) is bytes for a in argv):
            raise AssertionError(f"bad request {argv!r}")
        out.append(list(argv))
    return out, (parser.error.reply if parser.error is not None else None)


def TestOneInput(data: bytes):
    whole = parse([data], REQUESTS_PER_TURN)
    split = parse(reads(data, chunk_sizes(data)), REQUESTS_PER_TURN)
    if split != whole:
        raise AssertionError(f"split reads differ: {split!r} vs {whole!r}")
    limit = 1 + (data[0] % 3 if data else 0)
    limited = parse([data], limit)
    if limited != whole:
        raise AssertionError(f"limit {limit} differs: {limited!r} vs {whole!r}")


def main():
    if protocol.__file__ != os.path.join(IMPL_DIR, "protocol.py"):
        raise SystemExit(f"protocol imported from {protocol.__file__}, not {IMPL_DIR}")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
