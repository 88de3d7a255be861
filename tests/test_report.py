"""msgbench.report and msgbench.charts on the sample run in tests/fixtures/results_sample.json:
a nativemsg run stored before metric roles existed (its metric definitions carry no `role`), so
these tests also hold the report's fallback for old runs. The fixtures of every workload, with
roles: test_report_workloads.py."""

from __future__ import annotations

import copy
import html as htmllib
import json
import re
from pathlib import Path

import pytest

from msgbench import charts, report, stats
from msgbench.charts import ChartImpl, fmt_interval, fmt_num, fmt_value
from msgbench.report.sections import scenario_charts

FIXTURE = Path(__file__).parent / "fixtures" / "results_sample.json"
IMPLS = ["baseline", "c", "cpp", "rust", "go", "python"]
SCENARIOS = ["pingpong", "pingpong-spawn", "echo-1k", "echo-64k", "echo-512k"]


@pytest.fixture(scope="module")
def sample() -> dict:
    return json.loads(FIXTURE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def html(sample: dict) -> str:
    return report.render_html(sample)  # charts included: a few seconds, rendered once


@pytest.fixture(scope="module")
def md(sample: dict) -> str:
    return report.render_md(sample)


@pytest.fixture
def no_charts(monkeypatch):
    """Reports without charts, for tests that only look at tables (fast)."""
    monkeypatch.setattr(scenario_charts, "scenario_charts", lambda *a, **k: [])


def rows_of(sample: dict, scenario: str, metric: str) -> dict[str, dict]:
    return {
        r["impl"]: r
        for r in sample["results"]
        if r["scenario"] == scenario and r["metric"] == metric and r["status"] == "ok"
    }


def html_section(html: str, anchor: str) -> str:
    """The HTML from the heading with id=anchor to the next heading of the same or higher level."""
    m = re.search(rf'<h([23]) id="{re.escape(anchor)}">', html)
    assert m, anchor
    level = int(m.group(1))
    end = re.search(rf"<h[2-{level}][ >]", html[m.end() :])
    return html[m.start() : m.end() + end.start()] if end else html[m.start() :]


def md_section(md: str, title: str) -> str:
    start = md.index(f"\n### {title}\n")
    end = md.find("\n### ", start + 5)
    return md[start : end if end > 0 else len(md)]


def html_row(section: str, impl: str, table: int = 0) -> str:
    """The text of the first row for `impl` in the section's table-th table (tags stripped)."""
    tables = re.findall(r"<table.*?</table>", section, flags=re.S)
    for tr in re.findall(r"<tr>.*?</tr>", tables[table], flags=re.S):
        text = htmllib.unescape(re.sub(r"<[^>]+>", " ", tr))
        cells = text.split()
        if len(cells) > 1 and (cells[0] == impl or (len(cells) > 2 and cells[1] == impl)):
            return " ".join(cells)
    raise AssertionError(f"no row for {impl}")


def md_row(section: str, impl: str) -> str:
    for line in section.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 2 and (cells[0].split(" ")[0] == impl or cells[1].split(" ")[0] == impl):
            return line
    raise AssertionError(f"no row for {impl}")


# --------------------------------------------------------------------------- self-contained


def test_html_is_self_contained(html: str):
    assert html.startswith("<!DOCTYPE html>")
    assert "<svg" in html
    assert html.count("<svg") >= 2 * len(SCENARIOS)
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, flags=re.I)
    assert not re.search(r"url\(\s*['\"]?\s*(https?:)?//", html, flags=re.I)
    assert "<script" not in html.lower()
    assert "<link" not in html.lower()
    assert "@import" not in html
    assert "<!DOCTYPE svg" not in html and "<?xml" not in html  # inline, not documents


def test_chart_ids_are_unique_across_the_page(html: str):
    ids = re.findall(r'\bid="([^"]+)"', html)
    assert len(ids) == len(set(ids))
    for ref in set(re.findall(r'href="#([^"]+)"', html)):
        assert ref in ids, ref


