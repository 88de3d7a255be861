"""Native Messaging framing: a 4-byte length in native byte order, then that many bytes of JSON.

Reading parses frames out of one reusable buffer that large reads fill, so a burst of frames
costs one system call and a frame split over many reads is reassembled in place. Writing sends
header and body with one system call, so a reply is never seen half-written.

I/O goes through io.FileIO (raw, unbuffered read(2)/write(2) on a descriptor), never through
sys.stdin/sys.stdout (buffered text streams). io is loaded with the interpreter anyway, while
importing os would add about half a millisecond to every spawned host.
"""

import io
import struct

# "=": native byte order (what Chromium and Firefox use; little-endian here) with the standard
# 4-byte size and no alignment. Never "Q"/"L" (8 bytes on 64-bit) and never "!" (big-endian).
HEADER = struct.Struct("=I")
HEADER_SIZE = HEADER.size

MAX_REQUEST = 64 * 1024 * 1024  # browser -> host: Chromium refuses larger messages
MAX_REPLY = 1024 * 1024  # host -> browser: Chromium drops the port at 1,048,577

# 64 KiB is the default pipe capacity on Linux: one read can drain everything the browser has
# written so far, and a small ping costs no more than a single read.
READ_SIZE = 64 * 1024

# A buffer grown for a large frame is kept up to this size so a stream of large echoes does not
# reallocate per message; anything bigger (up to 64 MiB) is released once its frame is consumed.
KEEP_SIZE = 2 * 1024 * 1024 + HEADER_SIZE

_unpack_from = HEADER.unpack_from
_pack = HEADER.pack


class FramingError(Exception):
    """The byte stream is broken (oversized length, EOF inside a frame): stop serving."""


def fd_readinto(fd):
    """readinto(view) -> int for a file descriptor: one read(2) straight into the view."""
    return io.FileIO(fd, "rb", closefd=False).readinto


def fd_write(fd):
    """write(data) -> int for a file descriptor: one write(2), no buffering."""
    return io.FileIO(fd, "wb", closefd=False).write


class FrameReader:
    """Reads frames through `readinto(view) -> int` (0 means EOF), e.g. fd_readinto(0).

    read_frame() returns a memoryview of the next body, valid until the next call, or None when
    the stream ends exactly at a frame boundary. It raises FramingError for a length over the
    cap (as soon as the 4 header bytes are in, without waiting for the body) and for EOF inside
    a frame.
    """

    __slots__ = ("_readinto", "_size", "_max", "_buf", "_view", "_start", "_end")

    def __init__(self, readinto, size=READ_SIZE, max_body=MAX_REQUEST):
        self._readinto = readinto
        self._size = size
        self._max = max_body
        self._buf = bytearray(size)
        self._view = memoryview(self._buf)
        self._start = 0  # buf[start:end] holds bytes read but not yet returned
        self._end = 0

    def read_frame(self):
        while True:
            start = self._start
            end = self._end
            if end - start >= HEADER_SIZE:
                length = _unpack_from(self._buf, start)[0]
                stop = start + HEADER_SIZE + length
                if stop <= end and length <= self._max:
                    self._start = stop
                    return self._view[start + HEADER_SIZE : stop]
            if not self._fill():
                return None

    def _fill(self):
        """Read more bytes of the current frame; False at EOF on a frame boundary."""
        start = self._start
        avail = self._end - start
        if avail == 0:
            # The usual case between requests: rewind so one read can take the whole buffer,
            # and give back the memory of a huge frame already served.
            self._start = self._end = 0
            if len(self._buf) > KEEP_SIZE:
                self._buf = bytearray(self._size)
                self._view = memoryview(self._buf)
            got = self._readinto(self._view)
        else:
            length = -1
            need = HEADER_SIZE
            if avail >= HEADER_SIZE:
                length = _unpack_from(self._buf, start)[0]
                # Checked as soon as the header is complete: before a buffer is sized for the
                # body and before waiting for a body that may never come.
                if length > self._max:
                    raise FramingError(
                        f"frame length {length} exceeds the {self._max}-byte request cap"
                    )
                need += length
            if start + need > len(self._buf):
                self._make_room(need)
            got = self._readinto(self._view[self._end :])
        if not got:
            if got is None:  # FileIO.readinto on a non-blocking descriptor with no data
                raise FramingError("stdin is in non-blocking mode")
            if avail == 0:
                return False
            if length < 0:
                raise FramingError(f"EOF inside a frame header ({avail} of 4 bytes)")
            raise FramingError(f"EOF inside a frame body ({avail - HEADER_SIZE} of {length} bytes)")
        self._end += got
        return True

    def _make_room(self, need):
        """Move the partial frame to the front of a buffer that holds at least `need` bytes."""
        pending = bytes(self._view[self._start : self._end])  # at most one buffer's worth
        if need > len(self._buf):
            # Safe to size for the body: the length was checked against the cap first.
            self._buf = bytearray(need)
            self._view = memoryview(self._buf)
        self._buf[: len(pending)] = pending
        self._start = 0
        self._end = len(pending)


def write_frame(write, body):
    """Send one frame with a single write(2), e.g. write = fd_write(1).

    Header and body go out together so the reader never sees half a reply; copying the body
    behind the header costs far less than producing it (at most 1 MiB).
    """
    size = len(body)
    if size > MAX_REPLY:
        raise FramingError(f"reply of {size} bytes exceeds the {MAX_REPLY}-byte cap")
    data = _pack(size) + body
    written = write(data)
    if written != len(data):
        # A blocking pipe only takes part of a frame when a signal interrupts the write.
        rest = memoryview(data)
        while written != len(rest):
            if written is None:  # FileIO.write on a non-blocking descriptor that is full
                raise FramingError("stdout is in non-blocking mode")
            rest = rest[written:]
            written = write(rest)
