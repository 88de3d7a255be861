"""Atheris target `host` (workloads/nativemsg/fuzz/README.md): an input is the bytes the host
reads on stdin. host.serve, the loop main() runs, reads them through FrameReader from memory
and writes its replies to a list, until EOF or FramingError (the host's exit 1).

Checked per input: one reply per complete frame, and a clean end exactly when the input ends
at a frame boundary; every reply is a well-formed frame (4-byte little-endian length equal to
the body's, body at most 1 MiB, a JSON object in strict UTF-8 JSON) that says what SPEC §2
says of its request (pong, the echo of an equal value or an error, a fill of exactly N bytes
of x, an error for anything else); serving the input split into small reads (sizes taken
from the input) gives the same replies and the same end. The checks are fuzz_checks.py,
shared with python-orjson's script.

Run: .venv/bin/python workloads/nativemsg/impls/python/fuzz/fuzz_host.py [libFuzzer flags]
[corpus dirs | files to replay].
"""

import os
import sys

import atheris

from msgbench.fuzz import atheris_fix  # noqa: F401  (before instrumenting: see its docstring)

# This implementation's folder only: the other workloads' Python programs use the same module
# names (protocol, framing...), and the script's own folder (fuzz/) is no package.
IMPL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, IMPL_DIR)

with atheris.instrument_imports(include=["framing", "protocol", "host"]):
    import framing

import fuzz_checks  # noqa: E402  (the checks, shared with python-orjson: after the host's modules)

TestOneInput = fuzz_checks.test_one_input  # echoes compared with ==: json keeps every digit


def main():
    if framing.__file__ != os.path.join(IMPL_DIR, "framing.py"):
        raise SystemExit(f"framing imported from {framing.__file__}, not {IMPL_DIR}")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
