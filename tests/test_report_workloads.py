"""The report on a run of every workload (tests/fixtures/results_{comm,redis,nativemsg}.json,
made by make_workload_fixtures.py, and results_capnp.json, made by make_capnp_fixture.py):
columns and charts follow the metric roles that workload.toml declares, never the metric names;
capnp's absent C row, ratio chart and client × server matrix come from its workload.toml."""

from __future__ import annotations

import copy
import html as htmllib
import json
import re
from pathlib import Path

import pytest

from msgbench import charts, registry, report, results, stats
from msgbench.charts import fmt_interval, fmt_num, fmt_value
from msgbench.report import roles
from msgbench.runner import Measurements

FIXTURES = Path(__file__).parent / "fixtures"


def load(workload: str) -> dict:
    return json.loads((FIXTURES / f"results_{workload}.json").read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def comm() -> dict:
    return load("comm")


@pytest.fixture(scope="module")
def redis() -> dict:
    return load("redis")


@pytest.fixture(scope="module")
def nativemsg() -> dict:
    return load("nativemsg")


@pytest.fixture(scope="module")
def comm_html(comm: dict) -> str:
    return report.render_html(comm)  # real charts: rendered once


@pytest.fixture
def chart_calls(monkeypatch) -> list[dict]:
    """Charts replaced by a recorder: which charts the report asks for, and fast."""
    calls: list[dict] = []

    def recorder(kind: str):
        def record(impls, values, *args, **kwargs):
            calls.append({"kind": kind, "values": values, "args": args, **kwargs})
            return f"<svg><text>{htmllib.escape(kwargs.get('title', ''))}</text></svg>"

        return record

    for kind in ("bar_chart", "latency_chart"):
        monkeypatch.setattr(charts, kind, recorder(kind))
    return calls


def rows_of(doc: dict, scenario: str, metric: str) -> dict[str, dict]:
    return {
        r["impl"]: r
        for r in doc["results"]
        if r["scenario"] == scenario and r["metric"] == metric and r["status"] == "ok"
    }


def md_section(md: str, title: str) -> str:
    start = md.index(f"\n### {title}\n")
    end = md.find("\n### ", start + 5)
    return md[start : end if end > 0 else len(md)]


def md_summary(md: str, scenario: str) -> list[str]:
    """The summary table of a scenario: its header line first, then one line per row."""
    lines = md_section(md, scenario).splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("| rank |"))
    end = next(i for i in range(start, len(lines)) if not lines[i].startswith("|"))
    return lines[start:end] + [lines[end + 1]]  # the rows, then the caption


def md_row(lines: list[str], impl: str) -> str:
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) > 2 and impl in (cells[0].split(" ")[0], cells[1].split(" ")[0]):
            return line
    raise AssertionError(f"no row for {impl}")


def html_section(page: str, anchor: str) -> str:
    m = re.search(rf'<h([23]) id="{re.escape(anchor)}">', page)
    assert m, anchor
    end = re.search(r"<h[23][ >]", page[m.end() :])
    return page[m.start() : m.end() + end.start()] if end else page[m.start() :]


def html_summary_row(page: str, anchor: str, impl: str) -> str:
    """The text of impl's row in the summary table of the scenario at anchor."""
    table = re.search(r"<table.*?</table>", html_section(page, anchor), flags=re.S).group(0)
    for tr in re.findall(r"<tr>.*?</tr>", table, flags=re.S):
        cells = htmllib.unescape(re.sub(r"<[^>]+>", " ", tr)).split()
        if len(cells) > 2 and cells[1] == impl:
            return " ".join(cells)
    raise AssertionError(f"no row for {impl}")


def rename_metric(doc: dict, old: str, new: str) -> dict:
    """The same run with one metric under another name, everywhere the run names it."""
    doc = copy.deepcopy(doc)
    for wl in doc["workloads"]:
        for scen in wl["scenarios"]:
            scen["metrics"] = {(new if k == old else k): v for k, v in scen["metrics"].items()}
            if scen["primary"] == old:
                scen["primary"] = new
            clocks = scen.get("cpu_clocks") or {}
            scen["cpu_clocks"] = {(new if k == old else k): v for k, v in clocks.items()}
    for r in doc["results"]:
        if r["metric"] == old:
            r["metric"] = new
    return doc


