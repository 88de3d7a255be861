"""The serve loop: read a frame, answer it, write the reply, repeat until stdin ends.

Each reply is written before the next read, so a caller that waits for every reply never
waits on a host that is itself waiting for input. Exit status: 0 when stdin ends at a frame
boundary, 1 when the stream breaks (EOF inside a frame, oversized length, read/write error).
"""

import os

from framing import FrameReader, FramingError, fd_readinto, write_frame
from protocol import handle

STDIN = 0
STDOUT = 1  # written with os.writev: sys.stdout is a buffered text stream and stays unused
STDERR = 2


def serve(reader, out_fd=STDOUT):
    """Answer every frame from `reader` on `out_fd`; return at clean EOF."""
    read_frame = reader.read_frame
    while True:
        try:
            body = read_frame()
        except OSError as e:
            raise FramingError(f"cannot read stdin: {e.strerror or e}") from None
        if body is None:
            return
        reply = handle(body)
        try:
            write_frame(out_fd, reply)
        except OSError as e:
            raise FramingError(f"cannot write stdout: {e.strerror or e}") from None


def fail(message):
    """One line on stderr (the browser's log), unbuffered; stdout carries frames only."""
    try:
        os.write(STDERR, f"nativemsg-python: {message}\n".encode(errors="backslashreplace"))
    except OSError:
        pass  # no stderr to report to; the exit status still says it
    return 1


def main():
    """Serve stdin/stdout; return the process exit status."""
    try:
        serve(FrameReader(fd_readinto(STDIN)))
    except FramingError as e:
        return fail(e)
    except KeyboardInterrupt:
        return fail("interrupted")
    except Exception as e:  # a bug or out of memory: still one line and status 1, no traceback
        return fail(f"internal error: {e!r}")
    return 0
