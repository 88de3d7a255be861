"""Runs over time (issue 13): export, history, compare --fail-if-worse, published runs.

Every test builds small run documents in a throw-away store (results/, its SQLite and
published/ all under tmp_path), with samples drawn from fixed seeds.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from msgbench import comparison, export, history, paths, publish, report, stats, store
from msgbench.charts import fmt_num
from msgbench.cli import app

METRICS = {
    "p50": {"unit": "µs", "better": "lower", "label": "p50 latency", "role": "latency"},
    "ops": {"unit": "ops/s", "better": "higher", "label": "throughput", "role": "throughput"},
}


def draw(center: float, seed: int, n: int = 9, spread: float = 0.01) -> list[float]:
    """n samples around center with a relative spread (seeded: the same every time)."""
    rng = np.random.default_rng(seed)
    return [float(x) for x in center * (1 + spread * rng.standard_normal(n))]


def result(impl: str, metric: str, samples: list[float], **extra) -> dict:
    d = METRICS[metric]
    return {
        "workload": "toy",
        "scenario": "ping",
        "impl": impl,
        "metric": metric,
        "unit": d["unit"],
        "better": d["better"],
        **stats.summarize(samples, d["better"]),
        "samples": samples,
        "status": "ok",
        "reason": "",
        **extra,
    }


def run_doc(
    run_id: str,
    started: str,
    *,
    c: float = 100.0,
    floor: float = 50.0,
    seed: int = 1,
    profile: str = "quick",
    machine: dict | None = None,
    aa_ci: list[float] | None = None,
) -> dict:
    """A run of workload `toy`, scenario `ping`: implementations floor and c (p50 and ops),
    plus the A/A twin floor-aa when aa_ci (the twin's ratio CI) is given."""
    results = []
    for k, (impl, center) in enumerate((("floor", floor), ("c", c))):
        results.append(result(impl, "p50", draw(center, seed * 10 + k)))
        results.append(result(impl, "ops", draw(1e6 / center, seed * 10 + k + 5)))
    scenario = {"name": "ping", "primary": "p50", "metrics": METRICS}
    if aa_ci is not None:
        results.append(result("floor-aa", "p50", draw(floor, seed * 10 + 9), aa_of="floor"))
        scenario["aa"] = {
            "subject": "floor",
            "twin": "floor-aa",
            "ratio": {"p50": {"ratio": 1.0, "ci95": aa_ci}},
        }
    results.append(
        {**result("slow", "p50", [1.0]), "status": "fail", "reason": "conformance", "samples": []}
        | {"n": 0, "median": None, "ci95": None}
    )
    return {
        "run": {
            "id": run_id,
            "started": started,
            "finished": started,
            "profile": profile,
            "command": "msgbench bench toy",
            "commit": run_id.rsplit("-", 1)[-1] * 6,
            "dirty": False,
            "machine": machine or {"cpu_model": "Test CPU", "cores": 2, "memory_gib": 8.0},
        },
        "workloads": [{"name": "toy", "baseline": "floor", "scenarios": [scenario]}],
        "impls": [
            {"workload": "toy", "impl": i, "language": "c", "variant": ""}
            for i in ("floor", "c", "slow")
        ],
        "results": results,
    }


@pytest.fixture
def lab(tmp_path, monkeypatch):
    """An empty store: results/ (with its SQLite) and published/ under tmp_path."""
    monkeypatch.setattr(paths, "RESULTS", tmp_path / "results")
    monkeypatch.setattr(paths, "DATABASE", tmp_path / "results" / "msgbench.sqlite")
    monkeypatch.setattr(paths, "PUBLISHED", tmp_path / "published")
    return tmp_path


def cli(*args: str):
    return CliRunner().invoke(app, list(args), catch_exceptions=False)


# ------------------------------------------------------------------------------- export


def test_csv_has_one_row_per_sample_with_the_documented_columns():
    doc = run_doc("20260101-000000-aaa", "2026-01-01T00:00:00", aa_ci=[0.98, 1.02])
    rows = list(csv.DictReader(io.StringIO(export.export(doc, "csv"))))
    assert tuple(rows[0]) == export.COLUMNS
    measured = [r for r in doc["results"] if r["samples"]]
    assert len(rows) == sum(len(r["samples"]) for r in measured) == 5 * 9
    assert not [r for r in rows if r["impl"] == "slow"]  # failed: no samples, no rows
    twin = [r for r in rows if r["impl"] == "floor-aa"]
    assert len(twin) == 9 and {r["aa_of"] for r in twin} == {"floor"}
    assert {r["aa_of"] for r in rows if r["impl"] != "floor-aa"} == {""}
    c_p50 = [r for r in rows if (r["impl"], r["metric"]) == ("c", "p50")]
    assert [int(r["trial"]) for r in c_p50] == list(range(1, 10))
    assert [float(r["value"]) for r in c_p50] == doc["results"][2]["samples"]
    first = rows[0]
    assert (first["run_id"], first["profile"], first["dirty"]) == (
        doc["run"]["id"],
        "quick",
        "false",
    )
    assert (first["unit"], first["better"]) == ("µs", "lower")


def test_json_round_trips_the_samples_and_metric_filter():
    doc = run_doc("20260101-000000-aaa", "2026-01-01T00:00:00")
    doc["run"]["machine"]["fingerprint_id"] = "fp-1"
    rows = json.loads(export.export(doc, "json"))
    assert rows == export.sample_rows(doc)
    assert {r["machine_id"] for r in rows} == {"fp-1"}
    ops = json.loads(export.export(doc, "json", ("ops",)))
    assert {r["metric"] for r in ops} == {"ops"} and len(ops) == 2 * 9


def test_markdown_summary_has_ratio_to_floor_and_the_aa_line():
    doc = run_doc("20260101-000000-aaa", "2026-01-01T00:00:00", aa_ci=[0.97, 1.04])
    md = export.export(doc, "md")
    assert "### ping: p50 latency (lower is better)" in md
    row = next(line for line in md.splitlines() if line.startswith("| c |"))
    c, floor = doc["results"][2]["samples"], doc["results"][0]["samples"]
    expect = stats.ratio(c, floor)
    cells = [x.strip() for x in row.strip("|").split("|")]
    assert cells[3] == "9"
    assert cells[4] == f"{fmt_num(expect['ratio'])}×"  # about 2× for c at twice the floor
    assert "1 (floor)" in md
    assert "| slow | — | — | 0 |" in md and "conformance" in md
    assert "A/A control: `floor` ÷ `floor-aa` = 1.00× [0.97, 1.04]" in md
    assert "floor-aa |" not in md  # the twin is the A/A line, not a row
    assert "A/A control" not in export.export(run_doc("r", "2026"), "md")  # old runs: none
    assert "### ping: throughput (higher is better)" in export.export(doc, "md", ("ops",))


def test_export_command_writes_the_file(lab):
    store.save(run_doc("20260101-000000-aaa", "2026-01-01T00:00:00"))
    out = lab / "samples.csv"
    r = cli("export", "20260101", "--format", "csv", "--output", str(out))
    assert r.exit_code == 0, r.output
    assert out.read_text(encoding="utf-8").startswith(",".join(export.COLUMNS) + "\n")
    assert cli("export", "nope").exit_code == 2


# ------------------------------------------------------------------------------- history

FP_A = {"cpu_model": "Test CPU", "cores": 2, "memory_gib": 8.0, "fingerprint_id": "A"}
FP_B = {**FP_A, "fingerprint_id": "B"}


def test_history_orders_runs_by_start_time_and_labels_them_by_commit(lab):
    store.save(run_doc("20260103-000000-ccc", "2026-01-03T00:00:00", seed=3))
    store.save(run_doc("20260101-000000-aaa", "2026-01-01T00:00:00", seed=1))
    store.save(run_doc("20260102-000000-bbb", "2026-01-02T00:00:00", seed=2, profile="full"))
    page = history.build("toy")
    (h,) = page.scenarios
    assert [r.id for r in h.runs] == [
        "20260101-000000-aaa",
        "20260102-000000-bbb",
        "20260103-000000-ccc",
    ]
    assert [r.label for r in h.runs] == ["aaaaaaa\nquick", "bbbbbbb\nfull", "ccccccc\nquick"]
    assert set(h.points) == {"floor", "c"}  # failed and A/A rows are not lines
    # The full run sits between two quick ones: steps skip it (other profile, other sizes).
    assert {(s.impl, s.before, s.after) for s in h.steps} == {
        (i, "20260101-000000-aaa", "20260103-000000-ccc") for i in ("floor", "c")
    }


def test_history_flags_a_20_percent_step_on_one_machine_and_not_across_machines(lab):
    store.save(run_doc("20260101-000000-aaa", "2026-01-01T01:00:00", seed=1, machine=FP_A))
    store.save(run_doc("20260102-000000-bbb", "2026-01-02T01:00:00", seed=2, machine=FP_A))
    store.save(run_doc("20260103-000000-ccc", "2026-01-03T01:00:00", c=120.0, seed=3, machine=FP_A))
    # Another machine, 40% slower still: compared with nothing measured there before it.
    store.save(run_doc("20260104-000000-ddd", "2026-01-04T01:00:00", c=168.0, seed=4, machine=FP_B))
    page = history.build("toy", "ping")
    steps = {(s.impl, s.after): s for s in page.steps}
    later = ("20260102-000000-bbb", "20260103-000000-ccc")
    assert set(steps) == {(i, r) for i in ("floor", "c") for r in later}
    regression = steps[("c", "20260103-000000-ccc")]
    assert regression.flagged and regression.diff["verdict"] == "worse"
    assert regression.diff["ratio"] == pytest.approx(1.2, rel=0.03)
    assert regression.diff["level"] == pytest.approx(1 - 0.05 / 2)  # floor and c stepped
    assert not steps[("c", "20260102-000000-bbb")].flagged  # same distribution: a tie
    assert not steps[("floor", "20260103-000000-ccc")].flagged
    assert [s.after for s in page.steps if s.flagged] == ["20260103-000000-ccc"]
    path = history.write(page)
    assert path == lab / "results" / "history" / "toy.html"
    text = path.read_text(encoding="utf-8")
    assert "<svg" in text and "red ring" in text and "20260104-000000-ddd" in text


def test_history_reads_the_steps_against_the_wider_aa_band(lab):
    """A 20% step inside a run's A/A noise band (this run cannot resolve 20%) is a tie."""
    store.save(run_doc("20260101-000000-aaa", "2026-01-01T00:00:00", seed=1, aa_ci=[0.98, 1.02]))
    store.save(
        run_doc("20260102-000000-bbb", "2026-01-02T00:00:00", c=120.0, seed=2, aa_ci=[0.7, 1.3])
    )
    (step,) = [s for s in history.build("toy", impls=("c",)).steps]
    assert step.diff["band"] is not None and step.diff["band"][1] >= 1.25
    assert step.diff["verdict"] == "tie"


def test_runs_before_fingerprints_match_on_cpu_cores_and_memory():
    old = {"machine": {"cpu_model": "X", "cores": 2, "memory_gib": 8.0}, "profile": "quick"}
    new = {"machine": {"cpu_model": "X", "cores": 2, "memory_gib": 8.0, "fingerprint_id": "f"}}
    assert history.same_machine(old, new)
    assert not history.same_machine(old, {"machine": {**old["machine"], "memory_gib": 16.0}})
    assert not history.same_machine(new, {"machine": {**new["machine"], "fingerprint_id": "g"}})
    assert not history.comparable(old, {**old, "profile": "full"})


def test_history_command_errors_and_output(lab):
    assert cli("history", "toy").exit_code == 2  # nothing stored
    store.save(run_doc("20260101-000000-aaa", "2026-01-01T00:00:00"))
    assert cli("history", "toy", "nosuch").exit_code == 2
    r = cli("history", "toy", "--impl", "c")
    assert r.exit_code == 0, r.output
    assert "toy: 1 runs, 0 steps" in r.output
    assert (lab / "results" / "history" / "toy.html").is_file()


def test_report_links_to_the_history_page():
    doc = run_doc("20260101-000000-aaa", "2026-01-01T00:00:00")
    assert '<a href="../history/toy.html">' in report.render_html(doc)
    assert "`./msgbench history toy`" in report.render_md(doc)


# ------------------------------------------------------------------------------- compare


def test_compare_exit_codes_for_git_bisect(lab):
    store.save(run_doc("20260101-000000-aaa", "2026-01-01T00:00:00", seed=1))
    store.save(run_doc("20260102-000000-bbb", "2026-01-02T00:00:00", seed=2))  # same
    store.save(run_doc("20260103-000000-ccc", "2026-01-03T00:00:00", c=120.0, seed=3))
    store.save(run_doc("20260104-000000-ddd", "2026-01-04T00:00:00", c=80.0, seed=4))
    same = cli("compare", "20260101", "20260102", "--fail-if-worse", "5")
    assert same.exit_code == 0, same.output
    assert "no result significantly worse" in same.output
    slower = cli("compare", "20260101", "20260103", "--fail-if-worse", "5")
    assert slower.exit_code == 1, slower.output
    named = [line for line in slower.output.splitlines() if line.startswith("worse ")]
    assert len(named) == 1 and named[0].startswith("worse toy/ping/c/p50: 1.2")
    assert cli("compare", "20260101", "20260103", "--fail-if-worse", "30").exit_code == 0
    assert cli("compare", "20260101", "20260103").exit_code == 0  # no gate: a table only
    assert cli("compare", "20260101", "20260104", "--fail-if-worse", "5").exit_code == 0  # faster
    assert cli("compare", "nosuch", "20260103", "--fail-if-worse", "5").exit_code == 125
    none = cli("compare", "20260101", "20260103", "--metric", "nosuch", "--fail-if-worse", "5")
    assert none.exit_code == 125
    # RUN_B defaults to the latest run (what a bisect script measured last)
    assert cli("compare", "20260103", "--fail-if-worse", "5").exit_code == 0


def test_compare_reads_higher_is_better_and_the_aa_band():
    a = run_doc("20260101-000000-aaa", "2026-01-01T00:00:00", seed=1, aa_ci=[0.99, 1.01])
    b = run_doc("20260102-000000-bbb", "2026-01-02T00:00:00", c=125.0, seed=2)
    (row,) = comparison.compare(a, b, metrics=("ops",), impls=("c",))
    assert row.diff["verdict"] == "worse" and row.worse_by() == pytest.approx(0.2, abs=0.02)
    assert row.diff["band"] is None  # the runs' A/A control covers p50 only
    assert [r.key for r in comparison.regressions([row], 10)] == [("toy", "ping", "c", "ops")]
    assert comparison.regressions([row], 25) == []
    rows = comparison.compare(a, b, metrics=("all",))
    assert {r.metric for r in rows} == {"p50", "ops"} and {r.impl for r in rows} == {"floor", "c"}
    p50 = next(r for r in rows if r.key == ("toy", "ping", "c", "p50"))
    assert p50.diff["band"] == pytest.approx(stats.aa_band([0.99, 1.01]))  # A's: B has none
    assert [r.diff["level"] for r in rows] == [pytest.approx(1 - 0.05 / 2)] * 4  # 2 per question


# ------------------------------------------------------------------------------- publish


def test_publish_copies_a_run_that_a_fresh_clone_can_read(lab):
    doc = run_doc("20260101-000000-aaa", "2026-01-01T00:00:00", aa_ci=[0.98, 1.02])
    doc["impls"][0]["argv"] = [str(paths.ROOT / "build" / "cmake" / "bin" / "toy-floor")]
    store.save(doc)
    run_id = doc["run"]["id"]
    done = publish.publish(run_id[:10])
    folder = lab / "published" / run_id
    assert done.folder == folder and sorted(p.name for p in folder.iterdir()) == sorted(
        publish.FILES
    )
    text = (folder / "results.json").read_text(encoding="utf-8")
    assert str(paths.ROOT) not in text  # no path of this machine in a committed file
    doc["impls"][0]["argv"] = ["build/cmake/bin/toy-floor"]
    assert json.loads(text) == doc
    assert done.size == publish.folder_size(folder) <= publish.MAX_BYTES
    assert f"./msgbench report {run_id}" in (folder / "report.md").read_text(encoding="utf-8")
    # A fresh clone: no local store, only published/.
    shutil.rmtree(lab / "results")
    assert store.run_ids() == [run_id]
    assert store.load()["run"]["id"] == run_id
    r = cli("report", run_id)
    assert r.exit_code == 0, r.output
    assert (lab / "results" / run_id / "report.html").is_file()


def test_local_and_published_runs_are_listed_together_in_time_order(lab):
    store.save(run_doc("20260102-000000-bbb", "2026-01-02T00:00:00"))
    folder = lab / "published" / "20260101-000000-aaa"
    folder.mkdir(parents=True)
    old = run_doc("20260101-000000-aaa", "2026-01-01T00:00:00")
    (folder / "results.json").write_text(publish.document_text(old), encoding="utf-8")
    assert store.run_ids() == ["20260101-000000-aaa", "20260102-000000-bbb"]
    assert store.load("20260101")["results"] == old["results"]
    assert store.is_published("20260101-000000-aaa")
    assert [r.id for r in history.build("toy").runs] == store.run_ids()


def test_publish_refuses_a_run_over_the_size_rule(lab, monkeypatch):
    store.save(run_doc("20260101-000000-aaa", "2026-01-01T00:00:00"))
    monkeypatch.setattr(publish, "MAX_BYTES", 1000)
    with pytest.raises(publish.PublishError, match="more than"):
        publish.publish("20260101")
    assert not (lab / "published").exists()
    assert cli("publish", "20260101").exit_code == 2


REPO_PUBLISHED = paths.ROOT / "published"


@pytest.mark.parametrize(
    "folder",
    sorted(p for p in REPO_PUBLISHED.iterdir() if p.is_dir()) if REPO_PUBLISHED.is_dir() else [],
    ids=lambda p: p.name,
)
def test_every_committed_published_run_keeps_the_size_rule(folder: Path):
    files = publish.files_of(folder.name)
    assert sorted(p.name for p in folder.iterdir()) == sorted(files)
    assert publish.folder_size(folder) <= publish.MAX_BYTES
    doc = json.loads((folder / files[0]).read_text(encoding="utf-8"))
    assert doc["run"]["id"] == folder.name  # the store finds a published run by its folder


@pytest.mark.parametrize("command", ["export", "history", "compare", "publish"])
def test_new_commands_have_help(command):
    r = cli(command, "--help")
    assert r.exit_code == 0 and "Usage" in r.output


def test_published_documents_name_no_soak_scratch_folder():
    """A soak's scratch folder has a random absolute name (soak.fd_kinds keyed descriptors by
    it before issue 13): publish writes it `<soak>/`, in keys as in values."""
    scratch = f"{tempfile.gettempdir()}/msgbench-soak-ab12_x"
    doc = {
        "fd_kinds_end": {f"{scratch}/server.log": 2, "socket": 3},
        "note": f"{scratch}/proxy.err",
    }
    assert publish.relative(doc) == {
        "fd_kinds_end": {"<soak>/server.log": 2, "socket": 3},
        "note": "<soak>/proxy.err",
    }
