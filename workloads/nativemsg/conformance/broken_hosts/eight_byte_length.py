"""BUG: writes an 8-byte length (a usize/size_t written whole): the bug that started this lab."""

import struct

import reference_host as h

h.encode_frame = lambda body: struct.pack("<Q", len(body)) + body
h.main()
