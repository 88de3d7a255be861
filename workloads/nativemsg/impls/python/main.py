"""Entry point: `python -E -S main.py [origin]`. Browsers pass the caller's origin (Chromium) or
the manifest path and extension id (Firefox); the host needs neither, so argv is ignored.

Standard library only, so it runs under -S (no site-packages). The host modules sit next to
this file, which Python puts first on sys.path.
"""

import sys

import host

if __name__ == "__main__":
    sys.exit(host.main())
