"""Every client × server pair (SPEC §4 "Cross-language"): each implementation's own client
program against the server under test, joined by two pipes as the driver joins them; the
report is the matrix (rows client=<id>, columns the server). The floor speaks only to itself."""

from __future__ import annotations

import peers as P
import pytest
from conftest import dialect_of

RUNS = [("carsales", False, 20), ("carsales", True, 20), ("catrank", False, 10),
        ("eval", True, 100)]  # fmt: skip


def test_pair_completes_and_checks_out(impl, client, record_property):
    record_property("client", client.id)
    if dialect_of(impl) != dialect_of(client):
        pytest.skip("n/a: the floor speaks CCE, every other implementation Cap'n Proto")
    for case, packed, iterations in RUNS:
        ce, se = P.pair(client, impl, case, packed, iterations)
        what = f"{case} {'packed' if packed else 'none'}"
        assert ce.returncode == 0, f"{what}: the {client.id} client: {ce.describe()}"
        assert se.returncode == 0, f"{what}: the server: {se.describe()}"
        total = iterations + iterations // 20
        assert ce.last_json().get("checked") == total, f"{what}: the client checked fewer"
        assert se.last_json().get("served") == total, f"{what}: the server served fewer"