def test_every_impl_and_scenario_is_shown(html: str, md: str):
    for name in IMPLS + SCENARIOS:
        assert name in html, name
        assert name in md, name
    for scenario in SCENARIOS:
        assert f'id="nativemsg-{scenario}"' in html
        assert f"### {scenario}\n" in md


# --------------------------------------------------------------------------- content


def test_failing_impl_is_shown_as_fail(sample: dict, html: str, md: str):
    fail = next(r for r in sample["results"] if r["status"] == "fail")
    assert (fail["scenario"], fail["impl"]) == ("echo-512k", "go")
    section = html_section(html, "nativemsg-echo-512k")
    row = html_row(section, "go")
    assert "FAIL" in row and fail["reason"] in row
    assert re.search(r'<td class="fail"[^>]*>FAIL', section)
    bar, latency = re.findall(r"<svg.*?</svg>", section, flags=re.S)[:2]
    assert "FAIL" in bar  # the bar chart's labelled gap
    assert "not shown: go (FAIL)" in latency
    md_go = md_row(md_section(md, "echo-512k"), "go")
    assert "**FAIL**" in md_go and fail["reason"] in md_go
    # the same implementation is measured normally in the other scenarios
    assert "FAIL" not in html_row(html_section(html, "nativemsg-echo-64k"), "go")


def test_ratio_column_for_a_known_row(sample: dict, html: str, md: str):
    rows = rows_of(sample, "pingpong", "p50")
    c, base = rows["c"], rows["baseline"]
    r = stats.ratio(c["samples"], base["samples"])
    assert r["ratio"] == pytest.approx(c["median"] / base["median"])
    assert r["ratio"] == pytest.approx(1.15, abs=0.01)  # 10.3 µs / 8.95 µs in the fixture
    text = f"{fmt_num(r['ratio'])}×"
    interval = fmt_interval(r["ci95"][0], r["ci95"][1], r["ratio"], "")
    assert text == "1.15×"
    row = html_row(html_section(html, "nativemsg-pingpong"), "c")
    assert text in row and interval in row
    assert f"{text} {interval}" in md_row(md_section(md, "pingpong"), "c")
    assert "floor" in html_row(html_section(html, "nativemsg-pingpong"), "baseline")


def test_higher_is_better_ratio(sample: dict, md: str):
    rows = rows_of(sample, "echo-512k", "mb_per_s")
    r = stats.ratio(rows["rust"]["samples"], rows["baseline"]["samples"])
    assert r["ratio"] < 1  # the floor moves more MB/s than any real host
    assert f"{fmt_num(r['ratio'])}×" in md_row(md_section(md, "echo-512k"), "rust")


def test_md_and_html_carry_the_same_table_values(sample: dict, html: str, md: str):
    text_of_html = htmllib.unescape(re.sub(r"<[^>]+>", " ", html))
    for wl in sample["workloads"]:
        for scen in wl["scenarios"]:
            primary = scen["primary"]
            unit = scen["metrics"][primary]["unit"]
            for impl, row in rows_of(sample, scen["name"], primary).items():
                median = fmt_value(row["median"], unit)
                interval = fmt_interval(*row["ci95"], row["median"], unit)
                md_line = md_row(md_section(md, scen["name"]), impl)
                assert median in md_line and interval in md_line, (scen["name"], impl)
                html_line = html_row(html_section(html, f"nativemsg-{scen['name']}"), impl)
                assert median in html_line and interval in html_line, (scen["name"], impl)
            for r in sample["results"]:  # every metric of the full table, in both
                if r["scenario"] == scen["name"] and r["status"] == "ok":
                    assert fmt_value(r["median"], r["unit"]) in md
                    assert fmt_value(r["median"], r["unit"]) in text_of_html


