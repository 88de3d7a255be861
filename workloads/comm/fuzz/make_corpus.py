"""Writes the `server` seed corpus: one client's bytes, built with the conformance suite's frame
helpers (frames.py) from the sessions its tests send (test_session.py, test_limits.py). Run again
after changing those:
    .venv/bin/python workloads/comm/fuzz/make_corpus.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))

import frames  # noqa: E402
from frames import HEADER, frame, pattern  # noqa: E402

from msgbench.fuzz import corpus  # noqa: E402

F = frames
seeds = {"empty-stream": b""}
for name, kind in [("default", F.DEFAULT), ("text", F.TEXT), ("flush", F.FLUSH),
                   ("string", F.STRING), ("binary", F.BINARY), ("reply", F.REPLY),
                   ("unknown-type-200", 200)]:  # fmt: skip
    seeds[f"echo-{name}-then-end"] = frame(kind, b"hello") + frame(F.END)
seeds |= {
    "three-then-end": b"".join(frame(F.DEFAULT, b) for b in (b"a", b"", b"ccc")) + frame(F.END),
    "three-then-quit": b"".join(frame(F.TEXT, b) for b in (b"a", b"bb")) + frame(F.QUIT),
    "eof-after-frame": frame(F.DEFAULT, b"whole"),
    "eof-inside-header-1": frame(F.DEFAULT, b"whole") + b"\x00",
    "eof-inside-header-4": frame(F.DEFAULT, b"whole") + b"\x00\x00\x00\x00",
    "eof-inside-body": frame(F.DEFAULT, b"whole") + frame(0, b"abcdef")[:12],
    "frames-after-end": frame(F.DEFAULT, b"a") + frame(F.END) + frame(F.DEFAULT, b"b"),
    "end-with-body": frame(F.END, b"ignored?") + frame(F.DEFAULT, b"x"),
    "pattern-1000": frame(F.DEFAULT, pattern(1, 2, 1000)) + frame(F.END),
    "many-small": b"".join(frame(F.DEFAULT, pattern(0, i, i % 17)) for i in range(60)),
    "length-beyond-cap": frame(F.DEFAULT, b"ok") + HEADER.pack(F.DEFAULT, 64 * 1024 * 1024 + 1),
    "length-2p63": HEADER.pack(F.DEFAULT, 2**63),
    "length-2p64-1": HEADER.pack(F.TEXT, 2**64 - 1) + b"body",
}
corpus.write_target("comm", "server", seeds)
