"""BUG: prints a start-up banner to stdout (logs belong on stderr)."""

import sys

import reference_host as h

sys.stdout.buffer.write(b"native host ready\n")
h.main()
