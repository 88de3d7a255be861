"""`msgbench bench` end to end on the real nativemsg workload (smoke profile, two hosts).

Proves the whole pipeline on real binaries: verify → measure with the driver → results.json
in the documented schema → SQLite → report.html and report.md. Figures are not asserted
(speed is for `msgbench bench`, not tests); their presence, shape and consistency are.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from msgbench import paths, registry


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    w = registry.workload("nativemsg")
    needed = [w.impls["baseline"], w.impls["python"]]
    if not all(i.built for i in needed) or not os.path.exists(w.driver()[0]):
        pytest.fail("nativemsg baseline/python/driver not built: run `make build` first")
    results = tmp_path_factory.mktemp("results")
    env = {**os.environ, "MSGBENCH_RESULTS": str(results)}
    r = subprocess.run(
        [
            str(paths.ROOT / "msgbench"),
            "bench",
            "nativemsg",
            "--impl",
            "python",
            "--scenario",
            "pingpong",
            "--scenario",
            "echo-1k",
            "--profile",
            "smoke",
            "--no-build",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    (run_dir,) = [p for p in results.iterdir() if p.is_dir()]
    return run_dir, json.loads((run_dir / "results.json").read_text()), r.stdout


def test_results_json_has_the_documented_schema(run):
    _, doc, _ = run
    assert set(doc) >= {"run", "results", "verify", "metrics"}
    header = doc["run"]
    assert set(header) >= {
        "id",
        "started",
        "commit",
        "dirty",
        "profile",
        "machine",
        "toolchains",
        "flags",
        "placement",
    }
    assert header["placement"]["mode"] == "split"
    assert header["placement"]["driver_cpus"] != header["placement"]["impl_cpus"]
    assert header["flags"]["c"]["cflags"], "the C flags of profiles.toml are recorded"
    for row in doc["results"]:
        assert set(row) >= {
            "workload",
            "scenario",
            "impl",
            "metric",
            "unit",
            "better",
            "n",
            "median",
            "ci95",
            "samples",
            "status",
            "reason",
        }


def test_baseline_is_measured_even_when_not_asked_for(run):
    _, doc, _ = run
    ok = [r for r in doc["results"] if r["status"] == "ok"]
    measured = {(r["scenario"], r["impl"]) for r in ok if not r.get("aa_of")}
    assert measured == {(s, i) for s in ("pingpong", "echo-1k") for i in ("baseline", "python")}
    # ... and measured twice: the A/A control of each scenario is the floor and its twin
    twins = {(r["scenario"], r["impl"], r["aa_of"]) for r in ok if r.get("aa_of")}
    assert twins == {(s, "baseline-aa", "baseline") for s in ("pingpong", "echo-1k")}
    for scenario in doc["workloads"][0]["scenarios"]:
        assert scenario["aa"]["subject"] == "baseline" and scenario["aa"]["ratio"]


def test_every_result_is_consistent_with_its_samples(run):
    _, doc, _ = run
    for r in doc["results"]:
        assert r["n"] == len(r["samples"]) == registry.workload("nativemsg").repetitions("smoke")
        lo, hi = r["ci95"]
        assert min(r["samples"]) <= lo <= r["median"] <= hi <= max(r["samples"])


def test_cpu_per_message_and_rss_are_measured(run):
    _, doc, _ = run
    cpu = [r for r in doc["results"] if r["metric"] == "cpu_per_op"]
    rss = [r for r in doc["results"] if r["metric"] == "rss"]
    assert cpu and all(r["median"] > 0 for r in cpu)
    assert rss and all(r["median"] > 100 for r in rss)  # every process has > 100 KiB resident


def test_verify_and_metrics_are_in_the_run(run):
    _, doc, _ = run
    assert {v["impl"] for v in doc["verify"]} == {"baseline", "python"}
    assert all(v["failed"] == 0 and v["passed"] > 0 for v in doc["verify"])
    assert all(m["nloc"] > 0 and m["functions"] > 0 for m in doc["metrics"])


def test_report_files_are_written_and_self_contained(run):
    run_dir, doc, stdout = run
    html = (run_dir / "report.html").read_text()
    assert "<svg" in html and 'src="http' not in html and 'href="http' not in html
    assert (run_dir / "report.md").exists()
    assert "report.html" in stdout
    assert (run_dir / "logs").is_dir()
