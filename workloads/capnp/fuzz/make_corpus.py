"""Writes the `request` (Cap'n Proto) and `cce` (the floor's format) seed corpora.

An input is byte 0 = the case (0 carsales, 1 catrank, 2 eval; a target takes it modulo 3),
byte 1 = flags (bit 0: packed), then what a server reads on stdin. Seeds: the generator's own
requests as the conformance suite's codecs write them (codec.py; the three smallest of the
first 40, one alone and two in a stream, so that the fuzzer also crosses a message boundary)
and the suite's hostile messages (hostile.py). Run again after changing those:
    .venv/bin/python workloads/capnp/fuzz/make_corpus.py
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "conformance"))

import codec  # noqa: E402
import hostile  # noqa: E402
import reference as R  # noqa: E402

from msgbench.fuzz import corpus  # noqa: E402

CASES = ["carsales", "catrank", "eval"]


def header(case: str, packed: bool) -> bytes:
    return bytes([CASES.index(case), int(packed)])


def seeds_for(dialect: str, hostile_cases: dict) -> dict[str, bytes]:
    seeds = {}
    for case in CASES:
        for packed in (False, True):
            c = codec.codec(dialect, packed)
            small = sorted((c.encode_request(case, r) for r, _ in R.requests(case, 40)), key=len)
            mode = "packed" if packed else "plain"
            seeds[f"{case}-{mode}-one"] = header(case, packed) + small[0]
            seeds[f"{case}-{mode}-two"] = header(case, packed) + small[1] + small[2]
            seeds[f"{case}-{mode}-empty"] = header(case, packed)
    for name, (case, compression, make) in hostile_cases.items():
        seeds[f"hostile-{name}"] = header(case, compression == "packed") + make()
    return seeds


corpus.write_target("capnp", "request", seeds_for("capnp", hostile.CAPNP_CASES))
corpus.write_target("capnp", "cce", seeds_for("cce", hostile.CCE_CASES))
