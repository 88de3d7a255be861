"""BUG: Python's json defaults: NaN/Infinity are accepted and written back (not JSON)."""

import json

import reference_host as h

h.decode_body = lambda body: json.loads(body.decode("utf-8"))
h.serialise = lambda reply: json.dumps(reply, ensure_ascii=False).encode()
h.main()
