"""The comm wire format (SPEC §1) and the client's incremental frame decoder.

A frame is one type byte, the body length as an unsigned 64-bit big-endian integer, then the
body. There is no magic, version or checksum, so the only defence against a hostile or broken
peer is the cap on the announced length, checked as soon as the 9 header bytes are in and
before anything is allocated for the body.
"""

from __future__ import annotations

import struct

DEFAULT = 0
TEXT = 1
REPLY = 2
END = 4
QUIT = 8
FLUSH = 16
STRING = 64
BINARY = 128

HEADER = struct.Struct(">BQ")
HEADER_SIZE = HEADER.size  # 9
DEFAULT_MAX_BODY = 64 << 20  # 64 MiB, the servers' default --max-body
MAX_LENGTH = (1 << 64) - 1  # the largest length the header can announce

END_FRAME = HEADER.pack(END, 0)
QUIT_FRAME = HEADER.pack(QUIT, 0)

# One read of the client's receive thread: a burst of 4 KiB replies is parsed per system call,
# and a body that does not fit is received straight into a buffer of its own.
READ_SIZE = 256 * 1024

_unpack_from = HEADER.unpack_from


class FrameError(Exception):
    """The byte stream cannot be a sequence of frames (length over the cap, EOF mid-frame).

    `frames` holds the frames completed by the same read before the fault: they are good.
    """

    frames: list = []


class BodyTooLarge(FrameError):
    def __init__(self, length: int, max_body: int) -> None:
        super().__init__(f"body length {length} is above the cap of {max_body} bytes")
        self.length = length
        self.max_body = max_body


def encode_header(kind: int, length: int) -> bytes:
    return HEADER.pack(kind, length)


def decode_header(data, offset: int = 0) -> tuple[int, int]:
    """(type, body length) of the header at `offset` of a bytes-like object."""
    return _unpack_from(data, offset)


def encode(kind: int, body=b"") -> bytes:
    """A whole frame as one bytes object (tests and small messages; the hot paths use iovecs)."""
    return HEADER.pack(kind, len(body)) + bytes(body)


def ends_session(kind: int) -> bool:
    """END and QUIT end a session (the server treats QUIT as END)."""
    return kind == END or kind == QUIT


class FrameDecoder:
    """Turns a byte stream into (type, body) frames, reading in place.

    The owner reads into `writable()` and reports how many bytes arrived with `commit(n)`,
    which returns the frames completed by them. Small frames are parsed out of one reusable
    buffer (a partial frame is moved to its front); a frame larger than that buffer gets a
    buffer of exactly its size, announced by a header that passed the cap, and the socket
    reads straight into it. Bodies are returned as `bytes`, owned by the caller.
    """

    __slots__ = ("_max_body", "_buf", "_view", "_end", "_big", "_big_view", "_big_kind", "_got")

    def __init__(self, max_body: int = DEFAULT_MAX_BODY, size: int = READ_SIZE) -> None:
        if size < HEADER_SIZE:
            raise ValueError("the read buffer must hold at least a header")
        self._max_body = max_body
        self._buf = bytearray(size)
        self._view = memoryview(self._buf)
        self._end = 0  # bytes of a partial frame at the front of _buf
        self._big: bytearray | None = None  # body of a frame larger than _buf
        self._big_view: memoryview | None = None
        self._big_kind = 0
        self._got = 0  # bytes of _big received so far

    def writable(self) -> memoryview:
        """Where the next read should land (never empty)."""
        if self._big_view is not None:
            return self._big_view[self._got :]
        return self._view[self._end :]

    @property
    def at_boundary(self) -> bool:
        """True if no partial frame is pending: end of file here is a clean end."""
        return self._end == 0 and self._big is None

    def commit(self, n: int) -> list[tuple[int, bytes]]:
        """Account for `n` bytes read into `writable()`; the frames they complete, in order.

        Raises BodyTooLarge for a header announcing more than the cap (with the frames
        before it in `.frames`).
        """
        if self._big is not None:
            self._got += n
            if self._got < len(self._big):
                return []
            frame = (self._big_kind, bytes(self._big))
            self._big = self._big_view = None
            return [frame]

        buf, view = self._buf, self._view
        end = self._end + n
        p = 0
        out: list[tuple[int, bytes]] = []
        append = out.append
        max_body = self._max_body
        while end - p >= HEADER_SIZE:
            kind, length = _unpack_from(buf, p)
            if length > max_body:
                e = BodyTooLarge(length, max_body)
                e.frames = out
                raise e
            start = p + HEADER_SIZE
            q = start + length
            if q > end:
                if q - p > len(buf):
                    # Too big for the read buffer: receive the body into its own buffer.
                    have = end - start
                    self._big = bytearray(length)
                    self._big_view = memoryview(self._big)
                    self._big_view[:have] = view[start:end]
                    self._big_kind = kind
                    self._got = have
                    self._end = 0
                    return out
                break
            append((kind, view[start:q].tobytes()))
            p = q
        rest = end - p
        if rest and p:
            # memoryview assignment memmoves overlapping ranges; bytearray slice assignment
            # would copy the source into a temporary first.
            view[:rest] = view[p:end]
        self._end = rest
        return out
