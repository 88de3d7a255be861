"""The serve loop: read a frame, answer it, write the reply, repeat until stdin ends.

Each reply is written before the next read, so a caller that waits for every reply never
waits on a host that is itself waiting for input. Exit status: 0 when stdin ends at a frame
boundary, 1 when the stream breaks (EOF inside a frame, oversized length, read/write error).

The python-orjson host runs this same module: its main.py puts its own folder first on sys.path,
so `protocol` below is its orjson protocol, and passes its name for the stderr lines.
"""

import sys

from framing import FrameReader, FramingError, fd_readinto, fd_write, write_frame
from protocol import handle

STDIN = 0
STDOUT = 1  # raw writes only: sys.stdout is a buffered text stream and stays unused


def serve(reader, write):
    """Answer every frame from `reader` through `write`; return at clean EOF."""
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
            write_frame(write, reply)
        except OSError as e:
            raise FramingError(f"cannot write stdout: {e.strerror or e}") from None


NAME = "nativemsg-python"  # the prefix of the stderr line


def fail(message, name=NAME):
    """One line on stderr (the browser's log); stdout carries frames only. Returns status 1."""
    try:
        sys.stderr.write(f"{name}: {message}\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass  # stderr is closed or gone (None): the exit status still tells
    return 1


def main(name=NAME):
    """Serve stdin/stdout; return the process exit status. `name` prefixes the stderr line."""
    try:
        serve(FrameReader(fd_readinto(STDIN)), fd_write(STDOUT))
    except FramingError as e:
        return fail(e, name)
    except OSError as e:  # from setting up: fd 0 or 1 is not open (serve reports its own)
        return fail(f"cannot use stdin/stdout: {e.strerror or e}", name)
    except KeyboardInterrupt:
        return fail("interrupted", name)
    except Exception as e:  # a bug or out of memory: still one line and status 1, no traceback
        return fail(f"internal error: {e!r}", name)
    return 0
