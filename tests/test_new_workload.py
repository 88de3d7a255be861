"""Adding a workload (docs/adding-a-workload.md): a folder, plus at most one trial kind that
the folder registers itself. This test builds such a workload in a temporary folder — with a
trial kind the harness has never heard of — and runs the real command line on it: list,
verify, bench, report. No harness file is touched (checked)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from msgbench import paths

# The new kind: the implementation times itself and prints the trial's JSON document (as a
# serialisation benchmark run in-process does); no separate driver process.
SELF_TIMED_KIND = '''
"""`self-timed`: the implementation is its own load and prints the trial document."""
import json
import subprocess

from msgbench.trials import TrialFailed, TrialKind


class SelfTimed(TrialKind):
    name = "self-timed"
    description = "the implementation measures itself and prints the driver document"
    needs_driver = False

    def run(self, ctx):
        argv = [*ctx.impl.argv(), *ctx.scenario.argv(ctx.profile)]
        with open(ctx.stderr_log, "ab") as err:
            proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=err, text=True,
                                  timeout=ctx.timeout_s)
        if proc.returncode != 0:
            raise TrialFailed(f"exit status {proc.returncode}")
        return json.loads(proc.stdout)


KIND = SelfTimed()
'''

# An implementation: sums squares, timing itself; --broken makes it wrong (conformance).
IMPL = """
import json, sys, time
n = int(sys.argv[sys.argv.index("--n") + 1]) if "--n" in sys.argv else 10
t0 = time.perf_counter_ns()
total = sum(i * i for i in range(n))
if "--broken" in sys.argv:
    total += 1
ns = time.perf_counter_ns() - t0
print(json.dumps({"driver": "self", "total": total, "ns_per_op": ns / max(n, 1),
                  "impl": {"cpu_s": 0.0, "cpu_clock": "process-cpu-clock",
                           "cpu_us_per_op": ns / 1000 / max(n, 1), "maxrss_kb": None,
                           "exit_status": 0}}))
"""

CONFTEST = """
pytest_plugins = ["msgbench.conformance_plugin"]
"""

SUITE = """
import json, subprocess


def test_sum_of_squares(impl):
    out = subprocess.run([*impl.argv(), "--n", "4"], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout)["total"] == 0 + 1 + 4 + 9