# --------------------------------------------------------------------------- comm


def test_comm_summary_has_server_cpu_column_and_chart(comm: dict, comm_html: str):
    md = report.render_md(comm)
    lines = md_summary(md, "test4")
    assert "server CPU per message" in lines[0] and "server peak RSS" in lines[0]
    for impl, row in rows_of(comm, "test4", "cpu_per_msg").items():
        assert fmt_value(row["median"], "µs") in md_row(lines, impl), impl
    assert "server CPU per message measured with the process CPU clock (ns)" in lines[-1]
    section = html_section(comm_html, "comm-test4")
    titles = re.findall(r"<figcaption>(.*?)</figcaption>", section)
    assert any(t.startswith("server CPU per message per implementation") for t in titles)
    assert "test4: server CPU per message" in section  # the chart's own title
    assert "process CPU clock (ns)" in section


def test_cpu_column_follows_the_role_not_the_name(comm: dict, chart_calls: list):
    renamed = rename_metric(comm, "cpu_per_msg", "server_cpu_us")
    lines = md_summary(report.render_md(renamed), "test4")
    assert "server CPU per message" in lines[0]
    go = rows_of(comm, "test4", "cpu_per_msg")["go"]
    assert fmt_value(go["median"], "µs") in md_row(lines, "go")
    report.build(renamed)
    titles = [c.get("title") for c in chart_calls]
    assert "test4: server CPU per message" in titles
    # without its role, a name the report never knew is just a metric: no CPU column
    anon = copy.deepcopy(renamed)
    for scen in anon["workloads"][0]["scenarios"]:
        scen["metrics"]["server_cpu_us"].pop("role", None)
    assert "server CPU per message" not in md_summary(report.render_md(anon), "test4")[0]


def test_old_comm_run_without_roles_still_has_its_cpu_column(comm: dict):
    old = copy.deepcopy(comm)
    for scen in old["workloads"][0]["scenarios"]:
        scen.pop("cpu_clocks", None)
        for d in scen["metrics"].values():
            d.pop("role", None)
            d.pop("percentile", None)
    lines = md_summary(report.render_md(old), "test4")
    assert "server CPU per message" in lines[0] and "server peak RSS" in lines[0]
    assert "CPU clock" not in lines[-1] and "measured with" not in lines[-1]


def test_latency_chart_takes_latency_metrics_ordered_by_percentile(comm: dict, chart_calls):
    shuffled = rename_metric(comm, "p999", "tail")
    for scen in shuffled["workloads"][0]["scenarios"]:
        m = scen["metrics"]
        scen["metrics"] = {k: m[k] for k in sorted(m, key=lambda k: k != "max")}  # max first
    report.build(shuffled)
    lat = [c for c in chart_calls if c["title"] == "rtt-1k: latency percentiles"]
    assert len(lat) == 1
    keys = [k for k, _ in lat[0]["args"][0]]
    labels = [label for _, label in lat[0]["args"][0]]
    assert keys == ["p50", "p90", "p99", "tail", "max"]
    assert labels == ["p50", "p90", "p99", "p99.9", "max"]
    # throughput and CPU bars beside the primary; the memory metric has none
    bars = [c["title"] for c in chart_calls if c["kind"] == "bar_chart"]
    assert "rtt-1k: messages per second" in bars and "rtt-1k: server CPU per message" in bars
    assert not any("peak RSS" in t for t in bars)


def test_comm_side_by_side_with_own_client(comm: dict):
    md = report.render_md(comm)
    section = md.split("Test4: the neutral driver beside", 1)[1].split("\n### ", 1)[0]
    neutral, own = rows_of(comm, "test4", "mb_per_s"), rows_of(comm, "test4-own", "mb_per_s")
    rust = next(ln for ln in section.splitlines() if ln.startswith("| rust"))
    r = stats.ratio(own["rust"]["samples"], neutral["rust"]["samples"])
    assert f"{fmt_num(r['ratio'])}×" in rust and fmt_value(own["rust"]["median"], "MB/s") in rust
    python = next(ln for ln in section.splitlines() if ln.startswith("| python"))
    assert "**FAIL**" in python and "ConnectionResetError" in python
    assert "skipped" in next(ln for ln in section.splitlines() if ln.startswith("| baseline"))