def test_rank_tiers_match_stats(sample: dict, md: str):
    for scen in sample["workloads"][0]["scenarios"]:
        rows = rows_of(sample, scen["name"], scen["primary"])
        samples = {impl: row["samples"] for impl, row in rows.items()}
        # a run stored before the A/A control: no noise band, the CI of the ratio must exclude 1
        tiers = stats.tiers(samples, scen["metrics"][scen["primary"]]["better"])
        section = md_section(md, scen["name"])
        for tier_no, tier in enumerate(tiers, start=1):
            label = ("=" if len(tier) > 1 else "") + str(tier_no)
            for impl in tier:
                assert md_row(section, impl).startswith(f"| {label} |"), (scen["name"], impl)
    # c and rust are indistinguishable on pingpong p50 in the fixture: they share a tier
    pingpong = md_section(md, "pingpong")
    assert md_row(pingpong, "c").startswith("| =2 |")
    assert md_row(pingpong, "rust").startswith("| =2 |")


def test_noisy_result_is_flagged(sample: dict, html: str, md: str):
    noisy = [r for r in sample["results"] if r.get("noisy") and r["metric"] == "p50"]
    assert [(r["scenario"], r["impl"]) for r in noisy] == [("pingpong-spawn", "python")]
    assert "noisy" in html_row(html_section(html, "nativemsg-pingpong-spawn"), "python")
    assert "noisy" in md_row(md_section(md, "pingpong-spawn"), "python")
    assert "noisy" not in md_row(md_section(md, "pingpong-spawn"), "c")


def test_summary_has_cpu_and_rss_columns(sample: dict, md: str):
    """An old run: no metric definition has a role, yet the CPU and memory columns appear."""
    defs = [d for s in sample["workloads"][0]["scenarios"] for d in s["metrics"].values()]
    assert defs and not any("role" in d for d in defs)
    section = md_section(md, "pingpong")
    assert "host CPU per message" in section and "host peak RSS" in section
    cpu = rows_of(sample, "pingpong", "cpu_per_op")["go"]
    rss = rows_of(sample, "pingpong", "rss")["go"]
    line = md_row(section, "go")
    assert fmt_value(cpu["median"], "µs") in line
    assert fmt_value(rss["median"], "KiB") in line


def test_conformance_code_metrics_traits_notes_environment(sample: dict, html: str, md: str):
    for doc in (html, md):
        assert "test_fill_exact_size[json]" in doc
        assert "n/a" in doc
        for m in sample["metrics"]:
            assert str(m["nloc"]) in doc
        assert "jansson 2.14" in doc and "serde_json 1.0.133" in doc
        assert "interpreter started directly, no shell shim" in doc
        run = sample["run"]
        for value in (run["commit"], run["command"], run["profile"], run["started"]):
            assert value in doc
        assert run["machine"]["cpu_model"] in doc and run["machine"]["hostname"] in doc
        for version in run["toolchains"].values():
            assert version in doc
        assert "-march=x86-64-v2" in doc and "codegen_units=1" in doc
        assert "26 min 37 s" in doc  # started -> finished
        assert "How to read this report" in doc


def test_conformance_failure_and_other_states(sample: dict, no_charts):
    bad = copy.deepcopy(sample)
    v = next(x for x in bad["verify"] if x["impl"] == "cpp")
    v["tests"]["test_fill_max_1mib[json]"] = "fail"
    v["passed"], v["failed"] = v["passed"] - 1, 1
    v["failures"] = [{"test": "test_fill_max_1mib[json]", "message": "reply is 1048577 bytes"}]
    bad["results"] = [r for r in bad["results"] if r["impl"] != "cpp"]
    for scen in SCENARIOS:
        bad["results"].append(
            {
                "workload": "nativemsg",
                "scenario": scen,
                "impl": "cpp",
                "metric": "p50",
                "status": "fail",
                "reason": "conformance: 1 test failed",
                "n": 0,
                "median": None,
            }
        )
    bad["results"] = [r for r in bad["results"] if r["impl"] != "python"]
    bad["results"].append(
        {
            "workload": "nativemsg",
            "scenario": "pingpong",
            "impl": "python",
            "metric": "p50",
            "status": "skipped",
            "reason": "interrupted",
            "n": 0,
            "median": None,
        }
    )
    bad["run"]["interrupted"] = True
    bad["impls"][1]["summary"] = "<script>alert(1)</script> & co"
    page = report.render_html(bad)
    text = report.render_md(bad)
    matrix = html_section(page, "nativemsg-conformance")
    assert re.search(r"test_fill_max_1mib\[json\].*?FAIL", matrix, flags=re.S)
    assert "reply is 1048577 bytes" in matrix
    assert "reply is 1048577 bytes" in text
    assert "21 / 1 / 0" in matrix
    assert "FAIL" in html_row(html_section(page, "nativemsg-pingpong"), "cpp")
    assert "skipped" in html_row(html_section(page, "nativemsg-pingpong"), "python")
    assert "interrupted" in page and "interrupted" in text
    assert "<script>" not in page and "&lt;script&gt;" in page


