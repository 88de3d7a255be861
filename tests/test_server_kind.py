"""Server workloads: the runner gives the driver a port and fills {port} in the server's argv;
metric families ("rps.*") expand into one metric per test the driver reports; reports show
them per test and check targets against the reference."""

from __future__ import annotations

import json
import sys
import textwrap

import pytest

from msgbench import paths, registry, report, results, runner, trials

FAKE_SERVER_DRIVER = r"""
import json, sys
argv = sys.argv[1:]
server = argv[argv.index("--") + 1:]
port = argv[argv.index("--port") + 1]
assert server[-1] == port, (server, port)          # {port} was filled with the same port
speed = float(server[1])
tests = {"SET": {"rps": 1000 * speed}, "GET": {"rps": 2000 * speed}}
if speed > 1.5:
    tests["EXTRA"] = {"rps": 5.0}                   # a test only some servers report
print(json.dumps({"tests": tests, "geomean": 1414 * speed, "impl": {"cpu": 10 / speed}}))
"""


@pytest.fixture
def server_lab(tmp_path, monkeypatch):
    root = tmp_path / "workloads"
    w = root / "kv"
    (w / "impls").mkdir(parents=True)
    driver = tmp_path / "fake_server_driver.py"
    driver.write_text(FAKE_SERVER_DRIVER)
    (w / "workload.toml").write_text(
        textwrap.dedent(f"""
        name = "kv"
        kind = "server"
        baseline = "floor"
        reference = "ref"
        [drivers.bench]
        argv = ["{sys.executable}", "{driver}"]
        [profiles.smoke]
        repetitions = 3
        [metrics]
        geomean = {{ field = "geomean", unit = "req/s", better = "higher", role = "throughput" }}
        cpu_per_req = {{ field = "impl.cpu", unit = "µs", better = "lower", role = "cpu" }}
        [metrics."rps.*"]
        field = "tests.*.rps"
        unit = "req/s"
        better = "higher"
        label = "* rps"
        role = "throughput"
        [[scenarios]]
        name = "suite"
        args = ["--bench", "-n {{n}}"]
        primary = "geomean"
        metrics = ["cpu_per_req", "rps.*"]
        params.smoke = {{ n = 5 }}
        [[targets]]
        scenario = "suite"
        metric = "geomean"
        against = "reference"
        impls = ["fast", "slow"]
        min_ratio = 1.0
    """)
    )
    for impl_id, speed in (("floor", "3"), ("ref", "1"), ("fast", "2"), ("slow", "0.5")):
        d = w / "impls" / impl_id
        d.mkdir()
        (d / "srv").write_text("#!/bin/sh\n")
        (d / "impl.toml").write_text(
            textwrap.dedent(f"""
            id = "{impl_id}"
            language = "c"
            [build]
            system = "none"
            [run]
            argv = ["{{impl_dir}}/srv", "{speed}", "--port", "{{port}}"]
        """)
            + (
                'client_argv = ["{impl_dir}/cli", "--port", "{port}"]\n'
                if impl_id == "fast"
                else ""
            )
        )
    monkeypatch.setattr(paths, "WORKLOADS", root)
    registry.load.cache_clear()
    yield registry.workload("kv")
    registry.load.cache_clear()


def _argv(w, impl, tmp_path) -> list[str]:
    s = w.scenarios["suite"]
    ctx = trials.TrialContext(w, s, impl, "smoke", runner.Placement("none", (), ()), tmp_path, 60)
    return runner.trial_kind(w, s).call(ctx).argv()


def test_server_argv_gets_a_port_and_the_driver_the_same_one(server_lab, tmp_path):
    w, impl = server_lab, server_lab.impls["fast"]
    argv = _argv(w, impl, tmp_path)
    port = argv[argv.index("--port") + 1]
    assert 0 < int(port) < 65536
    assert argv[argv.index("--") + 1 :] == [str(impl.dir / "srv"), "2", "--port", port]
    # its own client program, with the same port, for scenarios that use it
    client = json.loads(argv[argv.index("--client-json") + 1])
    assert client == [str(impl.dir / "cli"), "--port", port]
    slow = _argv(w, w.impls["slow"], tmp_path)
    assert "--client-json" not in slow
    assert argv[argv.index("--bench") + 1] == "-n 5"
    assert impl.argv()[-1] == "{port}"  # unfilled until a launch