"""


def _workload(root: Path, kind: str = "self-timed") -> Path:
    w = root / "workloads" / "squares"
    (w / "trials").mkdir(parents=True)
    (w / "conformance").mkdir()
    (w / "trials" / "self_timed.py").write_text(SELF_TIMED_KIND)
    (w / "conformance" / "conftest.py").write_text(CONFTEST)
    (w / "conformance" / "test_squares.py").write_text(SUITE)
    (w / "workload.toml").write_text(
        textwrap.dedent(f"""
        name = "squares"
        title = "sum of squares, timed by the implementation itself"
        kind = "{kind}"
        baseline = "floor"
        [profiles.smoke]
        repetitions = 2
        [metrics]
        ns_per_op = {{ field = "ns_per_op", unit = "ns", better = "lower", role = "latency", \
percentile = 50 }}
        cpu = {{ field = "impl.cpu_us_per_op", unit = "µs", better = "lower", role = "cpu" }}
        [[scenarios]]
        name = "n1000"
        args = ["--n", "{{n}}"]
        primary = "ns_per_op"
        metrics = ["cpu"]
        params.smoke = {{ n = 1000 }}
    """)
    )
    for impl_id, extra in (("floor", ""), ("python", ""), ("wrong", ', "--broken"')):
        d = w / "impls" / impl_id
        d.mkdir(parents=True)
        (d / "main.py").write_text(IMPL)
        (d / "impl.toml").write_text(
            textwrap.dedent(f"""
            id = "{impl_id}"
            language = "python"
            summary = "sum of squares ({impl_id})"
            [build]
            system = "none"
            [run]
            argv = ["{sys.executable}", "{{impl_dir}}/main.py"{extra}]
            [metrics]
            sources = ["*.py"]
        """)
        )
    return w


def _msgbench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "MSGBENCH_WORKLOADS": str(tmp_path / "workloads"),
        "MSGBENCH_RESULTS": str(tmp_path / "results"),
    }
    return subprocess.run(
        [str(paths.ROOT / "msgbench"), *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )


def _harness_snapshot() -> dict[str, float]:
    return {str(p): p.stat().st_mtime for p in (paths.ROOT / "harness").rglob("*") if p.is_file()}


ABSENT = """
id = "c"
language = "c"
summary = "none: no C library for squares"
absent = "squares has no official C library"
[build]
system = "none"
[run]
argv = []
"""


def test_a_new_workload_with_its_own_trial_kind_runs_end_to_end(tmp_path):
    before = _harness_snapshot()
    w = _workload(tmp_path)
    (w / "impls" / "c").mkdir()
    (w / "impls" / "c" / "impl.toml").write_text(ABSENT)  # a language with none: kept, said why
    listed = _msgbench(tmp_path, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert {i["impl"] for i in json.loads(listed.stdout)} == {"floor", "python", "wrong", "c"}

    built = _msgbench(tmp_path, "build", "squares", "--impl", "c")
    assert built.returncode == 0, built.stderr
    assert "skipped squares/c: absent: squares has no official C library" in built.stderr

    r = _msgbench(tmp_path, "bench", "squares", "--profile", "smoke", "--no-build")
    # `wrong` fails its conformance suite: not measured, so the run exits 1 but goes on.
    assert r.returncode == 1, r.stdout + r.stderr
    assert "planned duration" in r.stderr
    (run_dir,) = [p for p in (tmp_path / "results").iterdir() if p.is_dir()]
    doc = json.loads((run_dir / "results.json").read_text())
    rows = {(x["impl"], x["metric"]): x for x in doc["results"]}
    assert rows[("python", "ns_per_op")]["status"] == "ok"
    assert rows[("python", "ns_per_op")]["n"] == 2
    assert rows[("floor", "cpu")]["median"] > 0
    assert rows[("wrong", "ns_per_op")]["status"] == "fail"
    verdicts = {v["impl"]: v for v in doc["verify"]}
    assert verdicts["python"]["passed"] == 1 and verdicts["wrong"]["failed"] == 1
    # The absent C row: not applicable in verify, skipped with the reason, said once.
    assert verdicts["c"]["absent"] and not verdicts["c"]["error"] and not verdicts["c"]["failed"]
    assert rows[("c", "ns_per_op")]["status"] == "skipped"
    assert rows[("c", "ns_per_op")]["reason"] == "absent: squares has no official C library"
    assert "c" not in {m["impl"] for m in doc["metrics"]}
    assert (run_dir / "report.html").stat().st_size > 0
    md = (run_dir / "report.md").read_text()
    assert "squares" in md and md.count("squares has no official C library") == 1
    # Durations were kept for the planner of the next run.
    assert doc["durations"]["trials"]["squares"]["n1000"]["python"]
    assert _harness_snapshot() == before, "adding a workload must not touch the harness"


def test_an_unknown_trial_kind_is_rejected_when_manifests_load(tmp_path):
    _workload(tmp_path, kind="self-timd")
    r = _msgbench(tmp_path, "list")
    assert r.returncode == 2
    assert "'self-timd' is not a trial kind" in r.stderr
    assert "self-timed" in r.stderr and "server" in r.stderr and "stdio" in r.stderr


def test_a_kind_that_needs_a_driver_requires_one(tmp_path):
    _workload(tmp_path, kind="stdio")
    r = _msgbench(tmp_path, "list")
    assert r.returncode == 2
    assert "needs a driver" in r.stderr


@pytest.mark.parametrize("bad", ['role = "speed"', 'role = "latency"'])
def test_metric_roles_are_validated(tmp_path, bad):
    w = _workload(tmp_path)
    text = (w / "workload.toml").read_text()
    text = text.replace('role = "cpu"', bad)  # "latency" without a percentile is also wrong
    (w / "workload.toml").write_text(text)
    r = _msgbench(tmp_path, "list")
    assert r.returncode == 2
    assert "metric cpu" in r.stderr
