"""Report sections driven by workload data: [[sweeps]], targets `against = "fastest"`, known
deviations in the conformance matrix, [[ratio_charts]], [[matrices]] and absent implementations
(the seeds' claims: test_seeds.py). Small hand-made inputs: each assertion names what the
section must derive."""

from __future__ import annotations

from msgbench import stats
from msgbench.charts import fmt_num
from msgbench.report.inputs import ImplInfo, Outcome
from msgbench.report.model import Charts, Heading, Para, Table
from msgbench.report.sections import (
    conformance,
    matrices,
    ratio_charts,
    summary,
    sweeps,
    targets,
)


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


def test_a_target_held_by_each_languages_best_variant_against_another_implementation():
    wl = {
        **WL,
        "targets": [
            {
                "scenario": "seed",
                "metric": "wall_it",
                "best_of_languages": ["c", "go"],
                "against": "base",
                "max_ratio": 1.2,
            },
            {
                "scenario": "seed",
                "metric": "wall_it",
                "impls": ["go"],
                "against": "c",
                "max_ratio": 1.6,
            },
        ],
    }
    impls = [info("base", role="baseline"), info("c"), info("c-fast"), info("go", "go")]
    outcomes = {
        ("seed", "base"): ok(wall_it=[100, 101, 99, 100, 102]),
        ("seed", "c"): ok(wall_it=[300, 301, 299, 300, 302]),
        ("seed", "c-fast"): ok(wall_it=[105, 106, 104, 105, 107]),
        ("seed", "go"): ok(wall_it=[150, 149, 151, 150, 152]),
    }
    rows = cells(targets.targets_table(wl, outcomes, impls))
    by = {r[2]: r for r in rows}
    # The slower c host does not decide C's verdict: its faster variant does.
    assert by["best c: c-fast"][-1].startswith("met")
    assert by["best go: go"][-1].startswith("MISSED")
    # Against one implementation: go ÷ c = 0.5, within 1.6×.
    assert "c" in by["go"][3] and by["go"][-1].startswith("met")
    # A program that is no host (a language's own floor) is excluded by name.
    wl["targets"][0]["except"] = ["c-fast"]
    rows = cells(targets.targets_table(wl, outcomes, impls))
    assert rows[0][2] == "best c: c" and rows[0][-1].startswith("MISSED")
    # A language with no implementation measured in the run is said so, not dropped.
    wl["targets"][0]["best_of_languages"] = ["rust"]
    rows = cells(targets.targets_table(wl, outcomes, impls))
    assert rows[0][2] == "best rust" and rows[0][-1] == "not measured"


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


# ----------------------------------------------------------------- ratio charts and matrices

TIME = {"time_it": {"unit": "µs", "better": "lower", "label": "time per iteration"}}
PAIRS_WL = {
    "name": "w",
    "baseline": "base",
    "reference": "cpp",
    "scenarios": [{"name": n, "metrics": TIME} for n in ("obj", "bytes", "pipe", "lost")]
    + [
        {"name": f"m-{peer}", "metrics": TIME, "peer": peer}
        for peer in ("cpp", "rust", "py", "gone")
    ],
}
PAIRS_IMPLS = [
    info("base", role="baseline"),
    info("cpp", "cpp", "reference"),
    info("rust", "rust"),
    info("py", "python"),
]


