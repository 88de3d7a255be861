"""BUG: insists on Chromium's argv (exactly one argument, an origin); Firefox's argv fails."""

import sys

import reference_host as h

if len(sys.argv) != 2 or not sys.argv[1].startswith("chrome-extension://"):
    sys.exit(f"usage: {sys.argv[0]} chrome-extension://<id>/")
h.main()