def test_comm_interop_matrix_from_verify_entries(comm: dict):
    md = report.render_md(comm)
    matrix = md.split("client ↓ / server →", 1)[1].split("\n\n", 1)[0]
    header = [c.strip() for c in matrix.splitlines()[0].strip("|").split("|")]
    assert header[1:] == ["baseline", "c", "cpp", "rust", "go", "python"]
    python = next(ln for ln in matrix.splitlines() if ln.startswith("| python client"))
    cells = [c.strip() for c in python.strip().strip("|").split("|")]
    assert cells[1] == "**FAIL**" and all(c.startswith("pass") for c in cells[2:])
    rust = next(ln for ln in matrix.splitlines() if ln.startswith("| rust client"))
    assert rust.count("pass: 2 tests") == 6


def test_interop_matrix_reads_the_recorded_clients_not_the_test_ids(comm: dict):
    """verify records each interop test's client (`clients`); the test's name is not parsed."""
    doc = copy.deepcopy(comm)
    for v in doc["verify"]:
        rename = {t: t.replace("[client=", "[via=") for t in v["tests"]}
        v["tests"] = {rename[t]: s for t, s in v["tests"].items()}
        v["clients"] = {rename[t]: c for t, c in v["clients"].items()}
        for f in v["failures"]:
            f["test"] = rename[f["test"]]
    md = report.render_md(doc)
    matrix = md.split("client ↓ / server →", 1)[1].split("\n\n", 1)[0]
    python = next(ln for ln in matrix.splitlines() if ln.startswith("| python client"))
    assert python.split("|")[2].strip() == "**FAIL**"
    for v in doc["verify"]:
        v["clients"] = {}
    assert "client ↓ / server →" not in report.render_md(doc)


# --------------------------------------------------------------------------- redis


def test_redis_family_tables_with_ratios_to_the_reference(redis: dict):
    md = report.render_md(redis)
    section = md_section(md, "suite-p16")
    table = section.split("suite-p16: requests/s per test", 1)[0].rsplit("| test |", 1)[1]
    header = [c.strip() for c in ("| test |" + table.splitlines()[0]).strip("|").split("|")]
    assert header == ["test", "baseline", "redis-server", "c", "cpp", "rust", "go", "python"]
    ref = rows_of(redis, "suite-p16", "rps.SET")["redis-server"]
    set_line = next(ln for ln in table.splitlines() if ln.startswith("| SET |"))
    for impl, row in rows_of(redis, "suite-p16", "rps.SET").items():
        cell = set_line.split("|")[header.index(impl) + 1]
        assert fmt_value(row["median"], "req/s") in cell, impl
        if impl != "redis-server":
            expected = stats.ratio(row["samples"], ref["samples"])["ratio"]
            assert f"{fmt_num(expected)}×" in cell, impl
    assert "suite-p16: p99 latency per test" in section  # the latency families too
    # the summary's reference column: rps_geomean ÷ redis-server, bootstrapped
    lines = md_summary(md, "suite-p16")
    assert "× reference" in lines[0]
    geo = rows_of(redis, "suite-p16", "rps_geomean")
    r = stats.ratio(geo["rust"]["samples"], geo["redis-server"]["samples"])
    text = f"{fmt_num(r['ratio'])}× {fmt_interval(*r['ci95'], r['ratio'], '')}"
    assert text in md_row(lines, "rust")


def test_redis_family_chart_is_named_from_the_family_label(redis: dict, chart_calls):
    doc = copy.deepcopy(redis)
    report.build(doc)
    titles = [c.get("title") for c in chart_calls]
    assert "suite-p16: requests/s per test ÷ redis-server" in titles
    # nothing redis-specific in the report: the title comes from the family's label
    chart_calls.clear()
    for scen in doc["workloads"][0]["scenarios"]:
        for k, d in scen["metrics"].items():
            if d.get("family") == "rps.*":
                d["label"] = f"{k[4:]} replies/s"
    report.build(doc)
    titles = [c.get("title") for c in chart_calls]
    assert "suite-p16: replies/s per test ÷ redis-server" in titles
    assert not any("requests/s per test" in (t or "") for t in titles)


