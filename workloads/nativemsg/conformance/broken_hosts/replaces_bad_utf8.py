"""BUG: invalid UTF-8 silently becomes U+FFFD (Go's encoding/json, errors="replace")."""

import reference_host as h

h.decode_body = lambda body: h.json.loads(body.decode("utf-8", "replace"))
h.main()
