"""Writes the `resp` seed corpus: every request stream of the conformance suite's differential
cases (cases.py), plus the limit probes of test_limits.py's kind. Run again after adding cases:
    .venv/bin/python workloads/redis/fuzz/make_corpus.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))

from cases import CASES  # noqa: E402

from msgbench.fuzz import corpus  # noqa: E402

seeds = dict(CASES)
seeds |= {
    "limit-multibulk-count-2p63": b"*9223372036854775807\r\n",
    "limit-bulk-length-2p63": b"*1\r\n$9223372036854775807\r\n",
    "limit-bulk-length-negative": b"*1\r\n$-2\r\n",
    "limit-bulk-length-beyond-512mb": b"*2\r\n$3\r\nGET\r\n$536870913\r\n",
    "limit-count-beyond-int": b"*4294967297\r\n$4\r\nPING\r\n",
    "limit-inline-no-newline": b"PING " + b"x" * 3000,
    "bad-missing-crlf-after-bulk": b"*1\r\n$4\r\nPINGxx",
    "bad-dollar-expected": b"*1\r\n+PING\r\n",
    "bad-inline-unbalanced-quotes": b'SET "a b\r\n',
    "inline-quoted-escapes": b'SET "a\\x41\\n" \'b c\'\r\nGET "a\\x41\\n"\r\n',
    "empty-lines": b"\r\n\n\r\nPING\r\n",
}
corpus.write_target("redis", "resp", seeds)
