"""Atheris target `server` (workloads/comm/fuzz/README.md): an input is the bytes of one client.

The server's own per-connection code, handler.EchoHandler, is driven the way asyncio drives a
BufferedProtocol (get_buffer, a read copied into it, buffer_updated; eof_received at the end)
with a transport and a worker ("home") that record what would be sent, logged and scheduled;
no event loop, socket or timer. The body cap is 1 MiB so that the refusal is reachable. Two
read buffers: the server's own (1 MiB, frames up to 64 KiB carried from read to read) read by
the input's own chunks, and a small one (256 bytes, frames over 64 bytes streamed) read in
small chunks. Reading stops where the server stops reading (close after a refused length);
after END it goes on (the server drains).

Checked per input, against a plain model of SPEC §2 (frames in order; END or QUIT ends the
session with one header-only END, as soon as its header is in; a length over the cap closes,
END's included; EOF ends it): the bytes sent
are exactly each complete frame before the end with its type made REPLY and its body intact,
then END after END or QUIT; a frame cut by EOF may have been streamed in part (a prefix of its
reply), never more. The cap refusal logs one line and closes. The client's FrameDecoder
(frame.py) decodes the same input into the model's frames, in the same chunks.

Run: .venv/bin/python workloads/comm/impls/python/fuzz/fuzz_server.py [libFuzzer flags]
[corpus dirs | files to replay].
"""

import asyncio
import os
import struct
import sys

import atheris

from msgbench.fuzz import atheris_fix  # noqa: F401  (before instrumenting: see its docstring)

# This implementation's folder only: the other workloads' Python programs use the same module
# names (frame, handler...), and the script's own folder (fuzz/) is no package.
IMPL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, IMPL_DIR)

with atheris.instrument_imports(include=["frame", "handler"]):
    import frame
    import handler
    from frame import END, END_FRAME, QUIT, REPLY, FrameDecoder, FrameError
    from handler import CLOSING, DRAINING, EchoHandler, ReadBuffer

MAX_BODY = 1 << 20
HEADER = struct.Struct(">BQ")


class Transport(asyncio.Transport):
    """Records what the handler sends; write() copies at once, as asyncio's transports do."""

    def __init__(self):
        super().__init__()
        self.out = bytearray()
        self.closed = self.eof_sent = False

    def write(self, data):
        if self.closed or self.eof_sent:
            raise AssertionError("write after close or write_eof")
        self.out += bytes(data)

    def write_eof(self):
        self.eof_sent = True

    def close(self):
        self.closed = True

    def abort(self):
        self.closed = True

    def is_closing(self):
        return self.closed

    def pause_reading(self):
        pass

    def resume_reading(self):
        pass

    def set_write_buffer_limits(self, high=None, low=None):
        pass

    def get_extra_info(self, name, default=None):
        return ("127.0.0.1", 40000) if name == "peername" else default


class Timer:
    def cancel(self):
        pass


class Home:
    """The worker: its read buffer, the cap, the log; timers are recorded, never fired."""

    def __init__(self, read_buffer):
        self.read_buffer = read_buffer
        self.max_body = MAX_BODY
        self.lines = []
        self.sessions = 0

    def session_opened(self, h):
        self.sessions += 1

    def session_closed(self, h):
        self.sessions -= 1

    def log(self, line):
        self.lines.append(line)

    def call_later(self, seconds, callback):
        return Timer()


def model(data, session):
    """(complete frames as (type, body), how it ends, where). Ends: 'eof' at a frame boundary,
    'cut' by EOF inside a frame, 'cap' at a length over the cap, and with the session rules
    'end' at END or QUIT: the server acts on their header, it does not wait for a body."""
    frames = []
    p = 0
    while True:
        if len(data) - p < HEADER.size:
            return frames, ("eof" if p == len(data) else "cut"), p
        kind, length = HEADER.unpack_from(data, p)
        if length > MAX_BODY:
            return frames, "cap", p
        if session and (kind == END or kind == QUIT):
            return frames, "end", p
        q = p + HEADER.size + length
        if q > len(data):
            return frames, "cut", p
        frames.append((kind, data[p + HEADER.size : q]))
        p = q


