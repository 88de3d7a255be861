"""Entry point: `<venv python> -E -S main.py [origin]`. Browsers pass the caller's origin (Chromium)
or the manifest path and extension id (Firefox); the host needs neither, so argv is ignored.

This folder holds protocol.py (orjson), which Python puts first on sys.path; framing.py and
host.py (the serve loop) are the python host's (../python), found after it: its protocol.py is
shadowed by this one, so host.py's `from protocol import handle` gets orjson's (protocol.py
loads the python host's as json_protocol for its slow path). orjson lives in
the venv's site-packages, which -S leaves off sys.path: rather than run site.py (about 10
million instructions, ~3 ms of every spawned host), main.py appends that one folder itself,
found the way site.py finds it for a venv: <venv>/bin/python -> <venv>/lib/pythonX.Y/site-packages.
"""

import os
import sys

sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "python"))

if sys.flags.no_site:
    _venv = sys.executable.rpartition("/bin/")[0]
    _version = sys.version_info
    sys.path.append(f"{_venv}/lib/python{_version[0]}.{_version[1]}/site-packages")

try:
    import host
except ImportError as e:  # orjson missing: one line on stderr and status 1, no traceback
    sys.stderr.write(f"nativemsg-python-orjson: cannot start: {e} (run scripts/setup.sh)\n")
    sys.exit(1)

if __name__ == "__main__":
    sys.exit(host.main("nativemsg-python-orjson"))