def test_a_ratio_chart_shows_numerator_over_denominator_per_scenario_in_order(monkeypatch):
    seen = {}

    def fake_chart(labels, values, xlabel, color, **kwargs):
        seen.update(labels=labels, values=values, xlabel=xlabel, **kwargs)
        return "<svg/>"

    monkeypatch.setattr(ratio_charts.charts, "ratio_chart", fake_chart)
    wl = {
        **PAIRS_WL,
        "ratio_charts": [
            {
                "title": "seed redone",
                "description": "below 1: rust faster",
                "metric": "time_it",
                "numerator": "rust",
                "denominator": "cpp",
                # in the workload's order, not the run's; "nowhere" is not in this run
                "scenarios": ["pipe", "obj", "bytes", "nowhere", "lost"],
            }
        ],
    }
    rust_obj, cpp_obj = [9.0, 9.2, 9.4, 9.1, 9.3], [10.0, 10.2, 10.1, 10.3, 10.4]
    outcomes = {
        ("obj", "rust"): ok(time_it=rust_obj),
        ("obj", "cpp"): ok(time_it=cpp_obj),
        ("bytes", "rust"): ok(time_it=[20, 20.5, 21, 19.5, 20.2]),
        ("bytes", "cpp"): ok(time_it=[20.1, 20.4, 20.9, 19.8, 20.3]),
        ("pipe", "rust"): ok(time_it=[30, 31, 32, 31, 30.5]),
        ("pipe", "cpp"): ok(time_it=[20, 20.2, 20.1, 19.9, 20.0]),
        ("lost", "rust"): Outcome("fail", "round 1: wrong amount"),
        ("lost", "cpp"): ok(time_it=[1, 1, 1]),
    }
    blocks = ratio_charts.ratio_charts(wl, PAIRS_IMPLS, outcomes, with_charts=True)
    assert isinstance(blocks[0], Heading) and blocks[0].text == "seed redone"
    assert isinstance(blocks[1], Para) and "rust faster" in blocks[1].text
    table = next(b for b in blocks if isinstance(b, Table))
    assert table.headers == ["scenario", "rust", "cpp", "rust ÷ cpp", "reading"]
    rows = {r[0]: r for r in cells(table)}
    assert [r[0] for r in cells(table)] == ["pipe", "obj", "bytes", "lost"]
    expected = stats.ratio(rust_obj, cpp_obj)  # the machinery Targets and Seeds use
    assert rows["obj"][3] == f"{fmt_num(expected['ratio'])}×"
    assert rows["obj"][4].startswith("rust faster")
    assert rows["pipe"][4] == f"cpp faster, {fmt_num(31 / 20.0)}×"
    assert rows["bytes"][4] == "tie (CI contains 1)"
    assert rows["lost"][1] == "FAIL" and rows["lost"][3] == "—"
    assert rows["lost"][4] == "not measured"
    assert seen["labels"] == ["pipe", "obj", "bytes", "lost"]
    assert seen["values"]["obj"] == (expected["ratio"], *expected["ci95"])
    assert seen["missing"] == {"lost": "FAIL"}
    assert "below 1: rust faster" in seen["xlabel"]
    assert any(isinstance(b, Charts) for b in blocks)
    no_charts = ratio_charts.ratio_charts(wl, PAIRS_IMPLS, outcomes, with_charts=False)
    assert not any(isinstance(b, Charts) for b in no_charts) and no_charts[-1] == table


def test_a_ratio_of_a_higher_is_better_metric_reads_the_other_way():
    r = {"ratio": 0.5, "ci95": [0.4, 0.6]}
    higher = ratio_charts.reading(r, "rust", "cpp", "higher", "MB/s")
    assert higher == ("cpp better, 2.00×", "pass")
    assert ratio_charts.reading(r, "rust", "cpp", "lower", "MB/s")[0] == "rust better, 2.00×"
    assert ratio_charts.reading(r, "rust", "cpp", "lower", "µs")[0] == "rust faster, 2.00×"
    no_ci = {"ratio": 2.0, "ci95": None}
    assert ratio_charts.reading(no_ci, "a", "b", "lower", "µs")[0] == "b faster, 2.00× (no CI)"
    assert ratio_charts.reading(None, "a", "b", "lower", "µs") == ("not measured", "skip")


