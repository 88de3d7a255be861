"""BUG: unpacks the length without checking the read: any EOF ends in a struct.error traceback."""

import struct

import reference_host as h

h.read_length = lambda stream: struct.unpack("<I", stream.read(4))[0]
h.main()
