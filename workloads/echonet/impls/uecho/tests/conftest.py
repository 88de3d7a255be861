"""The wrapper's modules are plain files run with their folder first on sys.path (node_main.py
imports `objects`, `transport`): the tests import them the same way."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
