"""Atheris target `host` (workloads/nativemsg/fuzz/README.md): an input is the bytes the host
reads on stdin. host.serve, the loop main() runs, reads them through FrameReader from memory
and writes its replies to a list, until EOF or FramingError (the host's exit 1).

Checked per input: one reply per complete frame, and a clean end exactly when the input ends
at a frame boundary; every reply is a well-formed frame (4-byte little-endian length equal to
the body's, body at most 1 MiB, a JSON object in strict UTF-8 JSON) that says what SPEC §2
says of its request (pong, the echo of an equal value or an error, a fill of exactly N bytes
of x, an error for anything else); serving the input split into small reads (sizes taken
from the input) gives the same replies and the same end (the python host's fuzz_checks.py).
The model is the standard library's json (what the host falls back to where orjson refuses a
body), and echoes are compared as SPEC §2 says, numbers as doubles: orjson reads an integer
beyond 64 bits as a double.

Run: .venv/bin/python workloads/nativemsg/impls/python-orjson/fuzz/fuzz_host.py
[libFuzzer flags] [corpus dirs | files to replay].
"""

import os
import sys
from functools import partial

import atheris

from msgbench.fuzz import atheris_fix  # noqa: F401  (before instrumenting: see its docstring)

# This implementation's folder only: the other workloads' Python programs use the same module
# names (protocol, framing...), and the script's own folder (fuzz/) is no package.
IMPL_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, IMPL_DIR)
sys.path.insert(1, os.path.join(os.path.dirname(IMPL_DIR), "python"))  # framing.py, shared

with atheris.instrument_imports(include=["framing", "protocol", "host"]):
    import framing
    import host
    import protocol

sys.path.insert(1, os.path.join(os.path.dirname(IMPL_DIR), "python", "fuzz"))
import fuzz_checks  # noqa: E402  (the python host's checks: after the host's modules)

TestOneInput = partial(fuzz_checks.test_one_input, equal=fuzz_checks.same_json)


def main():
    # The modules must be this host's (protocol) and the python host's (framing, host), not
    # another workload's of the same name.
    python_dir = os.path.join(os.path.dirname(IMPL_DIR), "python")
    for module, folder in (
        (protocol, IMPL_DIR),
        (host, python_dir),
        (framing, python_dir),
    ):
        if os.path.dirname(os.path.abspath(module.__file__)) != os.path.abspath(folder):
            raise SystemExit(f"{module.__name__} imported from {module.__file__}, not {folder}")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
