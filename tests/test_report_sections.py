"""Report sections driven by workload data: [[sweeps]], [[published]] (a seed's claims with
verdicts computed from the run), targets `against = "fastest"`, and known deviations in the
conformance matrix. Small hand-made inputs: each assertion names what the section must derive."""

from __future__ import annotations

import pytest

from msgbench.report.inputs import ImplInfo, Outcome
from msgbench.report.model import Charts, Table
from msgbench.report.sections import conformance, published, sweeps, targets


def info(impl_id: str, language: str = "c", role: str = "") -> ImplInfo:
    return ImplInfo(impl_id, language, "", "", {}, role)


def row(samples: list[float]) -> dict:
    s = sorted(samples)
    return {"median": s[len(s) // 2], "ci95": [s[0], s[-1]], "samples": samples}


def ok(**metrics: list[float]) -> Outcome:
    return Outcome("ok", "", {m: row(v) for m, v in metrics.items()})


WL = {
    "name": "w",
    "baseline": "base",
    "reference": "",
    "scenarios": [
        {"name": f"disc-{n}", "metrics": {"p50": {"unit": "µs", "better": "lower"}}} for n in (1, 8)
    ]
    + [
        {
            "name": "seed",
            "metrics": {
                "wall_it": {"unit": "µs", "better": "lower"},
                "user_it": {"unit": "µs", "better": "lower"},
            },
        }
    ],
}
IMPLS = [info("base", role="baseline"), info("c"), info("go", "go"), info("py", "python")]


def cells(table: Table) -> list[list[str]]:
    return [[c.text for c in r] for r in table.rows]


def test_a_sweep_tabulates_and_charts_each_point_by_its_parameter(monkeypatch):
    seen = {}

    def fake_chart(impls, series, xlabel, *args, **kwargs):
        seen.update(series=series, xlabel=xlabel, logx=kwargs.get("logx"))
        return "<svg/>"

    monkeypatch.setattr(sweeps.charts, "sweep_chart", fake_chart)
    wl = {
        **WL,
        "sweeps": [
            {
                "title": "discovery",
                "metric": "p50",
                "xlabel": "nodes",
                "points": [["disc-1", 1], ["disc-8", 8]],
                "logx": True,
            }
        ],
    }
    outcomes = {
        ("disc-1", "c"): ok(p50=[50, 52, 54]),
        ("disc-8", "c"): ok(p50=[120, 130, 140]),
        ("disc-1", "go"): ok(p50=[60, 61, 62]),
        ("disc-8", "go"): Outcome("fail", "round 1: node died"),
    }
    blocks = sweeps.sweeps(wl, IMPLS, outcomes, with_charts=True)
    table = next(b for b in blocks if isinstance(b, Table))
    assert table.headers == ["implementation", "nodes = 1", "nodes = 8"]
    by_impl = {r[0].split()[0]: r for r in cells(table)}
    assert by_impl["c"][1].startswith("52") and by_impl["c"][2].startswith("130")
    assert by_impl["go"][2] == "FAIL"
    assert "base" not in by_impl  # not measured in these scenarios: no row
    assert seen["series"]["c"] == [(1.0, 52, 50, 54), (8.0, 130, 120, 140)]
    assert seen["series"]["go"] == [(1.0, 61, 60, 62)]  # the failed point is left out
    assert seen["xlabel"] == "nodes" and seen["logx"] is True
    assert any(isinstance(b, Charts) for b in blocks)


@pytest.mark.parametrize(
    "claim, samples, verdict",
    [
        ({"ratio": 0.625}, [0.5, 0.6, 0.7], "holds, and the seed's figure is inside the CI"),
        ({"ratio": 0.2}, [0.5, 0.6, 0.7], "holds in direction, not in size"),
        ({"ratio": 0.625}, [1.3, 1.4, 1.5], "reversed"),
        ({"ratio": 3.0}, [0.9, 1.0, 1.1], "tie in this run (CI contains 1)"),
        ({"min_ratio": 100}, [150, 160, 170], "holds"),
        ({"min_ratio": 100}, [40, 50, 60], "does not hold"),
        ({"min_ratio": 100}, [90, 100, 110], "undecided (CI crosses the bound)"),
    ],
)
def test_a_claims_verdict_follows_the_ci_of_this_runs_ratio(claim, samples, verdict):
    r = {"ratio": sorted(samples)[1], "ci95": [min(samples), max(samples)]}
    assert published.verdict(claim, r)[0] == verdict
    assert published.verdict(claim, None)[0] == "not measured"


def test_published_claims_are_computed_against_the_anchor_of_the_run():
    wl = {
        **WL,
        "published": [
            {
                "scenario": "seed",
                "relative_to": "c",
                "metrics": ["wall_it"],
                "source": "another machine",
                "claims": [
                    {"impl": "go", "metric": "wall_it", "ratio": 0.625, "text": "Go faster"},
                    {"impl": "py", "metric": "user_it", "min_ratio": 100, "text": "slow"},
                ],
            }
        ],
    }
    outcomes = {
        ("seed", "c"): ok(wall_it=[100, 101, 99, 100, 102], user_it=[10, 11, 9, 10, 10]),
        ("seed", "go"): ok(wall_it=[150, 149, 151, 150, 152], user_it=[20, 21, 19, 20, 20]),
        ("seed", "py"): ok(wall_it=[300, 310, 290, 300, 305], user_it=[50, 51, 49, 50, 52]),
    }
    blocks = published.published(wl, IMPLS, outcomes)
    run_table, claims = [b for b in blocks if isinstance(b, Table)]
    assert run_table.headers == ["implementation", "wall_it", "÷ c"]
    claim_rows = cells(claims)
    assert claim_rows[0][0].startswith("go") and claim_rows[0][-1] == "reversed"
    assert claim_rows[0][4].startswith("1.5")  # go ÷ c in this run, not the seed's 0.625
    assert claim_rows[1][-1] == "does not hold"  # 5× is short of the seed's 100×


def test_a_target_against_the_fastest_of_a_group_picks_the_best_median_of_the_run():
    wl = {
        **WL,
        "targets": [
            {
                "scenario": "seed",
                "metric": "wall_it",
                "impls": ["c", "go"],
                "against": "fastest",
                "among": ["c", "go"],
                "max_ratio": 1.2,
            }
        ],
    }
    outcomes = {
        ("seed", "c"): ok(wall_it=[100, 101, 99, 100, 102]),
        ("seed", "go"): ok(wall_it=[150, 149, 151, 150, 152]),
    }
    table = targets.targets_table(wl, outcomes)
    rows = {r[2]: r for r in cells(table)}
    assert "the best of c, go (c)" in rows["c"][3]
    assert rows["c"][-1].startswith("met") and rows["go"][-1].startswith("MISSED")


def test_known_deviations_show_as_such_not_as_failures():
    results = {
        "verify": [
            {
                "workload": "w",
                "impl": "ref",
                "passed": 2,
                "failed": 0,
                "skipped": 0,
                "deviations": 1,
                "tests": {"test_a": "pass", "test_b": "deviation", "test_c[client=c]": "pass"},
                "failures": [],
                "deviation_reasons": {"test_b": "the reference lacks it"},
                "clients": {"test_c[client=c]": "c"},
            }
        ]
    }
    impls = [info("ref", "python", "reference"), info("c")]
    table, messages = conformance.matrix({"name": "w"}, impls, results)
    states = {r[0]: r[1] for r in cells(table)}
    assert states["test_b"] == "deviation" and states["test_a"] == "pass"
    assert states["passed / failed / n/a / known deviations"] == "2 / 0 / 0 / 1"
    assert messages == [("ref: test_b (known deviation)", "the reference lacks it")]


def test_a_third_party_client_gets_its_own_row_in_the_interoperability_matrix():
    results = {
        "verify": [
            {
                "workload": "w",
                "impl": "c",
                "tests": {
                    "test_pair[client=c]": "pass",
                    "test_pychonet_reads": "pass",
                    "test_pychonet_discovers": "FAIL",
                },
                "failures": [],
                "clients": {
                    "test_pair[client=c]": "c",
                    "test_pychonet_reads": "pychonet",
                    "test_pychonet_discovers": "pychonet",
                },
            }
        ]
    }
    table = conformance.interop({"name": "w"}, [info("c")], results)
    rows = {r[0]: r[1] for r in cells(table)}
    assert rows == {"c client": "pass", "pychonet (third party)": "FAIL"}