def test_redis_cpu_primary_and_load_generator_cpu(redis: dict):
    md = report.render_md(redis)
    lines = md_summary(md, "suite-p1")
    # the primary metric is the CPU figure: no second CPU column, and the load generator's
    # CPU (role load_cpu) is not the implementation's
    assert lines[0].count("CPU per request") == 1 and "redis-benchmark" not in lines[0]
    assert "server CPU per request measured with the process CPU clock (ns)" in lines[-1]
    keyspace = md_summary(md, "keyspace")
    # memory column: the first memory-role metric besides the primary (bytes_per_key)
    assert "server peak RSS" in keyspace[0] and "server CPU per request" in keyspace[0]


# --------------------------------------------------------------------------- nativemsg


def test_nativemsg_clocks_are_named_beside_the_cpu_figures(nativemsg: dict):
    md = report.render_md(nativemsg)
    assert (
        "host CPU per message measured with the process CPU clock (ns)"
        in (md_summary(md, "pingpong")[-1])
    )
    assert (
        "host CPU per message measured with the wait4 rusage (µs)"
        in (md_summary(md, "pingpong-spawn")[-1])
    )
    browser = md_section(md, "browser-pingpong")
    lines = md_summary(md, "browser-pingpong")
    assert "host CPU per message" in lines[0] and "Chromium" not in lines[0]  # peer_cpu
    assert "Chromium renderer CPU per message measured with the /proc children ticks" in browser


# --------------------------------------------------------------------------- capnp


@pytest.fixture(scope="module")
def capnp() -> dict:
    return load("capnp")


def test_capnp_says_once_why_there_is_no_c_row(capnp: dict, chart_calls):
    md = report.render_md(capnp)
    reason = next(i["absent"] for i in capnp["impls"] if i["impl"] == "c")
    assert md.count(reason) == 1  # once per workload, under its heading
    head = md.split("\n## capnp — ", 1)[1].split("\n### ", 1)[0]  # under the workload's heading
    assert f"**c** (C) — absent: {reason}" in head
    for scen in capnp["workloads"][0]["scenarios"]:
        line = md_row(md_summary(md, scen["name"]), "c")
        assert "absent" in line and "skipped" not in line  # one short row, not a status wall
    conformance = md_section(md, "Conformance")
    header = next(ln for ln in conformance.splitlines() if ln.startswith("| test |"))
    assert header == "| test | baseline | cpp | rust | go | python |"  # no column of n/a for c
    assert "not applicable: c (absent" in conformance
    # nor in any chart: the absent row is not an implementation that was measured
    assert all("c" not in c["values"] for c in chart_calls if c["kind"] == "bar_chart")


def test_capnp_ratio_chart_redoes_the_seeds_rust_against_cpp(capnp: dict):
    md = report.render_md(capnp)
    section = md_section(md, "Ratios")
    assert "#### Seed 004 redone: Rust ÷ C++ time per iteration, per case and mode" in section
    table = [ln for ln in section.splitlines() if ln.startswith("| ")]
    assert table[0] == "| scenario | rust | cpp | rust ÷ cpp | reading |"
    # the chart's scenarios in workload.toml's order, those of this run only
    assert [ln.split("|")[1].strip() for ln in table[1:]] == [
        "carsales-bytes-reuse",
        "catrank-bytes",
        "eval-pipe",
    ]
    for line in table[1:]:
        scen = line.split("|")[1].strip()
        rows = rows_of(capnp, scen, "time_it")
        r = stats.ratio(rows["rust"]["samples"], rows["cpp"]["samples"])
        assert f"{fmt_num(r['ratio'])}× {fmt_interval(*r['ci95'], r['ratio'], '')}" in line
    page = report.render_html(capnp)
    ratios = html_section(page, "capnp-ratios")
    assert ratios.count("<svg") == 1 and "rust ÷ cpp" in ratios
    assert "below 1: rust faster" in htmllib.unescape(ratios)