def test_metric_family_definition():
    w = registry.Workload.__new__(registry.Workload)
    w.name = "kv"
    w.metric_defs = {"rps.*": {"field": "tests.*.rps", "label": "* rps", "better": "higher"}}
    d = w.metric_def("rps.SET")
    assert d["field"] == "tests.SET.rps" and d["label"] == "SET rps" and d["family"] == "rps.*"
    docs = [{"tests": {"SET": {}, "GET": {}}}, {"tests": {"GET": {}, "MSET": {}}}]
    assert w.family_members("rps.*", docs) == ["rps.SET", "rps.GET", "rps.MSET"]
    with pytest.raises(registry.ManifestError):
        w.metric_def("nosuch")


def _run_doc(lab, tmp_path) -> dict:
    impls = list(lab.impls.values())
    scen = [lab.scenarios["suite"]]
    where = runner.Placement("none", (), ())
    m = runner.measure([(lab, scen, impls)], "smoke", where, tmp_path / "logs", seed=3)
    assert not m.failures, m.failures
    return {
        "run": {"id": "t", "profile": "smoke"},
        "workloads": [results.workload_entry(lab, scen, m)],
        "impls": [results.impl_entry(i) for i in impls],
        "results": [row for i in impls for row in results.result_rows(lab, scen[0], i, m, None)],
    }


def test_families_expand_into_per_test_rows_and_tables(server_lab, tmp_path):
    doc = _run_doc(server_lab, tmp_path)
    metrics = doc["workloads"][0]["scenarios"][0]["metrics"]
    assert list(metrics) == ["geomean", "cpu_per_req", "rps.SET", "rps.GET", "rps.EXTRA"]
    assert metrics["rps.GET"]["family"] == "rps.*" and metrics["rps.GET"]["label"] == "GET rps"
    rows = {(r["impl"], r["metric"]): r for r in doc["results"]}
    assert rows[("fast", "rps.GET")]["median"] == 4000.0
    assert ("ref", "rps.EXTRA") not in rows  # only servers that reported it have the row
    md = report.render_md(doc)
    table = md.split("rps per test", 1)[0].rsplit("| test |", 1)[1]
    get_line = next(ln for ln in table.splitlines() if ln.startswith("| GET"))
    assert "2.00×" in get_line and "0.500×" in get_line  # fast and slow ÷ the reference
    assert "| rps.GET" not in md  # families are not columns of the metric table


def test_targets_against_the_reference(server_lab, tmp_path):
    md = report.render_md(_run_doc(server_lab, tmp_path))
    section = md.split("### Targets", 1)[1].split("###", 1)[0]
    fast = next(ln for ln in section.splitlines() if "| fast |" in ln)
    slow = next(ln for ln in section.splitlines() if "| slow |" in ln)
    assert "≥ 1.00× ref" in fast and "2.00×" in fast and "met" in fast
    assert "0.500×" in slow and "MISSED" in slow


def test_interop_matrix_from_client_parametrised_tests(server_lab, tmp_path):
    doc = _run_doc(server_lab, tmp_path)
    doc["verify"] = [
        {"workload": "kv", "impl": "fast", "passed": 3, "failed": 1, "skipped": 0,
         "tests": {"test_a[client=fast]": "pass", "test_b[client=fast]": "pass",
                   "test_a[client=slow]": "pass", "test_echo": "pass"},
         "failures": [{"test": "test_b[client=slow]", "message": "wrong reply"}]},
        {"workload": "kv", "impl": "slow", "passed": 2, "failed": 0, "skipped": 0,
         "tests": {"test_a[client=fast]": "pass", "test_a[client=slow]": "pass"},
         "failures": []},
    ]  # fmt: skip
    md = report.render_md(doc)
    matrix = md.split("client ↓ / server →", 1)[1].split("\n\n", 1)[0]
    fast_row = next(ln for ln in matrix.splitlines() if ln.startswith("| fast client"))
    slow_row = next(ln for ln in matrix.splitlines() if ln.startswith("| slow client"))
    # columns: fast server, then slow server (the floor and reference ran no conformance)
    assert fast_row.count("pass") == 2
    assert "FAIL" in slow_row.split("|")[2] and "pass" in slow_row.split("|")[3]