def replies(frames, how):
    """What the server must send for the session's frames."""
    out = bytearray()
    for _, body in frames:
        out += HEADER.pack(REPLY, len(body)) + body
    return out + END_FRAME if how == "end" else out


def chunk_sizes(data, top):
    """Read sizes 1..top taken from the input's bytes: deterministic, the fuzzer steers them."""
    return [1 + (b ^ (i * 7)) % top for i, b in enumerate(data[-8:])] or [top]


def serve(data, read_buffer, sizes):
    home = Home(read_buffer)
    transport = Transport()
    h = EchoHandler(home)
    h.connection_made(transport)
    pos = i = 0
    while pos < len(data) and not transport.closed:
        view = h.get_buffer(-1)
        n = min(len(view), sizes[i % len(sizes)], len(data) - pos)
        if n <= 0:
            raise AssertionError(f"get_buffer gave {len(view)} bytes")
        view[:n] = data[pos : pos + n]
        h.buffer_updated(n)
        pos += n
        i += 1
    if not transport.closed:
        h.eof_received()
    h.connection_lost(None)
    if home.sessions != 0:
        raise AssertionError("session opened and closed unevenly")
    return transport, home, h


def check_server(data, expected, how, cut_at, read_buffer, sizes):
    transport, home, h = serve(data, read_buffer, sizes)
    out = bytes(transport.out)
    if how == "cut" and len(out) > len(expected):
        # A frame cut by EOF may have been streamed: its header as REPLY and part of its body.
        partial = bytearray(data[cut_at:])
        partial[0] = REPLY
        if out[len(expected) :] != partial[: len(out) - len(expected)]:
            raise AssertionError("bytes after the replies are not the cut frame's")
        out = out[: len(expected)]
    if out != expected:
        raise AssertionError(f"sent {len(out)} bytes, expected {len(expected)} ({how})")
    if (how == "end") != transport.eof_sent:
        raise AssertionError(f"write_eof {transport.eof_sent} for a session ending by {how}")
    if (how == "cap") != (len(home.lines) == 1 and transport.closed):
        raise AssertionError(f"log {home.lines!r}, closed {transport.closed} ({how})")
    if how != "cap" and home.lines:
        raise AssertionError(f"logged {home.lines!r}")
    if h._state not in (DRAINING, CLOSING):
        raise AssertionError(f"state {h._state} after the end")


def check_decoder(data, frames, how, size, sizes):
    """The client's decoder on the same bytes: the same frames, then the same end."""
    decoder = FrameDecoder(MAX_BODY, size)
    got = []
    pos = i = 0
    try:
        while pos < len(data):
            view = decoder.writable()
            n = min(len(view), sizes[i % len(sizes)], len(data) - pos)
            if n <= 0:
                raise AssertionError("writable() is empty")
            view[:n] = data[pos : pos + n]
            got += decoder.commit(n)
            pos += n
            i += 1
        end = "eof" if decoder.at_boundary else "cut"
    except FrameError as e:
        got += e.frames
        end = "cap"
    if got != frames or end != how:
        raise AssertionError(f"decoder: {len(got)} frames, {end}; model {len(frames)}, {how}")


def TestOneInput(data: bytes):
    frames, how, cut_at = model(data, session=True)
    expected = replies(frames, how)
    big = chunk_sizes(data, 4096)
    small = chunk_sizes(data, 48)
    check_server(data, expected, how, cut_at, ReadBuffer(), big)
    check_server(data, expected, how, cut_at, ReadBuffer(256, 64), small)
    frames, how, _ = model(data, session=False)
    check_decoder(data, frames, how, frame.READ_SIZE, big)
    check_decoder(data, frames, how, 32, small)


def main():
    if handler.__file__ != os.path.join(IMPL_DIR, "handler.py"):
        raise SystemExit(f"handler imported from {handler.__file__}, not {IMPL_DIR}")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
