"""The A/A control end to end on the fake lab: the floor is measured twice per scenario, its twin
interleaved in the same shuffled rounds; the run document carries the twin's rows and the
scenario's "aa" entry; the report shows the noise and never ranks or charts the twin."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from msgbench import aa, cli, pipeline, report, results, runner, toolchains
from msgbench import metrics as code_metrics
from msgbench.report import inputs
from msgbench.report.sections import noise


@pytest.fixture
def measured(fake_lab, tmp_path, monkeypatch):
    """A smoke run of floor and fast on `ping`, with the order of every trial recorded."""
    counter = tmp_path / "count"
    monkeypatch.setenv("FAKE_DRIVER_COUNTER", str(counter))
    impls = [fake_lab.impls["floor"], fake_lab.impls["fast"]]
    plan = [(fake_lab, [fake_lab.scenarios["ping"]], impls)]
    m = runner.measure(plan, "smoke", runner.Placement("none", (), ()), tmp_path / "logs", seed=5)
    return SimpleNamespace(w=fake_lab, plan=plan, impls=impls, m=m, counter=counter)


def run_document(run, monkeypatch) -> dict:
    """The run document as the pipeline assembles it (the machine's description stubbed)."""
    monkeypatch.setattr(results, "run_header", lambda *a: {"id": "r-aa", "profile": "smoke"})
    monkeypatch.setattr(toolchains, "python_packages", lambda: {})
    monkeypatch.setattr(code_metrics, "measure", lambda impl: {"workload": "toy", "impl": impl.id})
    bp = pipeline.BenchPlan(
        pipeline.BenchRequest("toy", profile="smoke"),
        run.plan,
        run.impls,
        runner.Placement("none", (), ()),
    )
    verdicts = {("toy", i.id): SimpleNamespace(ok=True, as_json=lambda: {}) for i in run.impls}
    return pipeline.assemble(bp, "r-aa", "start", "abc", False, run.m, verdicts)


def test_the_twin_runs_the_subjects_command_in_every_shuffled_round(measured):
    reps = measured.w.repetitions("smoke")
    lines = measured.counter.read_text().splitlines()
    rounds = [lines[i : i + 3] for i in range(0, len(lines), 3)]
    assert len(rounds) == reps + 1  # the warm-up round included
    floor_cmd = " ".join(measured.w.impls["floor"].argv())
    for r in rounds:  # the same program and argv, twice per round, anywhere in it
        assert sorted(r).count(floor_cmd) == 2
    assert len({tuple(line.split()[-1] for line in r) for r in rounds}) > 1  # reshuffled
    m = measured.m
    pair = {"subject": "floor", "twin": "floor-aa", "chosen_as": "baseline"}
    assert m.aa[("toy", "ping")] == pair
    assert len(m.docs[("toy", "ping", "floor-aa")]) == reps  # its warm-up is discarded too


def test_the_subject_is_the_floor_else_the_reference_else_the_first(fake_lab):
    floor, fast, broken = (fake_lab.impls[k] for k in ("floor", "fast", "broken"))
    assert aa.subject(fake_lab, [fast, floor]) == (floor, "baseline")
    assert aa.subject(fake_lab, [broken, fast]) == (broken, "first runnable")
    fake_lab.reference = "fast"
    assert aa.subject(fake_lab, [broken, fast]) == (fast, "reference")
    assert aa.subject(fake_lab, []) is None
    twin = aa.twin(floor)
    assert twin.id == "floor-aa" and twin.argv() == floor.argv() and twin.dir == floor.dir
    assert "floor-aa" not in fake_lab.impls  # no implementation folder, never built or verified


def test_the_run_document_carries_the_twins_rows_and_the_aa_entry(measured, monkeypatch):
    doc = run_document(measured, monkeypatch)
    twin_rows = [r for r in doc["results"] if r["impl"] == "floor-aa"]
    assert {r["metric"] for r in twin_rows} == {"p50", "p99"}
    assert all(r["aa_of"] == "floor" and r["status"] == "ok" for r in twin_rows)
    assert not any(r.get("aa_of") for r in doc["results"] if r["impl"] != "floor-aa")
    assert "floor-aa" not in {i["impl"] for i in doc["impls"]}  # not an implementation
    (scen,) = doc["workloads"][0]["scenarios"]
    control = scen["aa"]
    assert (control["subject"], control["twin"], control["chosen_as"]) == (
        "floor",
        "floor-aa",
        "baseline",
    )
    # the fake driver reports the same latency every trial: the A/A ratio is exactly 1
    assert control["ratio"]["p50"] == {"ratio": 1.0, "ci95": [1.0, 1.0]}
    assert json.loads(json.dumps(doc)) == doc  # plain JSON, as stored


def test_the_report_shows_the_noise_and_never_ranks_or_charts_the_twin(measured, monkeypatch):
    doc = run_document(measured, monkeypatch)
    wl = doc["workloads"][0]
    assert [i.id for i in inputs.impl_infos(doc, wl)] == ["floor", "fast"]
    assert ("ping", "floor-aa") not in inputs.outcomes(doc, "toy")
    assert inputs.twin_outcomes(doc, "toy")["ping"].rows["p50"]["aa_of"] == "floor"

    md = report.render_md(doc)
    noise_part = md.split("### Noise of this run", 1)[1].split("\n### ", 1)[0]
    assert "| ping | floor ÷ floor-aa 1.000× [1.000, 1.000]" in noise_part
    assert "Bonferroni" in noise_part and "the unit is the trial" in noise_part.lower()
    summary = md.split("\n### ping\n", 1)[1].split("\n### ", 1)[0]
    assert "floor-aa" not in summary
    # constant samples: fast is 1.2x the floor with a CI of its own width 0, far outside the
    # band of a perfect A/A: ranked apart, not tied
    assert "| 1 | floor" in summary and "| 2 | fast" in summary

    html = report.render_html(doc)  # charts included: the twin is in none of them
    assert "floor-aa" not in html.split("Noise of this run", 1)[1].split("</table>", 1)[1]


def test_the_console_summary_leaves_the_twin_out_and_says_the_aa_line(
    measured, monkeypatch, capsys
):
    doc = run_document(measured, monkeypatch)
    cli.print_summary(doc)
    out = capsys.readouterr().out
    assert "A/A floor ÷ floor-aa: 1.000× [1.000, 1.000], noise band [1.000, 1.000]" in out
    table_rows = [line for line in out.splitlines() if "│" in line]
    assert not any("floor-aa" in line for line in table_rows)


def test_an_assessment_uses_the_scenarios_band_and_falls_back_without_one():
    scen = {
        "name": "s",
        "primary": "t",
        "aa": {"subject": "a", "twin": "a-aa", "ratio": {"t": {"ratio": 1.0, "ci95": [0.9, 1.1]}}},
    }
    defs = {"t": {"better": "lower", "unit": "µs"}}
    impls = [inputs.ImplInfo(k, "c", "", "", {}, "") for k in ("a", "b")]
    row = {"median": 100.0, "ci95": [99.0, 101.0], "n": 5}
    outcomes = {
        ("s", "a"): inputs.Outcome(rows={"t": {**row, "samples": [99, 100, 100, 101, 100]}}),
        ("s", "b"): inputs.Outcome(rows={"t": {**row, "samples": [104, 105, 105, 106, 105]}}),
    }
    noisy = noise.assess(scen, defs, impls, outcomes)
    assert noisy.band == pytest.approx([0.9, 1 / 0.9])  # the far end, 0.9, sets it
    assert noisy.tiers == [["a", "b"]]  # 5% apart, inside a ±10% band: a tie
    quiet = noise.assess({**scen, "aa": None}, defs, impls, outcomes)
    assert quiet.band is None and quiet.tiers == [["a"], ["b"]]  # an old run: CI excludes 1
