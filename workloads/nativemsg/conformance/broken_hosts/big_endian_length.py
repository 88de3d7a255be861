"""BUG: big-endian ("network order") lengths in both directions instead of native order."""

import struct

import reference_host as h


def read_length(stream):
    prefix = h.read_exact(stream, 4)
    if not prefix:
        return None
    if len(prefix) < 4:
        raise h.BrokenStream("EOF inside a length prefix")
    return struct.unpack(">I", prefix)[0]


h.read_length = read_length
h.encode_frame = lambda body: struct.pack(">I", len(body)) + body
h.main()
