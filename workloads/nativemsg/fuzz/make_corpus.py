"""Writes the `host` seed corpus: what a host reads on stdin, built from the conformance
suite's own requests (test_requests.py), bad bodies (test_bad_input.py) and broken streams
(SPEC §3). Run again after changing those:
    .venv/bin/python workloads/nativemsg/fuzz/make_corpus.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))

from hostproc import frame, header  # noqa: E402
from test_bad_input import BAD_BODIES  # noqa: E402
from test_requests import ECHO_VALUES  # noqa: E402

from msgbench.fuzz import corpus  # noqa: E402

PING = b'{"op":"ping"}'
seeds = {"ping": frame(PING), "ping-ping": frame(PING) * 2, "empty-stream": b""}
seeds |= {f"echo-{name}": frame(b'{"op":"echo","data":%s}' % v) for name, v in ECHO_VALUES}
seeds |= {f"bad-{name}-then-ping": frame(body) + frame(PING) for name, body in BAD_BODIES}
for n in (0, 22, 23, 24, 100, 1024 * 1024, 1024 * 1024 + 1, -1):
    seeds[f"fill-{n}"] = frame(b'{"op":"fill","bytes":%d}' % n)
seeds |= {
    "fill-not-integer": frame(b'{"op":"fill","bytes":1.5}'),
    "fill-huge": frame(b'{"op":"fill","bytes":1e400}'),
    "ping-extra-members": frame(b'{"op":"ping","x":[1,2,{"y":null}]}'),
    "deep-arrays-1000": frame(b'{"op":"echo","data":' + b"[" * 1000 + b"]" * 1000 + b"}"),
    "deep-unclosed": frame(b"[" * 4000),
    "length-above-64mib": header(64 * 1024 * 1024 + 1) + b"{}",
    "length-2p32-1": header(2**32 - 1),
    "eof-inside-prefix": frame(PING) + b"\x05\x00",
    "eof-inside-body": header(100) + b'{"op":"ping"',
    "zero-length-frame": header(0) + frame(PING),
}
corpus.write_target("nativemsg", "host", seeds)
