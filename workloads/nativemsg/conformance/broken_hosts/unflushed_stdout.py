"""BUG: replies sit in a buffered stdout, flushed only at exit (C stdio, Python on a pipe)."""

import reference_host as h


def write_frame(out, body):
    out.write(h.encode_frame(body))  # no flush: stays in the 8 KiB buffer


h.write_frame = write_frame
h.main()
