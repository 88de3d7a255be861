"""Instruction counts (`bench --measure instructions`): the implementation's argv under valgrind,
the N / 2N differencing, the plan of eligible scenarios, the rows and the report section; and one
real count under valgrind that must repeat."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from msgbench import instructions, pipeline, registry, report, results, runner, trials
from msgbench.instructions import Count
from msgbench.trials import TrialFailed

MARK = '{ param = "iterations", ops = "ops" }'


def _marked(w: registry.Workload, table: str = MARK, iterations: int = 7) -> registry.Workload:
    """The toy workload with its `ping` scenario marked for instruction counts."""
    toml = w.dir / "workload.toml"
    text = toml.read_text().replace(
        "params.smoke = { iterations = 7 }",
        f"params.smoke = {{ iterations = {iterations} }}\ninstructions = {table}",
        1,
    )
    toml.write_text(text)
    registry.load.cache_clear()
    return registry.workload("toy")


def _ctx(w: registry.Workload, tmp_path: Path, **extra) -> trials.TrialContext:
    s, impl = w.scenarios["ping"], w.impls["fast"]
    where = runner.Placement("none", (), ())
    return trials.TrialContext(w, s, impl, "smoke", where, tmp_path, 5, **extra)


class FakeValgrindKind(trials.TrialKind):
    """A kind that does what a kind under valgrind leaves behind: one count file where the
    wrapped argv says, with I(n) = startup + cost * n instructions."""

    name = "fake-valgrind"

    def __init__(self, startup: int, cost: int, use_wrap: bool = True):
        self.startup, self.cost, self.use_wrap = startup, cost, use_wrap
        self.seen: list[tuple[list[str], int]] = []

    def run(self, ctx: trials.TrialContext) -> dict:
        argv = ctx.impl_argv(ctx.impl.argv()) if self.use_wrap else ctx.impl.argv()
        args = ctx.scenario_argv()
        n = int(args[args.index("--iterations") + 1])
        self.seen.append((args, ctx.timeout_s))
        out = [a.split("=", 1)[1] for a in argv if a.startswith("--cachegrind-out-file=")]
        if out:
            count = self.startup + self.cost * n
            Path(out[0].replace("%p", "4242")).write_text(f"events: Ir\nsummary: {count}\n")
        return {"ops": n}


# --- the argv -------------------------------------------------------------------------------


def test_the_implementation_argv_is_wrapped_whole_with_counts_in_the_trial_folder(tmp_path):
    argv = ["/bin/impl", "--port", "4000"]
    wrapped = instructions.wrap_argv(argv, tmp_path)
    assert wrapped[0] == "valgrind"
    assert wrapped[-3:] == argv  # the implementation's own argv, untouched, last
    assert "--tool=cachegrind" in wrapped and "--cache-sim=no" in wrapped
    assert "--trace-children=yes" in wrapped  # an implementation that execs is still counted
    assert f"--cachegrind-out-file={tmp_path}/cachegrind.out.%p" in wrapped
    assert f"--log-file={tmp_path}/valgrind.%p.log" in wrapped  # not in the impl's own log


@pytest.mark.parametrize("kind_name", ["stdio", "server"])
def test_every_builtin_kind_starts_the_implementation_through_the_wrap(
    fake_lab, tmp_path, kind_name
):
    ctx = _ctx(fake_lab, tmp_path, wrap=lambda a: ["wrapper", "-x", *a])
    argv = trials.builtin()[kind_name].call(ctx).argv()
    after = argv[argv.index("--") + 1 :]
    assert after[:2] == ["wrapper", "-x"]
    assert after[2:] == fake_lab.impls["fast"].argv()
    # the driver is not wrapped, and the implementation's cwd is still its own
    assert argv[0] != "wrapper"
    assert argv[argv.index("--impl-cwd") + 1] == fake_lab.impls["fast"].cwd()


def test_a_trial_may_replace_the_scenario_parameters(fake_lab, tmp_path):
    plain = _ctx(fake_lab, tmp_path).scenario_argv()
    assert plain[plain.index("--iterations") + 1] == "7"
    doubled = _ctx(fake_lab, tmp_path, params={"iterations": 14}).scenario_argv()
    assert doubled[doubled.index("--iterations") + 1] == "14"


# --- the arithmetic --------------------------------------------------------------------------


def test_per_op_is_the_difference_of_the_two_runs_over_their_extra_operations():
    short = Count(n=1000, ops=1000, instructions=4_391_221)
    long = Count(n=2000, ops=2000, instructions=8_349_221)
    assert instructions.per_op(short, long) == pytest.approx(3958.0)
    # start-up cancels: the same cost per op whatever the fixed part
    assert instructions.per_op(
        Count(10, 20, 1_000_000 + 20 * 7), Count(20, 40, 1_000_000 + 40 * 7)
    ) == pytest.approx(7.0)


@pytest.mark.parametrize(
    ("short", "long", "why"),
    [
        (Count(10, 10, 100), Count(20, 10, 200), "not more than"),  # the driver did no more ops
        (Count(10, 10, 500), Count(20, 20, 400), "no per-operation cost"),  # fewer instructions
    ],
)
def test_a_difference_that_is_no_cost_fails_the_trial(short, long, why):
    with pytest.raises(TrialFailed, match=why):
        instructions.per_op(short, long)


def test_the_counts_of_every_process_are_summed(tmp_path):
    (tmp_path / "cachegrind.out.11").write_text("desc: x\nevents: Ir\nsummary: 1000\n")
    (tmp_path / "cachegrind.out.12").write_text("events: Ir\nsummary: 234\n")  # a child
    (tmp_path / "valgrind.11.log").write_text("summary: 99999\n")  # not a count file
    assert instructions.read_total(tmp_path) == 1234


def test_no_count_file_or_a_truncated_one_fails_the_trial_clearly(tmp_path):
    with pytest.raises(TrialFailed, match="wrote no count"):
        instructions.read_total(tmp_path)
    (tmp_path / "cachegrind.out.7").write_text("events: Ir\nfl=x.c\n")
    with pytest.raises(TrialFailed, match="no summary line"):
        instructions.read_total(tmp_path)


def test_a_trial_runs_n_then_2n_under_the_wrap_and_reports_the_cost_per_op(fake_lab, tmp_path):
    w = _marked(fake_lab, iterations=500)
    kind = FakeValgrindKind(startup=2_000_000, cost=37)
    doc = instructions.measure_trial(kind, _ctx(w, tmp_path))
    assert doc["instructions"]["per_op"] == pytest.approx(37.0)
    assert doc["instructions"]["n"] == [500, 1000]
    assert doc["instructions"]["instructions"] == [2_000_000 + 37 * 500, 2_000_000 + 37 * 1000]
    runs = [args[args.index("--iterations") + 1] for args, _ in kind.seen]
    assert runs == ["500", "1000"]
    # the timeout allows valgrind's slowdown, never less than the workload's own
    assert all(timeout >= 5 for _, timeout in kind.seen)
    assert "37.0 per op" in (tmp_path / "toy-driver.log").read_text()
    second = instructions.measure_trial(kind, _ctx(w, tmp_path))  # a fresh folder per trial
    assert second["instructions"]["per_op"] == pytest.approx(37.0)
    assert len(list((tmp_path / "instructions" / "toy-ping-fast").iterdir())) == 2


def test_a_kind_that_bypasses_the_wrap_fails_instead_of_reporting_nothing(fake_lab, tmp_path):
    w = _marked(fake_lab)
    with pytest.raises(TrialFailed, match="TrialContext.wrap"):
        instructions.measure_trial(FakeValgrindKind(0, 1, use_wrap=False), _ctx(w, tmp_path))


def test_the_timeout_allows_valgrinds_slowdown_of_the_recorded_duration(fake_lab, tmp_path):
    w = _marked(fake_lab)
    (w.dir / "durations.json").write_text('{"trials": {"smoke": {"ping": {"fast": 20.0}}}}')
    assert instructions.timeout_s(_ctx(w, tmp_path)) == instructions.SLOWDOWN * 20


# --- manifests, plan, rows -------------------------------------------------------------------


def test_a_marked_scenario_is_parsed_and_adds_the_metric(fake_lab):
    w = _marked(fake_lab)
    assert w.scenarios["ping"].instructions == instructions.Counting("iterations", "ops")
    assert w.scenarios["in-browser"].instructions is None
    assert w.metric_def(instructions.METRIC)["unit"] == "instr/op"
    assert w.metric_def(instructions.METRIC)["better"] == "lower"


@pytest.mark.parametrize(
    ("table", "why"),
    [
        ('{ param = "iterations" }', "must be"),
        ('{ param = "iterations", ops = "" }', "non-empty"),
        ('{ param = "rounds", ops = "ops" }', "'rounds' is None in profile smoke"),
        ("true", "must be"),
    ],
)
def test_a_wrong_instructions_table_is_a_manifest_error(fake_lab, table, why):
    with pytest.raises(registry.ManifestError, match=why):
        _marked(fake_lab, table)


def _request(**kw) -> pipeline.BenchRequest:
    return pipeline.BenchRequest(
        workload="toy", profile="smoke", placement="none", measure="instructions", **kw
    )


def test_without_a_marked_scenario_the_plan_is_a_clear_usage_error(fake_lab):
    with pytest.raises(pipeline.PlanError, match="no scenario here is counted in instructions"):
        pipeline.make_plan(_request())


def test_the_plan_counts_the_marked_scenarios_and_refuses_an_unmarked_one(fake_lab):
    w = _marked(fake_lab)
    bp = pipeline.make_plan(_request())
    [(_, scenarios, _)] = bp.plan
    assert [s.name for s in scenarios] == ["ping"]
    assert scenarios[0].primary == instructions.METRIC
    assert scenarios[0].metrics == [instructions.METRIC]
    assert w.scenarios["ping"].primary == "p50"  # the workload's own scenario is unchanged
    with pytest.raises(pipeline.PlanError, match="not counted in instructions.*toy/ping"):
        pipeline.make_plan(_request(scenarios=("in-browser",)))


def test_without_valgrind_the_plan_says_how_to_install_it(fake_lab, monkeypatch):
    _marked(fake_lab)
    monkeypatch.setattr(instructions.shutil, "which", lambda _name: None)
    with pytest.raises(pipeline.PlanError, match="valgrind is not installed.*make setup"):
        pipeline.make_plan(_request())


def test_counted_trials_become_instruction_rows(fake_lab, tmp_path, monkeypatch):
    w = _marked(fake_lab, iterations=100)
    costs = {"floor": 10, "floor-aa": 10, "fast": 25}  # (the floor's A/A twin runs too)

    def fake_kind(_w, s):
        kind = FakeValgrindKind(startup=5000, cost=0)

        def run(ctx):
            kind.cost = costs[ctx.impl.id]
            return FakeValgrindKind.run(kind, ctx)

        kind.run = run
        return kind

    monkeypatch.setattr(runner, "trial_kind", fake_kind)
    s = instructions.counted_scenario(w.scenarios["ping"])
    impls = [w.impls["floor"], w.impls["fast"]]
    m = runner.measure(
        [(w, [s], impls)],
        "smoke",
        runner.Placement("none", (), ()),
        tmp_path,
        seed=1,
        quantity="instructions",
    )
    [row] = results.result_rows(w, s, w.impls["fast"], m, None)
    assert (row["metric"], row["unit"], row["better"]) == (instructions.METRIC, "instr/op", "lower")
    assert row["median"] == pytest.approx(25.0) and row["cv"] == pytest.approx(0.0)
    assert row["n"] == w.repetitions("smoke")


def test_an_instruction_run_keeps_no_durations_and_no_tables_of_timed_metrics():
    doc = {
        "run": {"id": "r", "measure": "instructions", "profile": "quick"},
        "durations": {"trials": {}, "verify": {}},
        "workloads": [{"name": "toy", "targets": [{"metric": "p50"}], "side_by_side": [{}]}],
    }
    with pytest.raises(pipeline.PlanError, match="counted instructions"):
        pipeline.record_durations(doc)
    instructions.drop_time_tables(doc)
    assert doc["workloads"][0]["targets"] == [] and doc["workloads"][0]["side_by_side"] == []


# --- the report -------------------------------------------------------------------------------


def _run_doc(measure: str | None) -> dict:
    run = {"id": "r1", "profile": "smoke", "commit": "abc", "started": "2026-01-01T00:00:00"}
    if measure:
        run["measure"] = measure
        run["instructions"] = instructions.describe()
    metric = instructions.METRIC if measure == "instructions" else "p50"
    unit = "instr/op" if measure == "instructions" else "µs"
    rows = []
    for impl, samples in (("floor", [89.0, 89.0, 89.0]), ("go", [6500.0, 6600.0, 6400.0])):
        rows.append(
            {
                "workload": "toy",
                "scenario": "ping",
                "impl": impl,
                "metric": metric,
                "unit": unit,
                "better": "lower",
                "n": 3,
                "median": sorted(samples)[1],
                "ci95": [min(samples), max(samples)],
                "cv": 0.0 if impl == "floor" else 0.0154,
                "noisy": False,
                "samples": samples,
                "status": "ok",
                "reason": "",
            }
        )
    return {
        "run": run,
        "workloads": [
            {
                "name": "toy",
                "baseline": "floor",
                "scenarios": [{"name": "ping", "primary": metric, "metrics": {metric: {}}}],
            }
        ],
        "impls": [
            {"workload": "toy", "impl": "floor", "language": "c"},
            {"workload": "toy", "impl": "go", "language": "go"},
        ],
        "results": rows,
    }


def test_the_report_shows_counts_with_their_spread_and_the_caveat_beside_them():
    md = report.render_md(_run_doc("instructions"))
    section = md[md.index("### Instructions per operation") :]
    assert section.index(instructions.CAVEAT) < section.index("| implementation |")
    assert "system calls" in instructions.CAVEAT and "not time" in instructions.CAVEAT
    go_line = next(line for line in section.splitlines() if line.startswith("| go |"))
    assert "6,500 instr/op" in go_line and "1.54%" in go_line  # the median and its CV
    assert "6,400 – 6,600 instr/op" in go_line  # min–max
    assert "73.0×" in go_line  # × the floor


def test_a_run_stored_before_instruction_counts_renders_without_the_section():
    md = report.render_md(_run_doc(None))
    assert "Instructions per operation" not in md
    assert "## toy" in md


# --- the real thing ----------------------------------------------------------------------------

TINY = r"""
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
    long n = atol(argv[1]);
    volatile unsigned long h = 1469598103934665603UL;
    for (long i = 0; i < n; i++) { h ^= (unsigned long)i; h *= 1099511628211UL; }
    printf("%lu\n", h);
    return 0;
}
"""


class DirectKind(trials.TrialKind):
    """Runs the implementation's program itself (no driver): argv = program N."""

    name = "direct"

    def __init__(self, program: Path):
        self.program = program

    def run(self, ctx: trials.TrialContext) -> dict:
        n = ctx.params["iterations"]
        argv = ctx.impl_argv([str(self.program), str(n)])
        subprocess.run(argv, check=True, capture_output=True, timeout=ctx.timeout_s)
        return {"ops": n}


def test_a_real_program_under_valgrind_repeats_its_count_within_one_percent(fake_lab, tmp_path):
    """Real valgrind on a tiny C loop, two trials of N and 2N (four valgrind runs, a few
    seconds): the count per operation is positive, small (the loop, not the start-up) and the
    same in both trials. Fails, never skips, when valgrind or cc is missing: `make setup`
    installs both."""
    try:
        instructions.require_valgrind()
    except RuntimeError as e:
        pytest.fail(str(e))
    cc = shutil.which("cc")
    if cc is None:
        pytest.fail("no C compiler (cc): `make setup` installs build-essential")
    program = tmp_path / "tiny"
    source = tmp_path / "tiny.c"
    source.write_text(TINY)
    subprocess.run([cc, "-O1", "-o", str(program), str(source)], check=True, timeout=120)
    w = _marked(fake_lab, iterations=100_000)
    counts = [
        instructions.measure_trial(DirectKind(program), _ctx(w, tmp_path))["instructions"]
        for _ in range(2)
    ]
    first, second = (c["per_op"] for c in counts)
    assert 1 < first < 100, counts  # a handful of instructions per loop turn
    assert abs(first - second) / first < 0.01, counts
