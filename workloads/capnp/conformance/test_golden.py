"""The golden values of SPEC §3.5 (golden.json), recomputed every run: by reference.py, by a
second generator written here with numpy's wrapping u32 arithmetic, and through the suite's
Cap'n Proto codec (a request encoded and decoded keeps its content)."""

from __future__ import annotations

import json
from pathlib import Path

import codec as C
import numpy as np
import pytest
import reference as R

GOLDEN = json.loads((Path(__file__).parent / "golden.json").read_text())


def xorshift_numpy(n: int) -> list[int]:
    s = np.array([0x1D2ACD47, 0x58CA3E14, 0xF563F232, 0x0BC76199], dtype=np.uint32)
    out = []
    with np.errstate(over="ignore"):
        for _ in range(n):
            t = s[0] ^ (s[0] << np.uint32(11))
            s[0], s[1], s[2] = s[1], s[2], s[3]
            s[3] = s[3] ^ (s[3] >> np.uint32(19)) ^ t ^ (t >> np.uint32(8))
            out.append(int(s[3]))
    return out


def test_generator_first_outputs():
    rng = R.Rng()
    mine = [rng.next() for _ in range(1000)]
    assert mine == xorshift_numpy(1000)
    assert [f"0x{v:08x}" for v in mine[:5]] == GOLDEN["first_outputs"]


@pytest.mark.parametrize("case", ["carsales", "catrank", "eval"])
def test_golden_digest_and_answers(case):
    g = GOLDEN[case]
    assert R.DIGEST_REQUESTS[case] == g["digest_requests"]
    assert R.digest(case) == g["sha256"]
    reqs = R.requests(case, 10)
    if case == "carsales":
        assert [len(q) for q, _ in reqs] == g["first_counts"]
        assert [a for _, a in reqs] == g["first_amounts"]
    elif case == "catrank":
        assert [len(q) for q, _ in reqs] == g["first_counts"]
        assert [a for _, a in reqs] == g["first_good"]
        # The server's answer makes the client's count come out right.
        assert [R.catrank_good(R.catrank_response(q)) for q, _ in reqs] == g["first_good"]
    else:
        assert [a for _, a in reqs] == g["first_values"]


@pytest.mark.parametrize("packed", [False, True], ids=["none", "packed"])
@pytest.mark.parametrize("case", ["carsales", "catrank", "eval"])
def test_codec_keeps_content(case, packed):
    import io

    for dialect in ("capnp", "cce"):
        wire = C.codec(dialect, packed)
        for request, answer in R.requests(case, 3):
            stream = io.BytesIO(wire.encode_request(case, request) * 2)
            for _ in range(2):
                back = wire.decode_request(case, wire.read(stream))
                assert R.cce_request(case, back) == R.cce_request(case, request)
            assert wire.read(stream) is None
            resp = io.BytesIO(
                wire.encode_response(
                    case, answer if case != "catrank" else R.catrank_response(request)
                )
            )
            got = wire.decode_response(case, wire.read(resp))
            if case == "catrank":
                assert R.cce_results(got) == R.cce_results(R.catrank_response(request))
            else:
                assert got == answer


def test_pack_matches_the_encodings_definition():
    # Two words: a sparse one and a zero run, then a dense word copied raw.
    data = bytes([0, 0, 0, 0, 5, 0, 0, 0]) + bytes(16) + bytes(range(1, 9))
    assert C.pack(data) == bytes([0x10, 5, 0x00, 1, 0xFF, 1, 2, 3, 4, 5, 6, 7, 8, 0])
    import io

    assert C.Unpacker(io.BytesIO(C.pack(data))).read_words(4) == data
