"""BUG: serves one request and exits 0, as if every caller were sendNativeMessage."""

import reference_host as h


def serve(stream, out):
    body = h.read_frame(stream)
    if body is not None:
        h.write_frame(out, h.respond(body))
    return 0


h.serve = serve
h.main()
