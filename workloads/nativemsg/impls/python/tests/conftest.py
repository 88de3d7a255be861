"""Make the host's modules importable by name: the tests import framing/protocol/host the way
main.py does (its folder first on sys.path), without packaging the implementation."""

import sys
from pathlib import Path

IMPL_DIR = Path(__file__).resolve().parent.parent
if str(IMPL_DIR) not in sys.path:
    sys.path.insert(0, str(IMPL_DIR))