def test_reference_column_when_the_workload_has_one(sample: dict, no_charts):
    ref = copy.deepcopy(sample)
    ref["workloads"][0]["reference"] = "go"
    text = report.render_md(ref)
    rows = rows_of(sample, "pingpong", "p50")
    r = stats.ratio(rows["c"]["samples"], rows["go"]["samples"])
    section = md_section(text, "pingpong")
    assert "× reference" in section
    assert f"{fmt_num(r['ratio'])}×" in md_row(section, "c")
    assert "go (reference)" in section


def test_write(tmp_path: Path, sample: dict, no_charts):
    html_path, md_path = report.write(tmp_path / "run", sample)
    assert html_path.name == "report.html" and md_path.name == "report.md"
    assert html_path.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert md_path.read_text(encoding="utf-8").startswith("# msgbench report")


def test_md_escapes_table_breakers(sample: dict, no_charts):
    odd = copy.deepcopy(sample)
    odd["impls"][3]["traits"]["io"] = "StdinLock | BufWriter<StdoutLock>"
    text = report.render_md(odd)
    assert "StdinLock \\| BufWriter\\<StdoutLock>" in text


# --------------------------------------------------------------------------- charts and numbers


def test_number_formatting():
    assert fmt_value(48.1, "µs") == "48.1 µs"
    assert fmt_value(1234.0, "µs") == "1.23 ms"
    assert fmt_value(13900.0, "µs") == "13.9 ms"
    assert fmt_value(2_500_000.0, "µs") == "2.50 s"
    assert fmt_value(2048.0, "KiB") == "2.00 MiB"
    assert fmt_value(1016.0, "KiB") == "1,016 KiB"
    assert fmt_value(108_000.0, "ops/s") == "108 k ops/s"
    assert fmt_value(1250.0, "MB/s") == "1.25 GB/s"
    assert fmt_value(0.5, "widgets") == "0.500 widgets"
    assert fmt_num(99.96) == "100"
    assert fmt_num(0.0351) == "0.0351"
    assert fmt_num(None) == "—"
    assert fmt_interval(47.21, 49.04, 48.1, "µs") == "[47.2, 49.0]"
    assert fmt_interval(1210.0, 1260.0, 1234.0, "µs") == "[1.21, 1.26]"


IMPL_SET = [
    ChartImpl("baseline", "c", "baseline"),
    ChartImpl("c", "c"),
    ChartImpl("rust", "rust"),
    ChartImpl("rust-tokio", "rust", variant="tokio"),
    ChartImpl("python", "python"),
]


def test_charts_are_deterministic_and_inline():
    values = {"baseline": (9.0, 8.9, 9.1), "c": (10.0, 9.8, 10.3), "rust": (10.2, 10.0, 10.4)}
    a = charts.bar_chart(IMPL_SET, values, "µs", "p50", "lower", missing={"python": "FAIL"})
    b = charts.bar_chart(IMPL_SET, values, "µs", "p50", "lower", missing={"python": "FAIL"})
    assert a == b
    assert a.startswith("<svg") and "<?xml" not in a and "<!DOCTYPE" not in a
    assert "FAIL" in a and "baseline" in a
    assert "<text" in a  # svg.fonttype none: text stays text


