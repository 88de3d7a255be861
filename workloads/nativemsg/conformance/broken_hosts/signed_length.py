"""BUG: the length is read as a signed 32-bit int, so 2^31 and above are negative and pass
`n > cap`; Python's read(-n) then reads until EOF (in C, a negative int becomes a huge size_t)."""

import struct

import reference_host as h


def read_length(stream):
    prefix = h.read_exact(stream, 4)
    if not prefix:
        return None
    if len(prefix) < 4:
        raise h.BrokenStream("EOF inside a length prefix")
    return struct.unpack("<i", prefix)[0]


h.read_length = read_length
h.main()
