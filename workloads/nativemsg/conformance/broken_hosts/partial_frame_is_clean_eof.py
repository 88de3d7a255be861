"""BUG: EOF inside a header or body is treated like a clean EOF (exit 0, no message)."""

import reference_host as h


def read_frame(stream):
    prefix = stream.read(4)
    if len(prefix) < 4:
        return None
    n = int.from_bytes(prefix, "little")
    h.check_length(n)
    body = stream.read(n)
    return body if len(body) == n else None


h.read_frame = read_frame
h.main()
