"""The seeds as data (seeds/*.toml) and the report's Seeds section (issue 15): the files are
checked against the workloads, each claim's verdict is computed from a run's samples, and
`msgbench seeds` plans exactly the scenarios the files name. Small hand-made runs: each
assertion names what the section must derive."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from msgbench import paths, pipeline, seeds, stats
from msgbench.registry import ManifestError
from msgbench.report import document, markdown
from msgbench.report.model import Table
from msgbench.report.sections import seeds as section

# The seed texts the files quote (outside the repository, where the lab was founded); the
# quotes are checked against them when they are at hand.
SEED_TEXTS = Path(os.environ.get("MSGBENCH_SEED_TEXTS", paths.ROOT.parent / "shared" / "seeds"))


def test_every_seed_file_loads_and_names_what_the_lab_has():
    loaded = seeds.load()
    assert [s.id for s in loaded] == ["000", "001", "002", "003", "004"]
    for s in loaded:
        if s.data.get("same_as"):
            continue
        for e in s.experiments:
            assert e["claims"], f"seed {s.id} {e['key']}: no claim to judge"
            assert e["figures"], f"seed {s.id} {e['key']}: no figure quoted"


def _normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.mark.skipif(not SEED_TEXTS.is_dir(), reason=f"the seed texts are not at {SEED_TEXTS}")
def test_every_quote_is_in_the_seeds_text():
    for s in seeds.load():
        text = _normal((SEED_TEXTS / s.data["text"]).read_text())
        for e in s.experiments:
            for f in e["figures"]:
                assert _normal(f["quote"]) in text, f"seed {s.id}: not in its text: {f['quote']}"


def _write(tmp_path: Path, body: str) -> Path:
    folder = tmp_path / "seeds"
    folder.mkdir(exist_ok=True)
    (folder / "900.toml").write_text(body)
    return folder


GOOD = """
id = "900"
title = "t"
author = "a"
venue = "v"
text = "900.txt"
[[experiments]]
key = "comm"
title = "t"
question = "q"
workload = "comm"
scenarios = ["test4-own"]
machine = "m"
method = "m"
rerun = "r"
table = { scenario = "test4-own", metrics = ["mb_per_s"], anchor = "cpp" }
[[experiments.figures]]
what = "w"
value = 1
unit = "MB/s"
quote = "q"
where = "w"
[[experiments.claims]]
says = "s"
kind = "ratio"
scenario = "test4-own"
metric = "mb_per_s"
impl = "rust"
against = "cpp"
seed = 0.9
"""


def test_a_well_formed_seed_file_loads(tmp_path):
    assert [s.id for s in seeds.load(_write(tmp_path, GOOD))] == ["900"]


@pytest.mark.parametrize(
    "change, message",
    [
        (('impl = "rust"', 'impl = "nosuch"'), "has no implementation nosuch"),
        (('metric = "mb_per_s"\nimpl', 'metric = "p99"\nimpl'), "has no metric p99"),
        (('scenario = "test4-own"\nmetric', 'scenario = "test4"\nmetric'), "not in the experiment"),
        (('kind = "ratio"', 'kind = "bigger"'), "kind must be one of"),
        (("seed = 0.9", ""), "`seed` is missing"),
        (('workload = "comm"', 'workload = "nosuch"'), "nosuch"),
        (('quote = "q"\n', ""), "lacks `quote`"),
    ],
)
def test_a_seed_file_that_names_what_the_lab_lacks_is_refused(tmp_path, change, message):
    old, new = change
    assert old in GOOD
    with pytest.raises(ManifestError, match=re.escape(message)):
        seeds.load(_write(tmp_path, GOOD.replace(old, new, 1)))


# --------------------------------------------------------------------------- verdict rules


def r(lo: float, point: float, hi: float) -> dict:
    return {"ratio": point, "ci95": [lo, hi]}


@pytest.mark.parametrize(
    "ratio_, band, n, expected",
    [
        (r(1.1, 1.2, 1.3), None, 5, "above"),
        (r(0.7, 0.8, 0.9), None, 5, "below"),
        (r(0.9, 1.0, 1.1), None, 5, "tie"),
        (r(1.02, 1.05, 1.08), [0.95, 1.0 / 0.95], 5, "tie"),  # inside the noise once widened
        (r(1.1, 1.2, 1.3), [0.95, 1.0 / 0.95], 5, "above"),
        (r(1.1, 1.2, 1.3), None, 2, "unknown"),  # too few trials for any verdict
        ({"ratio": 1.2, "ci95": None}, None, 5, "unknown"),
        (None, None, 5, "unknown"),
    ],
)
def test_a_ratio_is_placed_against_1_after_widening_by_the_noise_band(ratio_, band, n, expected):
    assert section.side(ratio_, band, n) == expected


def test_each_verdict_shows_the_interval_it_was_read_from():
    # a CI wholly below 1 that the run's ±20% A/A band widens across 1: the row must show
    # the widened interval, or "no difference" beside [0.84, 0.93] reads as a mistake
    ratio_, band = r(0.84, 0.86, 0.93), [1 / 1.2, 1.2]
    assert section.side(ratio_, band, 5) == "tie"
    assert section.widened_text(ratio_, band) == "A/A band ±20%: widened [0.700, 1.12]"
    assert section.widened_text(ratio_, None).startswith("no A/A band")
    assert section.widened_text(None, band) == ""


@pytest.mark.parametrize(
    "ratio_, seed, verdict, detail",
    [
        (r(0.55, 0.6, 0.7), 0.625, "holds", "the seed's figure lies in the CI"),
        (r(0.7, 0.8, 0.9), 0.625, "holds", "in direction"),
        (r(1.3, 1.4, 1.5), 0.625, "reversed", ""),
        (r(0.9, 1.0, 1.1), 3.0, "no difference outside the noise", "the seed's 3.00× lies out"),
        (r(0.5, 1.0, 2.0), 1.6, "no difference outside the noise", ""),  # 1.6 is inside
    ],
)
def test_a_ratio_claim_holds_reverses_or_ties(ratio_, seed, verdict, detail):
    v = section.ratio_verdict(ratio_, None, 5, seed)
    assert v.text == verdict
    assert v.detail.startswith(detail) if detail else v.detail == ""


@pytest.mark.parametrize(
    "ratio_, lo, hi, verdict",
    [
        (r(0.95, 1.0, 1.05), 0.9, 1.111, "holds"),
        (r(1.2, 1.3, 1.4), 0.9, 1.111, "does not hold"),
        (r(1.0, 1.1, 1.2), 0.9, 1.111, "undecided"),
        (r(150, 160, 170), 100, None, "holds"),
        (r(40, 50, 60), 100, None, "does not hold"),
    ],
)
def test_a_band_or_bound_claim_uses_the_targets_rule(ratio_, lo, hi, verdict):
    assert section.interval_verdict(ratio_, None, 5, lo, hi).text == verdict


def test_several_verdicts_make_one():
    V = section.Verdict
    assert section.overall([V("holds"), V("holds")]).text == "holds"
    assert section.overall([V("holds"), V("reversed")]).text == "reversed"
    tied = section.overall([V("holds"), V("no difference outside the noise")])
    assert tied.text == "no difference outside the noise" and "holds: 1 of 2" in tied.detail
    assert section.overall([]).text == "not measured"


# ---------------------------------------------------------------------------- the section

SCEN = "seed-10k"
METRICS = {
    "wall_it": {"unit": "µs", "better": "lower", "label": "wall time per iteration"},
    "mbps": {"unit": "MB/s", "better": "higher", "label": "throughput"},
}


def rows(impl: str, wall: list[float], mbps: list[float] | None = None) -> list[dict]:
    out = []
    for metric, samples in (("wall_it", wall), ("mbps", mbps)):
        if samples is None:
            continue
        s = stats.summarize(samples, METRICS[metric]["better"])
        out.append({"workload": "echonet", "scenario": SCEN, "impl": impl, "metric": metric,
                    "samples": samples, "status": "ok", **s})  # fmt: skip
    return out


def run_doc(claims: list[dict], extra_seed: dict | None = None) -> dict:
    experiment = {
        "key": "echonet", "title": "uEcho's benchmark", "question": "which is faster?",
        "workload": "echonet", "scenarios": [SCEN], "machine": "a Mac", "method": "time",
        "rerun": "here", "table": {"scenario": SCEN, "metrics": ["wall_it"], "anchor": "c"},
        "figures": [{"what": "Go ÷ C", "value": 1.6, "unit": "×", "quote": "1.6 times",
                     "where": "Go"}],
        "systems": [{"name": "uEcho for Go", "why": "not in a registry"}],
        "claims": claims,
        "reasons": [{"says": "one run each.", "evidence": [
            {"scenario": SCEN, "metric": "wall_it", "impl": "go", "spread": True},
            {"scenario": SCEN, "metric": "wall_it", "impl": "go", "against": "c"},
        ]}],
    }  # fmt: skip
    seed = {"id": "002", "title": "Rust vs Go vs C", "author": "someone", "venue": "a blog",
            "text": "002.txt", "experiments": [experiment]}  # fmt: skip
    impls = [("c", "c"), ("go", "go"), ("rust", "rust"), ("py", "python")]
    return {
        "run": {"id": "run-1"},
        "workloads": [{"name": "echonet", "baseline": "", "reference": "",
                       "scenarios": [{"name": SCEN, "metrics": METRICS}]}],
        "impls": [{"workload": "echonet", "impl": i, "language": lang} for i, lang in impls],
        "results": [
            *rows("c", [100, 101, 99, 100, 102], [10, 10.2, 9.9, 10, 10.1]),
            *rows("go", [150, 149, 151, 150, 152], [20, 20.1, 19.9, 20, 20.2]),
            *rows("rust", [100, 102, 98, 101, 99]),
            {"workload": "echonet", "scenario": SCEN, "impl": "py", "metric": "wall_it",
             "status": "fail", "reason": "conformance: 3 failed", "median": None},
        ],
        "seeds": [seed, *([extra_seed] if extra_seed else [])],
    }  # fmt: skip


CLAIMS = [
    {"says": "Go 1.6× faster than C", "kind": "ratio", "scenario": SCEN, "metric": "wall_it",
     "impl": "go", "against": "c", "seed": 0.625},
    {"says": "C faster than Rust", "kind": "faster", "scenario": SCEN, "metric": "wall_it",
     "faster": "c", "slower": "rust", "seed_difference": [20, 30]},
    {"says": "Go > C > Rust", "kind": "order", "scenario": SCEN, "metric": "wall_it",
     "order": ["go", "c", "rust"]},
    {"says": "Go moves more", "kind": "faster", "scenario": SCEN, "metric": "mbps",
     "faster": "go", "slower": "c"},
    {"says": "Python 100× C", "kind": "bound", "scenario": SCEN, "metric": "wall_it",
     "impl": "py", "against": "c", "min": 100},
]  # fmt: skip


def verdicts_of(doc: dict) -> dict[str, str]:
    return {row["says"]: row["verdict"] for row in section.summary_rows(doc)}


def test_each_claim_is_judged_on_the_runs_samples_not_the_seeds_figures():
    got = verdicts_of(run_doc(CLAIMS))
    assert got["Go 1.6× faster than C"] == "reversed"  # go ÷ c is 1.5 in this run
    assert got["C faster than Rust"] == "no difference outside the noise"
    assert got["Go > C > Rust"] == "reversed"  # its first pair is
    assert got["Go moves more"] == "holds"  # higher is better: go ÷ ... judged the right way
    assert got["Python 100× C"] == "not measured"  # its trials failed: no verdict invented


def test_the_section_quotes_the_seed_shows_the_rerun_and_links_by_anchor():
    doc = document.build(run_doc(CLAIMS), with_charts=False)
    text = markdown.render(doc)
    assert "## Seeds: the published comparisons, rerun" in text
    assert 'id="seed-002-echonet"' in text  # the README's links land here
    assert "“1.6 times”" in text  # the quote, as the seed's text has it
    assert "cannot be had here: not in a registry" in text
    tables = [b for b in doc.blocks if isinstance(b, Table)]
    rerun = next(t for t in tables if t.headers[0] == "implementation")
    go_row = next(r for r in rerun.rows if r[0].text.startswith("go"))
    assert go_row[2].text.startswith("1.5")  # ÷ c, from this run's medians
    claims = next(t for t in tables if t.headers[0] == "the seed says")
    assert any("difference of medians" in r[5].text for r in claims.rows)
    assert "trials from" in text and "n = 5" in text  # the spread evidence


def test_a_capture_of_the_same_article_joins_its_block():
    capture = {"id": "003", "title": "again", "author": "someone", "venue": "a second capture",
               "text": "003.txt", "same_as": "002"}  # fmt: skip
    text = markdown.render(document.build(run_doc(CLAIMS, capture), with_charts=False))
    assert "Seed 002 and 003: uEcho's benchmark" in text
    assert "Seed 003 is a second capture" in text


def test_a_run_without_seeds_has_no_section():
    doc = run_doc(CLAIMS)
    doc["seeds"] = []
    assert "Seeds:" not in markdown.render(document.build(doc, with_charts=False))


def test_for_run_keeps_the_seeds_whose_scenarios_ran_and_their_captures():
    loaded = seeds.load()
    kept = seeds.for_run(loaded, {("nativemsg", "browser-pingpong")})
    assert [d["id"] for d in kept] == ["000", "001"]
    assert seeds.for_run(loaded, {("nativemsg", "pingpong")}) == []


# ------------------------------------------------------------------------------ the plan


def test_msgbench_seeds_plans_exactly_the_named_scenarios():
    needed = seeds.needed(seeds.load())
    assert needed["redis"] == ["seed-setget"] and "test4-own" in needed["comm"]
    req = pipeline.BenchRequest(
        scenarios=tuple(f"{w}/{s}" for w, names in needed.items() for s in names),
        profile="smoke",
        seed_builds=True,
    )
    bp = pipeline.make_plan(req)
    planned = {w.name: [s.name for s in ss] for w, ss, _ in bp.plan}
    assert planned == needed
    impls = {w.name: {i.id for i in ii} for w, _, ii in bp.plan}
    assert {"c-seedbuild", "rust-seedbuild", "go-seedbuild"} <= impls["echonet"]
    assert "c-seedbuild" in impls["nativemsg"] and "mini-redis" in impls["redis"]
    assert not any(i.endswith("-seedbuild") for i in impls["capnp"] | impls["comm"])


def test_the_seeds_builds_run_only_in_msgbench_seeds():
    plain = pipeline.make_plan(pipeline.BenchRequest(workload="echonet", profile="full"))
    assert not any(i.seedbuild_of for _, _, ii in plain.plan for i in ii)


def test_a_qualified_scenario_names_one_workload_only():
    bp = pipeline.make_plan(pipeline.BenchRequest(scenarios=("comm/test4",), profile="smoke"))
    assert [(w.name, [s.name for s in ss]) for w, ss, _ in bp.plan] == [("comm", ["test4"])]
    with pytest.raises(pipeline.PlanError, match="unknown scenario 'nosuch' for comm"):
        pipeline.make_plan(pipeline.BenchRequest(scenarios=("comm/nosuch",), profile="smoke"))


def test_a_seeds_own_system_joins_only_a_plan_with_its_scenario():
    def impls_of(req: pipeline.BenchRequest) -> set[str]:
        return {i.id for _, _, impls in pipeline.make_plan(req).plan for i in impls}

    assert "mini-redis" not in impls_of(pipeline.BenchRequest(workload="redis", profile="quick"))
    with_seed = impls_of(pipeline.BenchRequest(scenarios=("redis/seed-setget",), profile="smoke"))
    assert {"mini-redis", "redis-server", "c", "rust"} <= with_seed
