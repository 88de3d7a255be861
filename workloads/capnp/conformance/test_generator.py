"""Every language's client produces the SPEC's request stream (§3): the suite's server decodes
each request, and the CCE digest of the first ones equals golden.json (which test_golden.py
recomputes). The client's report describes the run (§5)."""

from __future__ import annotations

import json
from pathlib import Path

import peers as P
import pytest
import reference as R

GOLDEN = json.loads((Path(__file__).parent / "golden.json").read_text())
# Enough iterations that warm-up + timed requests cover the digest's requests.
ITERATIONS = {"carsales": 20, "catrank": 10, "eval": 80}


@pytest.mark.parametrize("packed", [False, True], ids=["none", "packed"])
@pytest.mark.parametrize("case", ["carsales", "catrank", "eval"])
def test_client_sends_the_spec_requests(impl, dialect, case, packed):
    iterations = ITERATIONS[case]
    warmup = iterations // 20
    served = P.serve_client(impl, case, packed, iterations, dialect,
                            digest_requests=R.DIGEST_REQUESTS[case])  # fmt: skip
    assert served.ended.returncode == 0, served.ended.describe()
    assert served.requests == warmup + iterations, (
        f"the client sent {served.requests} requests, not warm-up {warmup} + {iterations}"
    )
    assert served.digest == GOLDEN[case]["sha256"], (
        f"the first {R.DIGEST_REQUESTS[case]} {case} requests differ from SPEC §3 "
        "(their CCE digest is not golden.json's)"
    )
    report = served.ended.last_json()
    expected = {"case": case, "mode": "client", "reuse": "no-reuse",
                "compression": "packed" if packed else "none", "iterations": iterations,
                "warmup": warmup, "checked": warmup + iterations}  # fmt: skip
    assert {k: report.get(k) for k in expected} == expected
    assert report["request_bytes"] > 0 and report["response_bytes"] > 0
