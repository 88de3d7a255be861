"""Every mode of the program (SPEC §4, §5) completes with every response checked and prints a
report that describes the run: object, bytes and the self-contained pipe, both reuse settings,
both compressions."""

from __future__ import annotations

import peers as P
import pytest

ITERATIONS = {"carsales": 40, "catrank": 20, "eval": 200}
MODES = [("object", "none"), ("bytes", "none"), ("bytes", "packed"), ("pipe", "none"),
         ("pipe", "packed")]  # fmt: skip


@pytest.mark.parametrize("reuse", ["reuse", "no-reuse"])
@pytest.mark.parametrize(("mode", "compression"), MODES, ids=[f"{m}-{c}" for m, c in MODES])
@pytest.mark.parametrize("case", ["carsales", "catrank", "eval"])
def test_mode_runs_and_reports(impl, case, mode, compression, reuse):
    iterations = ITERATIONS[case]
    e = P.run(impl, [case, mode, reuse, compression, str(iterations)])
    report = P.report_of(e)
    warmup = iterations // 20
    expected = {"case": case, "mode": mode, "reuse": reuse, "compression": compression,
                "iterations": iterations, "warmup": warmup,
                "checked": warmup + iterations}  # fmt: skip
    assert {k: report.get(k) for k in expected} == expected
    for key in ("setup_s", "warmup_s", "elapsed_s", "cpu_s"):
        assert isinstance(report.get(key), int | float) and report[key] >= 0, (
            f"{key}: {report.get(key)!r}"
        )
    assert report["elapsed_s"] > 0
    moved = report["request_bytes"], report["response_bytes"]
    if mode == "object":
        assert moved == (0, 0), f"object mode serialises nothing, but reports {moved} bytes"
    else:
        assert min(moved) > 0, f"{mode} mode reports {moved} bytes moved"
    if mode == "pipe":
        assert isinstance(report.get("server_cpu_s"), int | float), "pipe mode reports server_cpu_s"
    assert isinstance(report.get("program"), str) and report["program"]
    assert isinstance(report.get("library"), str)


def test_packed_moves_fewer_bytes_than_unpacked(impl):
    sizes = {}
    for compression in ("none", "packed"):
        report = P.report_of(P.run(impl, ["carsales", "bytes", "no-reuse", compression, "20"]))
        sizes[compression] = report["request_bytes"]
    assert sizes["packed"] < sizes["none"], f"packing did not shrink carsales requests: {sizes}"