def test_capnp_pipe_matrix_is_client_by_server(capnp: dict):
    md = report.render_md(capnp)
    section = md_section(md, "Client × server")
    table = [ln for ln in section.splitlines() if ln.startswith("| ")]
    assert table[0] == "| client ↓ / server → | cpp | rust | go | python |"
    clients = [ln.split("|")[1].strip() for ln in table[1:]]
    assert clients == ["cpp client", "rust client", "go client", "python client"]
    go = table[3].split("|")[1:-1]
    assert go[3].strip().endswith("· diagonal")
    assert go[4].strip().startswith("**FAIL**: round 3")
    rows = {i: rows_of(capnp, "matrix-cpp-client", "time_it")[i] for i in ("cpp", "rust")}
    r = stats.ratio(rows["rust"]["samples"], rows["cpp"]["samples"])
    assert f"· {fmt_num(r['ratio'])}× [" in table[1].split("|")[3]
    assert "not in the matrix: baseline (the floor speaks CCE" in section
    assert "Pipe matrix: carsales pipe no-reuse" in section


# --------------------------------------------------------------------------- every workload


@pytest.mark.parametrize("workload", ["comm", "redis", "nativemsg", "capnp"])
def test_md_and_html_carry_the_same_numbers(workload: str, chart_calls):
    doc = load(workload)
    md, page = report.render_md(doc), report.render_html(doc)
    text_of_html = htmllib.unescape(re.sub(r"<[^>]+>", " ", page))
    wl = doc["workloads"][0]
    for scen in wl["scenarios"]:
        primary = scen["primary"]
        unit = scen["metrics"][primary]["unit"]
        lines = md_summary(md, scen["name"])
        for impl, row in rows_of(doc, scen["name"], primary).items():
            median = fmt_value(row["median"], unit)
            interval = fmt_interval(*row["ci95"], row["median"], unit)
            assert median in md_row(lines, impl) and interval in md_row(lines, impl)
            html_line = html_summary_row(page, f"{wl['name']}-{scen['name']}", impl)
            assert median in html_line and interval in html_line, (scen["name"], impl)
    for r in doc["results"]:
        if r["status"] == "ok":
            value = fmt_value(r["median"], r["unit"])
            assert value in md and value in text_of_html, (r["scenario"], r["impl"], r["metric"])


# --------------------------------------------------------------------------- the run document


def test_results_carry_roles_and_the_cpu_clock():
    w = registry.workload("comm")
    scen = w.scenarios["rtt-1k"]
    doc = {
        "impl": {"cpu_us_per_op": 3.0, "cpu_clock": "process-cpu-clock", "maxrss_kb": 2000},
        "latency_us": {"p50": 20.0, "p90": 22.0, "p99": 30.0, "p999": 50.0, "max": 90.0},
        "msgs_per_s": 48000.0,
    }
    spawned = copy.deepcopy(doc)
    spawned["impl"]["cpu_clock"] = "wait4-rusage"
    m = Measurements(docs={("comm", "rtt-1k", "c"): [doc], ("comm", "rtt-1k", "go"): [spawned]})
    entry = results.workload_entry(w, [scen], m)["scenarios"][0]
    assert entry["metrics"]["cpu_per_msg"]["role"] == "cpu"
    assert entry["metrics"]["p999"]["role"] == "latency"
    assert entry["metrics"]["p999"]["percentile"] == 99.9
    assert entry["metrics"]["max"]["percentile"] == 100
    assert entry["cpu_clocks"] == {"cpu_per_msg": {"c": "process-cpu-clock", "go": "wait4-rusage"}}
    note = roles.clock_note(entry["cpu_clocks"]["cpu_per_msg"])
    assert note == "process CPU clock (ns) for c; wait4 rusage (µs) for go"


def test_legacy_roles_of_runs_stored_before_roles():
    assert roles.legacy_role("p999", {"unit": "µs"}) == ("latency", 99.9)
    assert roles.legacy_role("max", {"unit": "µs"}) == ("latency", 100.0)
    assert roles.legacy_role("cpu_per_msg", {"unit": "µs"}) == ("cpu", None)
    assert roles.legacy_role("rps.SET", {"family": "rps.*", "better": "higher"})[0] == "throughput"
    assert roles.legacy_role("whatever", {"unit": "µs"}) == ("", None)
    # a declared role wins over the name
    assert roles.role_of("cpu_per_op", {"role": "memory"}) == "memory"
    assert roles.percentile_of("p50", {"role": "throughput"}) is None