def test_colours_are_fixed_per_language():
    assert charts.color_for("rust") == charts.COLORS["rust"]
    assert charts.color_for("c", "baseline") == charts.COLORS["baseline"] != charts.COLORS["c"]
    assert len(set(charts.COLORS.values())) == len(charts.COLORS)
    svg = charts.bar_chart(IMPL_SET[:3], {"rust": (5.0, 4.9, 5.1)}, "µs", "p50", "lower")
    assert charts.COLORS["rust"].lower() in svg.lower()


def test_latency_and_sweep_charts():
    pct = [("p50", "p50"), ("p99", "p99"), ("max", "max")]
    values = {
        "c": {"p50": (10.0, 9.9, 10.1), "p99": (20.0, 19.0, 21.0), "max": (300.0, 250.0, 400.0)},
        "rust": {"p50": (11.0, 10.9, 11.1), "p99": (22.0, 21.0, 23.0), "max": (5e3, 4e3, 6e3)},
    }
    svg = charts.latency_chart(IMPL_SET, values, pct, "µs", missing={"python": "FAIL"})
    assert svg.startswith("<svg") and "python (FAIL)" in svg and "5 ms" in svg
    series = {
        "c": [(1, 10.0, 9.0, 11.0), (8, 30.0, 28.0, 33.0), (64, 90.0, 85.0, 95.0)],
        "rust-tokio": [(1, 12.0, None, None), (8, 28.0, 27.0, 29.0), (64, 70.0, 66.0, 75.0)],
    }
    svg = charts.sweep_chart(IMPL_SET, series, "clients", "µs", "p50", "lower", logx=True)
    assert svg.startswith("<svg") and "rust-tokio" in svg and "clients" in svg


def test_declared_targets_are_checked_against_the_run(sample: dict) -> None:
    """c is 10.3/8.95 = 1.15x the floor on pingpong p50 and go 13.9/8.95 = 1.55x: with a bound
    of 1.3x, c meets it and go misses it; a throughput bound uses min_ratio."""
    doc = copy.deepcopy(sample)
    doc["workloads"][0]["targets"] = [
        {"scenario": "pingpong", "metric": "p50", "impls": ["c", "go"], "max_ratio": 1.3},
        {"scenario": "pingpong", "metric": "p50", "impls": ["nosuch"], "max_ratio": 1.3},
    ]
    md_text = report.render_md(doc)
    section = md_text.split("Targets", 1)[1].split("###", 1)[0]
    lines = [ln for ln in section.splitlines() if ln.startswith("| pingpong")]
    c_line = next(ln for ln in lines if "| c |" in ln)
    go_line = next(ln for ln in lines if "| go |" in ln)
    assert "1.15×" in c_line and "met" in c_line and "MISSED" not in c_line
    assert "1.55×" in go_line and "MISSED" in go_line
    assert "not measured" in next(ln for ln in lines if "nosuch" in ln)


def test_side_by_side_compares_two_scenarios_per_implementation(sample: dict) -> None:
    """echo-1k beside echo-64k (both in the fixture): one row per implementation with both
    medians and the ratio b ÷ a computed from this run's rows."""
    doc = copy.deepcopy(sample)
    doc["workloads"][0]["side_by_side"] = [
        {"title": "small beside large", "scenarios": ["echo-1k", "echo-64k"], "metric": "p50"}
    ]
    rows = {
        (r["scenario"], r["impl"]): r["median"]
        for r in doc["results"]
        if r["metric"] == "p50" and r["status"] == "ok"
    }
    md_text = report.render_md(doc)
    section = md_text.split("small beside large", 1)[1].split("###", 1)[0]
    rust_line = next(ln for ln in section.splitlines() if ln.startswith("| rust"))
    expected = rows[("echo-64k", "rust")] / rows[("echo-1k", "rust")]
    assert f"{fmt_num(expected)}×" in rust_line
    assert fmt_value(rows[("echo-1k", "rust")], "µs") in rust_line
