"""BUG: unbounded recursion on deep nesting overflows the C stack (SIGSEGV), like a recursive
parser in C/C++/Rust without a depth limit."""

import os
import signal
import sys

import reference_host as h

decode_body = h.decode_body


def unbounded_decode_body(body):
    try:
        return decode_body(body)
    except RecursionError:  # newer Pythons stop before the C stack ends: crash the same way
        os.kill(os.getpid(), signal.SIGSEGV)


sys.setrecursionlimit(1 << 30)  # Python 3.11's C json scanner then runs off the C stack
h.decode_body = unbounded_decode_body
h.main()