def test_a_matrix_has_a_row_per_client_and_a_column_per_server_with_ratios_to_the_diagonal():
    wl = {
        **PAIRS_WL,
        "matrices": [
            {"title": "pipe matrix", "metric": "time_it", "scenarios": ["m-cpp", "m-rust", "m-py"]}
        ],
    }
    floor = "the floor speaks another encoding"
    cpp_cpp, cpp_rust = [20, 20.5, 21, 20.2, 20.4], [22, 22.5, 23, 22.1, 22.4]
    outcomes = {
        ("m-cpp", "cpp"): ok(time_it=cpp_cpp),
        ("m-cpp", "rust"): ok(time_it=cpp_rust),
        ("m-cpp", "py"): ok(time_it=[600, 610, 620, 605, 615]),
        ("m-rust", "cpp"): ok(time_it=[23, 23.5, 24, 23.2, 23.4]),
        ("m-rust", "rust"): Outcome("fail", "round 2: bad amount"),
        ("m-rust", "py"): ok(time_it=[640, 650, 660, 645, 655]),
        ("m-py", "cpp"): ok(time_it=[880, 890, 900, 885, 895]),
        ("m-py", "rust"): ok(time_it=[881, 891, 901, 886, 896]),
        ("m-py", "py"): ok(time_it=[1500, 1510, 1490, 1505, 1495]),
    }
    for n in ("m-cpp", "m-rust", "m-py"):
        outcomes[(n, "base")] = Outcome("skipped", floor)
    blocks = matrices.matrices(wl, PAIRS_IMPLS, outcomes)
    assert blocks[0].text == "pipe matrix"
    (table,) = [b for b in blocks if isinstance(b, Table)]
    # skipped in every scenario: not a column of "skipped", named once in the caption
    assert table.headers == ["client ↓ / server →", "cpp", "rust", "py"]
    assert f"not in the matrix: base ({floor})" in table.caption
    assert "ratio to the row's diagonal" in table.caption
    rows = {r[0].text: r for r in table.rows}
    assert list(rows) == ["cpp client", "rust client", "py client"]
    cpp = rows["cpp client"]
    assert cpp[1].text.startswith("20.4") and cpp[1].sub.endswith("· diagonal")
    expected = stats.ratio(cpp_rust, cpp_cpp)
    assert cpp[2].text.startswith("22.4")
    assert f"· {fmt_num(expected['ratio'])}× [" in cpp[2].sub
    rust = rows["rust client"]
    assert rust[2].text == "FAIL" and "bad amount" in rust[2].sub  # the status, not a number
    assert rust[1].sub.endswith("no diagonal")  # its own pair failed: nothing to divide by
    assert rows["py client"][1].sub.startswith(f"[880, 900] · {fmt_num(890 / 1500)}× [")


def test_an_absent_implementation_is_one_short_row_not_a_wall_of_skipped():
    c = ImplInfo("c", "c", "", "", {}, "", absent="no official C library")
    scen = {"name": "obj", "primary": "time_it", "metrics": TIME}
    outcomes = {
        ("obj", "cpp"): ok(time_it=[10, 11, 12]),
        ("obj", "c"): Outcome("skipped", "absent: no official C library"),
    }
    wl = {**PAIRS_WL, "baseline": "", "reference": ""}
    table = summary.summary_table(wl, scen, TIME, [PAIRS_IMPLS[1]], outcomes, [c])
    last = table.rows[-1]
    assert last[1].text == "c" and last[3].text == "absent"
    assert "no official C library" not in last[3].sub  # the reason is said once, above
    assert last[3].span == len(table.headers) - 3
    results = {
        "verify": [
            {"workload": "w", "impl": "cpp", "passed": 1, "tests": {"test_a": "pass"}},
            {"workload": "w", "impl": "c", "absent": "no official C library", "tests": {}},
        ]
    }
    matrix, _ = conformance.matrix({"name": "w"}, [PAIRS_IMPLS[1], c], results)
    assert matrix.headers == ["test", "cpp"]  # no column of n/a for it
    assert "not applicable: c (absent" in matrix.caption
