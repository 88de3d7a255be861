"""Make the host's modules importable by name: the tests import framing/protocol/host the way
main.py does (its folder first on sys.path, then the python host's for framing.py), without
packaging the implementation."""

import sys
from pathlib import Path

IMPL_DIR = Path(__file__).resolve().parent.parent
for folder in (IMPL_DIR.parent / "python", IMPL_DIR):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))
