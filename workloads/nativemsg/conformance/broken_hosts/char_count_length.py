"""BUG: the length prefix counts characters (len of the decoded text), not bytes."""

import struct

import reference_host as h

h.encode_frame = lambda body: struct.pack("<I", len(body.decode("utf-8"))) + body
h.main()
