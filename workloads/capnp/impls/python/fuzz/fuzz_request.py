"""Atheris target `request` (workloads/capnp/fuzz/README.md): byte 0 of an input is the case
(modulo 3: carsales, catrank, eval), byte 1 the flags (bit 0: packed; bit 1, this target's
own: reuse, the scratch first segment), the rest what a `server` reads on stdin.

The server's own loop, modes.run_server, reads the rest from an io.BytesIO (stream.py's
readers, SPEC §6 limits), serves each request and writes each response to a list, until the
end of the input or a failure; its failures must come from a bad message: InvalidMessage, a
libcapnp KjException, a Text that is not UTF-8 (main.describe's "invalid message" cases).
The client's side of the case reads the same bytes as a stream of responses (Run's reader,
read_root, the case's check, whose Mismatch is its own error).

Checked per input: the server's reader finds the same messages and the same end whether the
input comes whole or in small reads (sizes taken from the input), which is where the packed
reader's search for a message's end resumes; the server answers every message the reader
finds when the input ends cleanly; each response written reads back, whole, as the case's
response.

Run: .venv/bin/python workloads/capnp/impls/python/fuzz/fuzz_request.py [libFuzzer flags]
[corpus dirs | files to replay].
"""

import io
import os
import sys

import atheris

from msgbench.fuzz import atheris_fix  # noqa: F401  (before instrumenting: see its docstring)

# This implementation's folder only: the other workloads' Python programs use the same module
# names (main, stream...), and the script's own folder (fuzz/) is no package.
IMPL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCHEMA_DIR = os.path.join(os.path.dirname(os.path.dirname(IMPL_DIR)), "schema")
sys.path.insert(0, IMPL_DIR)

import capnp  # noqa: E402  (pycapnp is compiled code: nothing to instrument)

with atheris.instrument_imports(
    include=["failures", "stream", "modes", "carsales", "catrank", "eval", "rng"]
):
    import modes
    from carsales import Carsales
    from catrank import Catrank
    from eval import Eval
    from failures import InvalidMessage, Mismatch

# As main.py loads them: parsed at run time, without the import hook.
capnp.remove_import_hook()
CASES = [
    cls(capnp.load(os.path.join(SCHEMA_DIR, f"{name}.capnp")))
    for name, cls in (("carsales", Carsales), ("catrank", Catrank), ("eval", Eval))
]
# What main.describe reports as a bad message (exit 1, "invalid message: ...").
BAD_MESSAGE = (InvalidMessage, capnp.KjException, UnicodeDecodeError)


class Trickle(io.RawIOBase):
    """A stream that gives at most the next of `sizes` bytes per read, like a pipe."""

    def __init__(self, data, sizes):
        self._data = memoryview(data)
        self._pos = 0
        self._sizes = sizes
        self._reads = 0

    def readable(self):
        return True

    def readinto(self, b):
        n = min(len(b), self._sizes[self._reads % len(self._sizes)], len(self._data) - self._pos)
        self._reads += 1
        b[:n] = self._data[self._pos : self._pos + n]
        self._pos += n
        return n


def chunk_sizes(data):
    """Read sizes 1-64 taken from the input's bytes: deterministic, and the fuzzer steers them."""
    return [1 + (b ^ (i * 7)) % 64 for i, b in enumerate(data[-8:])] or [1]


def serve(run, stream_in):
    """modes.run_server into a list: (responses written, None or the bad message's error)."""
    out = []
    try:
        modes.run_server(run, stream_in, out.append)
    except modes.Failure as f:
        if not isinstance(f.cause, BAD_MESSAGE):
            raise f.cause from None  # a finding: the traceback is the cause's
        return out, f.cause
    return out, None


def client(run, data):
    """The client's side on `data` as a stream of responses: each read and checked (against 0:
    the check runs, and its Mismatch is the client's own error, as a bad message is)."""
    responses = run.message_reader(io.BytesIO(data))
    case = run.case
    try:
        while (message := responses.read()) is not None:
            case.check(run.read_root(case.response_type, message), 0)
    except (*BAD_MESSAGE, Mismatch):
        pass


def check_responses(run, written):
    """The server's responses, as the client's reader reads them: whole messages, one each."""
    responses = run.message_reader(io.BytesIO(b"".join(written)))
    for response in written:
        message = responses.read()
        if message is None or bytes(message) != response:
            raise AssertionError("a response is not one whole message")
        run.read_root(run.case.response_type, message)  # a bad one raises: a finding
    if responses.read() is not None:
        raise AssertionError("more responses read than written")


def frames(run, stream_in):
    """The framing alone (the server's reader, without serving): (messages, None or the
    InvalidMessage's text)."""
    requests = run.message_reader(stream_in)
    out = []
    try:
        while (message := requests.read()) is not None:
            out.append(bytes(message))
    except InvalidMessage as e:
        return out, str(e)
    return out, None


def TestOneInput(data: bytes):
    if len(data) < 2:
        return
    case = CASES[data[0] % 3]
    packed, reuse = bool(data[1] & 1), bool(data[1] & 2)
    rest = data[2:]

    # Serving does not depend on how the bytes arrive, the framing does: only the reader
    # runs twice (serving a hostile request can take seconds, SPEC §6 bounds it).
    messages, cut = frames(modes.Run(case, reuse, packed), io.BytesIO(rest))
    trickle = io.BufferedReader(Trickle(rest, chunk_sizes(rest)), buffer_size=64)
    if frames(modes.Run(case, reuse, packed), trickle) != (messages, cut):
        raise AssertionError("the reader splits the stream differently in small reads")

    written, error = serve(modes.Run(case, reuse, packed), io.BytesIO(rest))
    if error is None:
        if cut is not None or len(written) != len(messages):
            raise AssertionError(f"served {len(written)} of {len(messages)} messages, {cut}")
    elif isinstance(error, InvalidMessage) and str(error) == cut:  # the framing's error
        if len(written) != len(messages):
            raise AssertionError(f"{len(written)} served before the cut after {len(messages)}")
    elif len(written) >= len(messages):  # a bad message: one of those the reader found
        raise AssertionError(f"{error!r} after serving all {len(messages)} messages")
    check_responses(modes.Run(case, reuse, packed), written)
    client(modes.Run(case, reuse, packed), rest)


def main():
    if modes.__file__ != os.path.join(IMPL_DIR, "modes.py"):
        raise SystemExit(f"modes imported from {modes.__file__}, not {IMPL_DIR}")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
