"""The serve loop: read a frame, answer it, write the reply, repeat until stdin ends.

Each reply is written before the next read, so a caller that waits for every reply never
waits on a host that is itself waiting for input. Exit status: 0 when stdin ends at a frame
boundary, 1 when the stream breaks (EOF inside a frame, oversized length, read/write error).

The first large frame also tunes glibc's malloc (keep_heap): a 512 KiB echo allocates a few
MiB (the text as a 4-byte-per-character str, the reply), and glibc's defaults hand that memory
back to the kernel after each request (mmap'd blocks above its threshold are unmapped, and the
top of the heap is trimmed), so the next request faults every page in again: ~660 page faults
per 512 KiB echo (~40 once tuned), which on a busy machine cost more than the parse itself.
Small requests never pay for this (ctypes is imported only then): a spawned ping starts no
slower.
"""

import sys

from framing import FrameReader, FramingError, fd_readinto, fd_write, write_frame
from protocol import handle

STDIN = 0
STDOUT = 1  # raw writes only: sys.stdout is a buffered text stream and stays unused


# A frame this large (or larger) makes allocations above glibc's 128 KiB mmap threshold: a
# 32 KiB text becomes a 128 KiB str when one character needs 4 bytes.
LARGE_FRAME = 32 * 1024

# glibc mallopt(3) parameters (<malloc.h>) and the values set. Blocks up to 8 MiB come from the
# heap (a 1 MiB reply's text is at most 4 MiB as a str) and up to 32 MiB of free heap is kept;
# a 64 MiB request's buffer is still mmap'd and given back once served.
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_THRESHOLD = 8 * 1024 * 1024
_TRIM_THRESHOLD = 32 * 1024 * 1024


def keep_heap():
    """Have glibc keep freed memory for the next request; False where that is not possible."""
    try:
        import ctypes  # here, not at the top: about 2 ms, paid only once a large frame comes

        mallopt = ctypes.CDLL(None).mallopt
        mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
        return bool(
            mallopt(_M_MMAP_THRESHOLD, _MMAP_THRESHOLD)
            and mallopt(_M_TRIM_THRESHOLD, _TRIM_THRESHOLD)
        )
    except (ImportError, OSError, AttributeError):  # no ctypes, or a libc without mallopt
        return False


def serve(reader, write):
    """Answer every frame from `reader` through `write`; return at clean EOF."""
    read_frame = reader.read_frame
    small = True  # no large frame yet: the allocator is as glibc set it
    while True:
        try:
            body = read_frame()
        except OSError as e:
            raise FramingError(f"cannot read stdin: {e.strerror or e}") from None
        if body is None:
            return
        if small and len(body) >= LARGE_FRAME:
            small = False
            keep_heap()
        reply = handle(body)
        try:
            write_frame(write, reply)
        except OSError as e:
            raise FramingError(f"cannot write stdout: {e.strerror or e}") from None


def fail(message):
    """One line on stderr (the browser's log); stdout carries frames only. Returns status 1."""
    try:
        sys.stderr.write(f"nativemsg-python-orjson: {message}\n")
        sys.stderr.flush()
    except (AttributeError, OSError, ValueError):
        pass  # stderr is closed or gone (None): the exit status still tells
    return 1


def main():
    """Serve stdin/stdout; return the process exit status."""
    try:
        serve(FrameReader(fd_readinto(STDIN)), fd_write(STDOUT))
    except FramingError as e:
        return fail(e)
    except OSError as e:  # from setting up: fd 0 or 1 is not open (serve reports its own)
        return fail(f"cannot use stdin/stdout: {e.strerror or e}")
    except KeyboardInterrupt:
        return fail("interrupted")
    except Exception as e:  # a bug or out of memory: still one line and status 1, no traceback
        return fail(f"internal error: {e!r}")
    return 0
