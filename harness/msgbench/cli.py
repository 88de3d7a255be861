"""The `msgbench` command line: argument handling and console output only.

The work itself lives in registry (manifests), build, verify, runner (measurement), results
(the run document), store, report and metrics; this module wires them to commands.
"""

from __future__ import annotations

import json
import shlex
import sys
import time
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import (
    aa,
    budget,
    hostagent,
    hostsfile,
    paths,
    pipeline,
    registry,
    runner,
    sanitize,
    store,
    verify,
)
from . import build as builder
from . import doctor as doctor_mod
from . import metrics as code_metrics
from . import seeds as seedfiles
from .registry import Impl, ManifestError
from .report.sections import seeds as seed_section

console = Console(stderr=True, highlight=False)
out = Console(highlight=False)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def app() -> None:
    """msgbench: one lab for comparing messaging systems in C, C++, Rust, Go and Python."""


workload_arg = click.argument("workload", required=False)
impl_opt = click.option(
    "--impl", "-i", "impl", multiple=True, help="implementation id (repeatable; default: all)"
)
json_opt = click.option("--json", "as_json", is_flag=True, help="machine-readable output")


def _select_build_profile(ctx: click.Context, param: click.Parameter, value: str) -> str:
    paths.select_build_profile(value)
    return value


build_profile_opt = click.option(
    "--profile",
    "build_profile",
    type=click.Choice(paths.BUILD_PROFILES),
    default=lambda: paths.BUILD_PROFILE,
    show_default="release, or $MSGBENCH_BUILD_PROFILE",
    callback=_select_build_profile,
    help="build profile: release (measured) or sanitize (C/C++ with ASan+UBSan, Go with -race, "
    "in build/sanitize/; docs/decisions.md)",
)


def in_build_profile(chosen: list[Impl], named: tuple[str, ...]) -> list[Impl]:
    """The implementations the selected build profile builds; naming one it does not build
    (with --impl) is a usage error. Release builds every one."""
    if paths.BUILD_PROFILE == "release":
        return chosen
    left_out = [i for i in chosen if not builder.in_profile(i) and not i.absent]
    if named and left_out:
        raise usage_error(
            f"{left_out[0].name} ({left_out[0].build.get('system')}) is not built by the "
            f"{paths.BUILD_PROFILE} profile: it covers the CMake (C, C++) and Go implementations"
        )
    return [i for i in chosen if builder.in_profile(i) and not i.absent]


def usage_error(message: str) -> click.UsageError:
    return click.UsageError(message)


def select(
    workload: str | None,
    impls: tuple[str, ...] | list[str] | None,
    with_seedbuilds: bool = False,
) -> list[Impl]:
    try:
        chosen = registry.select(workload, list(impls) or None, with_seedbuilds)
    except ManifestError as e:
        raise usage_error(str(e)) from None
    if impls and not chosen:
        raise usage_error(f"no implementation named {', '.join(impls)} in any workload")
    return chosen


def progress() -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


# ---------------------------------------------------------------------------------- commands


@app.command()
def doctor() -> None:
    """Check toolchains, packages, CPUs and pinning; print the exact fix for each problem."""
    problems = doctor_mod.run(out)
    sys.exit(1 if problems else 0)


@app.command("list")
@workload_arg
@json_opt
def list_cmd(workload: str | None, as_json: bool) -> None:
    """List every workload and implementation from the manifests."""
    chosen = select(workload, (), with_seedbuilds=True)  # every row a manifest declares
    if as_json:
        out.print_json(json.dumps([i.as_json() for i in chosen]))
        return
    table = Table("workload", "impl", "language", "variant", "built", "run")
    for i in chosen:
        j = i.as_json()
        table.add_row(
            j["workload"],
            j["impl"],
            j["language"],
            j["variant"] or "-",
            "absent" if j["absent"] else "yes" if j["built"] else "no",
            f"[dim]{j['absent']}[/]"
            if j["absent"]
            else shlex.join(paths.rel(a) if a.startswith("/") else a for a in j["run"]),
        )
    out.print(table)


def do_build(chosen: list[Impl], with_drivers: bool = True) -> list[builder.BuildResult]:
    """Build implementations (and their workloads' drivers) into the selected profile's trees."""
    results_: list[builder.BuildResult] = []
    workloads = {i.workload for i in chosen}
    steps = len(chosen) + (len(workloads) if with_drivers else 0)
    with progress() as bar:
        task = bar.add_task("building", total=steps)
        cmake_ok = {False: True, True: True}  # by tree: the seed's build has its own
        for seed in (False, True):
            if any(i.build["system"] == "cmake" and bool(i.seedbuild_of) == seed for i in chosen):
                bar.update(task, description="configuring cmake")
                log = paths.BUILD_LOGS / (
                    "cmake-configure-seedbuild.log" if seed else "cmake-configure.log"
                )
                cmake_ok[seed] = builder.configure_cmake(log, seed)[0]
        if with_drivers:
            for name in sorted(workloads):
                bar.update(task, description=f"building driver {name}")
                results_.extend(builder.build_drivers(registry.workload(name)))
                bar.advance(task)
        for impl in chosen:
            bar.update(task, description=f"building {impl.name}")
            results_.append(builder.build_impl(impl, cmake_ok[bool(impl.seedbuild_of)]))
            bar.advance(task)
    for r in results_:
        if r.skipped:
            console.print(f"[dim]skipped[/] {r.name}: {r.message}")
        elif r.ok:
            console.print(f"[green]built[/]  {r.name}")
        else:
            console.print(f"[red]FAILED[/] {r.name}: {r.message} — log: {paths.rel(r.log)}")
    return results_


@app.command("build")
@workload_arg
@impl_opt
@build_profile_opt
def build_cmd(workload: str | None, impl: tuple[str, ...], build_profile: str) -> None:
    """Build implementations (and drivers) with the flags of profiles.toml.

    With --profile sanitize: only the CMake and Go implementations, instrumented, into
    build/sanitize/ (drivers, Rust and Python are built by the release profile alone)."""
    chosen = in_build_profile(select(workload, impl), impl)
    built = do_build(chosen, with_drivers=build_profile == "release")
    sys.exit(0 if all(r.ok for r in built) else 1)


def do_verify(chosen: list[Impl], log_dir: Path) -> dict[tuple[str, str], verify.Verdict]:
    """Each workload's suite against `chosen`; with the sanitize profile, under the sanitizer
    plugin, and a report no test claimed is an error of its implementation's verdict."""
    sanitizing = paths.BUILD_PROFILE == "sanitize"
    extra_args = ["-p", "msgbench.sanitize_plugin"] if sanitizing else []
    verdicts: dict[tuple[str, str], verify.Verdict] = {}
    by_workload: dict[str, list[Impl]] = {}
    for i in chosen:
        by_workload.setdefault(i.workload, []).append(i)
    with progress() as bar:
        task = bar.add_task("conformance", total=len(by_workload))
        for name, impls in by_workload.items():
            bar.update(task, description=f"conformance {name} ({len(impls)} implementations)")
            done = verify.run(registry.workload(name), impls, log_dir, extra_args)
            for impl_id, v in done.items():
                verdicts[(name, impl_id)] = v
            bar.advance(task)
    if sanitizing:
        claim_sanitizer_reports(verdicts)
    print_matrix(verdicts)
    if sanitizing:
        print_sanitizer_reports(verdicts)
    return verdicts


def print_matrix(verdicts: dict[tuple[str, str], verify.Verdict]) -> None:
    for name in dict.fromkeys(w for w, _ in verdicts):
        row = {i: v for (w, i), v in verdicts.items() if w == name}
        tests = sorted({t for v in row.values() for t in v.tests})
        table = Table(title=f"{name} conformance", show_lines=False)
        table.add_column("test")
        for impl_id in row:
            table.add_column(impl_id, justify="center")
        for t in tests:
            cells = []
            for v in row.values():
                s = v.tests.get(t, "-")
                cells.append({"pass": "[green]pass[/]", "FAIL": "[red]FAIL[/]"}.get(s, s))
            table.add_row(t, *cells)
        table.add_row(
            "[b]total[/]",
            *[
                "[dim]n/a (absent)[/]"
                if v.absent
                else f"[red]{v.error}[/]"
                if v.error
                else (f"[green]{v.passed} ok[/]" if v.failed == 0 else f"[red]{v.failed} FAIL[/]")
                for v in row.values()
            ],
        )
        out.print(table)
        for impl_id, v in row.items():
            if v.absent:
                out.print(f"[dim]n/a[/]  {name}/{impl_id}: absent: {v.absent}")
            for f in v.failures:
                out.print(f"[red]FAIL[/] {name}/{impl_id} {f['test']}: {f['message']}")


@app.command("verify")
@workload_arg
@impl_opt
@build_profile_opt
def verify_cmd(workload: str | None, impl: tuple[str, ...], build_profile: str) -> None:
    """Run the conformance suite against implementations; exit 0 only if all selected pass.

    With --profile sanitize: the CMake and Go implementations' sanitize builds, each suite
    failing a test during which a sanitizer or race report appeared (msgbench.sanitize_plugin)."""
    chosen = in_build_profile(select(workload, impl), impl)
    if not chosen:
        raise usage_error(f"no implementation of the {build_profile} profile selected")
    verdicts = do_verify(chosen, paths.VERIFY_LOGS)
    sys.exit(0 if all(v.ok for v in verdicts.values()) else 1)


def claim_sanitizer_reports(verdicts: dict[tuple[str, str], verify.Verdict]) -> None:
    """A sanitize session's report that no test claimed (it appeared after the last test)
    fails its implementation; a program not built is named with the profile's build command."""
    for (name, impl_id), v in verdicts.items():
        if v.error.startswith("not built"):
            how = f"./msgbench build {name} --impl {impl_id} --profile sanitize"
            v.error = f"not built (run `{how}`)"
        files = sanitize.reports(sanitize.report_dir(name, [impl_id]))
        if files and v.ok:
            v.error = f"sanitizer report after the last test: {sanitize.summary(files[-1])}"


def print_sanitizer_reports(verdicts: dict[tuple[str, str], verify.Verdict]) -> None:
    """Every report of the sanitize sessions, by implementation, with its file."""
    for name, impl_id in verdicts:
        files = sanitize.reports(sanitize.report_dir(name, [impl_id]))
        if files:
            out.print(f"[red]sanitizer reports[/] {name}/{impl_id}:")
            out.print(sanitize.describe(files), markup=False, highlight=False)


def run_profile_opt(default: str, help_text: str):
    """--profile of a measuring command (bench, seeds): repetitions and sizes."""
    return click.option(
        "--profile",
        type=click.Choice(pipeline.PROFILES),
        default=default,
        show_default=True,
        help=help_text,
    )


no_build_opt = click.option("--no-build", is_flag=True, help="use the binaries as they are")
order_seed_opt = click.option("--seed", type=int, help="seed for the trial order (default: random)")
plan_opt = click.option(
    "--plan", "plan_only", is_flag=True, help="print the plan and its estimate; run nothing"
)


@app.command()
@workload_arg
@click.option(
    "--scenario",
    "-s",
    multiple=True,
    help="scenario name, or workload/scenario for one workload's (repeatable; default: all)",
)
@impl_opt
@run_profile_opt("quick", "repetitions and sizes (workload.toml)")
@click.option(
    "--placement",
    type=click.Choice(runner.PLACEMENTS),
    default="split",
    show_default=True,
    help="split: driver and implementation on separate CPUs; same: one CPU; none: unpinned",
)
@click.option(
    "--json",
    "json_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="also write results.json here",
)
@no_build_opt
@order_seed_opt
@plan_opt
@click.option(
    "--measure",
    type=click.Choice(pipeline.MEASURES),
    default="time",
    show_default=True,
    help="instructions: the implementation's instructions per operation under valgrind, in the "
    "single-connection scenarios marked in workload.toml",
)
@click.option(
    "--hosts",
    "hosts_path",
    type=click.Path(dir_okay=False, path_type=Path),
    help="hosts.toml: which host each role of a trial runs on (docs/hosts.md); default: this "
    "machine's process tree",
)
def bench(
    workload: str | None,
    scenario: tuple[str, ...],
    impl: tuple[str, ...],
    profile: str,
    placement: str,
    json_path: Path | None,
    no_build: bool,
    seed: int | None,
    plan_only: bool,
    measure: str,
    hosts_path: Path | None,
) -> None:
    """Build, verify, then measure; write results/<run-id>/ and store the run.

    The workload's baseline (and reference, if any) are always measured too: ratios are only
    read between results of one run. The planned duration is printed before anything runs
    (from the durations each workload keeps in durations.json), with an ETA while it runs."""
    if paths.BUILD_PROFILE != "release":  # only release builds are ever measured
        raise usage_error(
            f"bench measures release builds only ({paths.BUILD_PROFILE_ENV}="
            f"{paths.BUILD_PROFILE} is set)"
        )
    request = pipeline.BenchRequest(
        workload=workload,
        scenarios=scenario,
        impls=impl,
        profile=profile,
        placement=placement,
        seed=seed,
        build=not no_build,
        command="msgbench " + shlex.join(sys.argv[1:]),
        measure=measure,
        hosts_file=_hosts_file(hosts_path),
    )
    outcome = run_bench(request, plan_only)
    if outcome is None:
        return
    if json_path:
        json_path.write_text(outcome.json_file.read_text())
    print_summary(outcome.doc)
    out.print(f"results: {paths.rel(outcome.json_file)}")
    out.print(f"report:  {paths.rel(outcome.run_dir / 'report.html')}")
    sys.exit(outcome.exit_code)


def _hosts_file(path: Path | None) -> hostsfile.HostsFile | None:
    """--hosts, read and checked (a usage error names the field)."""
    if path is None:
        return None
    try:
        return hostsfile.load(path)
    except hostsfile.HostsFileError as e:
        raise usage_error(str(e)) from None


def run_bench(request: pipeline.BenchRequest, plan_only: bool) -> pipeline.Outcome | None:
    """Plan, then (unless plan_only, which prints the plan) build, verify and measure."""
    try:
        bp = pipeline.make_plan(request)
        if plan_only:
            trials = runner.planned_trials(bp.plan, request.profile)
            ConsoleHooks().planned(
                "(plan only)", bp, budget.estimate(bp.plan, request.profile, trials), len(trials)
            )
            return None
        return pipeline.execute(bp, ConsoleHooks())
    except pipeline.PlanError as e:
        raise usage_error(str(e)) from None


@app.command("seeds")
@run_profile_opt(
    "full", "repetitions (workload.toml); full runs the seeds' own sizes where a scenario has them"
)
@no_build_opt
@order_seed_opt
@plan_opt
def seeds_cmd(profile: str, no_build: bool, seed: int | None, plan_only: bool) -> None:
    """Rerun every seed's experiment in one run and write its report's Seeds section.

    The scenarios are the ones seeds/*.toml names (seeds/README.md), each with every
    implementation of its workload, the floor and the reference; the report opens with the
    Seeds section: each seed's figures, the rerun, and a verdict on each claim computed from
    this run."""
    try:
        needed = seedfiles.needed(seedfiles.load())
    except ManifestError as e:
        raise usage_error(str(e)) from None
    request = pipeline.BenchRequest(
        scenarios=tuple(f"{w}/{s}" for w, names in needed.items() for s in names),
        profile=profile,
        seed=seed,
        build=not no_build,
        command="msgbench " + shlex.join(sys.argv[1:]),
        seed_builds=True,
    )
    outcome = run_bench(request, plan_only)
    if outcome is None:
        return
    print_seed_verdicts(outcome.doc)
    out.print(f"results: {paths.rel(outcome.json_file)}")
    out.print(f"report:  {paths.rel(outcome.run_dir / 'report.html')}#seeds")
    sys.exit(outcome.exit_code)


def print_seed_verdicts(doc: dict) -> None:
    table = Table(title="The seeds' claims in this run", show_lines=False)
    for col in ("seed", "the seed says", "verdict"):
        table.add_column(col)
    for r in seed_section.summary_rows(doc):
        table.add_row(r["seed"], r["says"], r["verdict"])
    out.print(table)


class ConsoleHooks:
    """The pipeline's output on the console: rich progress bars in a terminal, one line per
    trial otherwise (CI logs, `make bench | tee`), so progress and the ETA are never hidden."""

    def __init__(self) -> None:
        self._bar: Progress | None = None
        self._started = time.monotonic()

    def build(self, impls: list[Impl]) -> list[builder.BuildResult]:
        return do_build(impls)

    def verify(self, impls: list[Impl], log_dir: Path) -> dict[tuple[str, str], verify.Verdict]:
        return do_verify(impls, log_dir)

    def planned(
        self, run_id: str, bp: pipeline.BenchPlan, est: budget.Estimate, measured: int
    ) -> None:
        where = bp.where
        fmt = budget.fmt_duration
        console.print(
            f"run {run_id}: {measured} trials, profile {bp.request.profile}, placement "
            f"{where.mode} (driver CPUs {list(where.driver_cpus) or 'any'}, "
            f"implementation CPUs {list(where.impl_cpus) or 'any'})"
        )
        parts = ", ".join(f"{w} {fmt(s)}" for w, s in est.per_workload.items())
        console.print(
            f"planned duration: about {fmt(est.total_s)} (conformance {fmt(est.verify_s)}, "
            f"trials {fmt(est.measure_s)}; {parts}), plus any build"
        )

    def measuring(self, total: int, eta: budget.Eta):
        self._started = time.monotonic()
        count = {"n": 0}
        if console.is_terminal:
            self._bar = progress()
            self._bar.start()
            task = self._bar.add_task("measuring", total=total)

        def show(done: runner.TrialDone) -> None:
            count["n"] += 1
            what = f"{done.workload} {done.scenario} {done.impl}"
            left = budget.fmt_duration(eta.remaining_s)
            if self._bar is not None:
                self._bar.update(
                    task, advance=1 + done.rounds_dropped, description=f"{what} (ETA {left})"
                )
                return
            status = "FAILED" if done.failed else f"{done.seconds:.1f} s"
            elapsed = budget.fmt_duration(time.monotonic() - self._started)
            console.print(f"[{count['n']}/{total}] {what}: {status}; elapsed {elapsed}, ETA {left}")

        return show

    def finished_measuring(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def message(self, text: str) -> None:
        console.print(f"[yellow]{text}[/]")


@app.command()
@click.argument("run", required=False)
def durations(run: str | None) -> None:
    """Keep a run's trial and conformance durations in workloads/<w>/durations.json, from
    which `bench` plans (RUN: id or prefix; default: the latest)."""
    try:
        doc = store.load(run)
        written = pipeline.record_durations(doc)
    except KeyError as e:
        raise usage_error(str(e.args[0])) from None
    except pipeline.PlanError as e:
        raise usage_error(str(e)) from None
    for path in written:
        out.print(f"wrote {paths.rel(path)}")


def print_summary(doc: dict) -> None:
    absent = {(i["workload"], i["impl"]): i["absent"] for i in doc["impls"] if i.get("absent")}
    for w in doc["workloads"]:
        for (name, impl_id), why in absent.items():  # said once, not in every scenario's table
            if name == w["name"]:
                out.print(f"{name}/{impl_id}: absent: {why}")
        for s in w["scenarios"]:
            table = Table(title=f"{w['name']} / {s['name']}  ({s['primary']})")
            for col in ("impl", "median", "95% CI", "n", "status"):
                table.add_column(col, justify="right" if col != "impl" else "left")
            for r in doc["results"]:
                if (r["workload"], r["scenario"]) != (w["name"], s["name"]):
                    continue
                if r["metric"] != s["primary"] or (r["workload"], r["impl"]) in absent:
                    continue
                if r.get("aa_of"):  # the A/A twin: summed up in its own line below
                    continue
                if r["status"] != "ok":
                    table.add_row(r["impl"], "-", "-", "0", f"[red]{r['status']}[/] {r['reason']}")
                    continue
                lo, hi = r["ci95"]
                table.add_row(
                    r["impl"],
                    f"{r['median']:.4g} {r['unit']}",
                    f"{lo:.4g}–{hi:.4g}",
                    str(r["n"]),
                    "noisy" if r["noisy"] else "ok",
                )
            out.print(table)
            line = aa.summary_line(s.get("aa"), s["primary"])
            if line:
                out.print(line)


@app.command("report")
@click.argument("run", required=False)
def report_cmd(run: str | None) -> None:
    """Re-render the report of a stored or published run (RUN: id or prefix; default: the
    latest) into results/<run-id>/."""
    from . import report
    from .report import stored

    try:
        doc = store.load(run)
    except KeyError as e:
        raise usage_error(str(e.args[0])) from None
    run_dir = store.run_dir(doc["run"]["id"])
    report.write(run_dir, stored.ready(doc))
    out.print(f"report:  {paths.rel(run_dir / 'report.html')}")


@app.command("metrics")
@workload_arg
@impl_opt
@json_opt
def metrics_cmd(workload: str | None, impl: tuple[str, ...], as_json: bool) -> None:
    """Code metrics (lizard) of the source files each manifest names."""
    rows = [code_metrics.measure(i) for i in select(workload, impl) if not i.absent]
    if as_json:
        out.print_json(json.dumps(rows))
        return
    table = Table(
        "workload", "impl", "language", "files", "nloc", "functions", "CCN mean", "CCN max"
    )
    for r in rows:
        table.add_row(
            r["workload"],
            r["impl"],
            r["language"],
            str(r["files"]),
            str(r["nloc"]),
            str(r["functions"]),
            f"{r['ccn_mean']:.2f}",
            str(r["ccn_max"]),
        )
    out.print(table)


@app.command()
@click.argument("run_a")
@click.argument("run_b", required=False)
@click.option("--fail-if-worse", "fail_pct", type=click.FloatRange(min=0), metavar="PCT",
              help="exit 1 when a result of B is significantly worse than A by more than PCT "
              "percent (for `git bisect run`)")  # fmt: skip
@click.option("--metric", "-m", multiple=True, help="metric (repeatable; 'all'; default: each "
              "scenario's primary metric)")  # fmt: skip
@click.option("--workload", "-w", multiple=True, help="workload (repeatable; default: all)")
@click.option("--scenario", "-s", multiple=True, help="scenario (repeatable; default: all)")
@impl_opt
def compare(run_a, run_b, fail_pct, metric, workload, scenario, impl) -> None:
    """B against A (RUN_B default: the latest run) for every result both measured: the ratio
    B/A with its bootstrap CI, and a verdict read against the runs' A/A noise band.

    Exit status: 0 = compared (with --fail-if-worse: no significant regression beyond PCT);
    1 = a regression beyond PCT (listed); 125 = the runs cannot be compared (unknown run, no
    result in common): `git bisect run` skips that commit (docs/decisions.md)."""
    from . import comparison

    try:
        a, b = store.load(run_a), store.load(run_b)
    except KeyError as e:
        console.print(f"msgbench compare: cannot compare: {e.args[0]}")
        sys.exit(comparison.CANNOT_COMPARE)
    rows = comparison.compare(
        a, b, metrics=metric, workloads=workload, scenarios=scenario, impls=impl
    )
    if not rows:
        console.print(
            f"msgbench compare: cannot compare: runs {a['run']['id']} and {b['run']['id']} "
            "have no measured result in common (check --metric, --workload, --scenario, --impl)"
        )
        sys.exit(comparison.CANNOT_COMPARE)
    print_comparison(a, b, rows)
    if fail_pct is None:
        return
    worse = comparison.regressions(rows, fail_pct)
    for r in worse:
        out.print(f"[red]worse[/] {'/'.join(r.key)}: {r.diff['ratio']:.3f}× "
                  f"({r.worse_by():.1%} worse, more than {fail_pct:g}%)")  # fmt: skip
    if worse:
        sys.exit(comparison.REGRESSED)
    out.print(f"no result significantly worse by more than {fail_pct:g}%")


def print_comparison(a: dict, b: dict, rows: list) -> None:
    """One table per scenario and metric: B against A for each implementation."""
    out.print(f"B = {b['run']['id']} against A = {a['run']['id']}")
    questions: dict[tuple[str, str, str], list] = {}
    for r in rows:
        questions.setdefault((r.workload, r.scenario, r.metric), []).append(r)
    for (workload, scenario, metric), group in questions.items():
        table = Table("impl", "A", "B", "B/A [CI]", "A/A band", "verdict",
                      title=f"{workload} / {scenario}  ({metric})")  # fmt: skip
        for r in group:
            d = r.diff
            values = (f"{r.a['median']:.4g} {r.unit}", f"{r.b['median']:.4g} {r.unit}")
            if d is None:
                table.add_row(r.impl, *values, "—", "—", f"[dim]{r.why}[/]")
                continue
            band = f"[{d['band'][0]:.3f}, {d['band'][1]:.3f}]" if d.get("band") else "—"
            colour = {"better": "green", "worse": "red"}.get(d["verdict"], "dim")
            table.add_row(r.impl, *values, f"{d['ratio']:.3f} [{d['ci'][0]:.3f}, {d['ci'][1]:.3f}]",
                          band, f"[{colour}]{d['verdict']}[/]")  # fmt: skip
        out.print(table)
    out.print(
        "[dim]CI: bootstrap CI of the ratio of medians, Bonferroni-corrected over a scenario's "
        "implementations; A/A band: the wider of the two runs' noise bands (—: no A/A control "
        "in either run); a verdict other than tie needs the whole CI outside the band (and "
        "outside 1).[/]"
    )


@app.command("export")
@click.argument("run", required=False)
@click.option("--format", "fmt", type=click.Choice(["csv", "json", "md"]), default="csv",
              show_default=True, help="csv, json: every trial's sample; md: summary")  # fmt: skip
@click.option("--metric", "-m", multiple=True, help="metric (repeatable; default: all for csv "
              "and json, each scenario's primary for md)")  # fmt: skip
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path),
              help="write here instead of standard output")  # fmt: skip
def export_cmd(run: str | None, fmt: str, metric: tuple[str, ...], output: Path | None) -> None:
    """A stored or published run's raw samples (csv, json: one row per trial) or its summary
    (md) (RUN: id or prefix; default: the latest). Columns: docs/export.md."""
    from . import export

    try:
        doc = store.load(run)
    except KeyError as e:
        raise usage_error(str(e.args[0])) from None
    text = export.export(doc, fmt, metric)
    if output:
        output.write_text(text, encoding="utf-8")
        console.print(f"wrote {paths.rel(output)}")
    else:
        sys.stdout.write(text)


@app.command("history")
@click.argument("workload")
@click.argument("scenario", required=False)
@impl_opt
@click.option("--metric", "-m", help="metric (default: each scenario's primary metric)")
def history_cmd(workload: str, scenario: str | None, impl: tuple[str, ...], metric) -> None:
    """WORKLOAD's results over the stored and published runs: one chart per scenario (median
    and 95% CI per run, oldest first) in results/history/<workload>.html, and the steps between
    consecutive runs of one profile on one machine that lie outside the noise."""
    from . import history

    try:
        page = history.build(workload, scenario, impl, metric)
    except history.HistoryError as e:
        raise usage_error(str(e)) from None
    path = history.write(page)
    print_steps(page)
    out.print(f"history: {paths.rel(path)}")


def print_steps(page) -> None:
    flagged = [s for s in page.steps if s.flagged]
    out.print(
        f"{page.workload}: {len(page.runs)} runs, {len(page.steps)} steps between consecutive "
        f"runs of one profile on one machine, {len(flagged)} outside the noise"
    )
    if not flagged:
        return
    table = Table(title=f"{page.workload}: steps outside the noise")
    for col in ("scenario / metric", "impl", "from run → to run", "to/from [CI]", "verdict"):
        table.add_column(col, overflow="fold")  # run ids stay whole, on two lines if need be
    for s in flagged:
        colour = "green" if s.diff["verdict"] == "better" else "red"
        lo, hi = s.diff["ci"]
        table.add_row(f"{s.scenario} / {s.metric}", s.impl, f"{s.before} → {s.after}",
                      f"{s.diff['ratio']:.3f} [{lo:.3f}, {hi:.3f}]",
                      f"[{colour}]{s.diff['verdict']}[/]")  # fmt: skip
    out.print(table)


@app.command("publish")
@click.argument("run", required=False)
def publish_cmd(run: str | None) -> None:
    """Copy a stored run (RUN: id or prefix; default: the latest) to published/<run-id>/ to be
    committed: results.json and report.md, at most 1 MiB (docs/decisions.md)."""
    from . import publish

    try:
        done = publish.publish(run)
    except KeyError as e:
        raise usage_error(str(e.args[0])) from None
    except publish.PublishError as e:
        raise usage_error(str(e)) from None
    out.print(f"published {done.run_id}: {paths.rel(done.folder)} ({done.size / 1024:.0f} KiB)")


@app.group("cluster")
def cluster_cmd() -> None:
    """A two-node Ray cluster on this machine: the head here, a worker in a network namespace
    of its own (docs/hosts.md). `up` writes build/cluster/roles.toml and sweep.toml, hosts files
    for `bench --hosts`."""


@cluster_cmd.command("up")
@click.option(
    "--ray-cpus",
    default="0",
    show_default=True,
    help="CPUs Ray's own processes are pinned to (keep them off the implementation's)",
)
def cluster_up(ray_cpus: str) -> None:
    """Start the two-node cluster (stopping any earlier one first)."""
    from . import raycluster

    try:
        cpus = sorted(hostagent.cpu_list(ray_cpus))
        described = raycluster.up(cpus)
    except ValueError:
        raise usage_error(f"--ray-cpus: not a CPU list: {ray_cpus!r}") from None
    except raycluster.ClusterError as e:
        raise usage_error(f"cluster up: {e}") from None
    out.print(f"cluster at {described['address']}: head {described['head']}, worker "
              f"{described['worker']} (namespace {described['worker_netns']})")  # fmt: skip
    for name in ("roles.toml", "sweep.toml"):
        out.print(f"hosts file: {paths.rel(raycluster.STATE / name)}")


@cluster_cmd.command("down")
def cluster_down() -> None:
    """Stop the cluster's processes and delete its namespace."""
    from . import raycluster

    raycluster.down()
    out.print("cluster stopped")


@app.command("fuzz")
@workload_arg
@impl_opt
@click.option("--target", "-t", "target_names", multiple=True, help="fuzz target (repeatable)")
@click.option("--seconds", type=click.IntRange(min=1), default=120, show_default=True,
              help="campaign length per target")  # fmt: skip
@click.option("--jobs", "-j", type=click.IntRange(min=1), default=1, show_default=True,
              help="targets fuzzed at once (not a timing: every CPU may be used)")  # fmt: skip
@click.option("--replay", is_flag=True, help="no campaign: run the corpora and the crash "
              "regressions once through every target (what make test does)")  # fmt: skip
@click.option("--summary", is_flag=True, help="no campaign: total the committed record")
@click.option("--differential", is_flag=True, help="command-level differential fuzzing against "
              "the workload's reference system instead (redis: redis-server)")  # fmt: skip
@click.option("--seed", type=int, default=1, show_default=True, help="--differential's seed")
@json_opt
def fuzz_cmd(workload, impl, target_names, seconds, jobs, replay, summary, differential, seed,
             as_json) -> None:  # fmt: skip
    """Coverage-guided fuzzing of every implementation's parsers (docs/robustness.md).

    Runs a campaign of --seconds per target, stores it in the run store and appends it to the
    committed record (records/fuzz-campaigns.jsonl); --replay only replays the corpora."""
    from .fuzz import campaign as fz

    if summary:
        rows = fz.summary(fz.read_record())
        if as_json:
            out.print_json(data=rows)
            return
        print_fuzz_summary(rows)
        return
    select(workload, impl)  # the usual errors for an unknown workload or implementation
    if differential:
        if not workload:
            raise usage_error("--differential needs a WORKLOAD (redis)")

        def told(r: dict) -> None:
            mark = "[green]ok[/]" if r["status"] == "ok" else "[red]FINDINGS[/]"
            console.print(f"{r['workload']}/{r['impl']} differential: {mark} {r['execs']:,} "
                          f"commands ({r['execs_per_s']:,.0f}/s); {r['failure']}")  # fmt: skip

        try:
            doc = fz.differential(workload, list(impl), seconds, seed, told)
        except fz.EngineError as e:
            raise usage_error(str(e)) from None
        console.print(f"stored {paths.rel(paths.RESULTS / doc['run']['id'])}; "
                      f"appended to {paths.rel(fz.RECORD)}")  # fmt: skip
        if any(c.get("findings") for c in doc["campaigns"].values()):
            sys.exit(1)
        return
    chosen = fz.targets(workload, list(impl), list(target_names))
    if not chosen:
        raise usage_error("no fuzz target matches (see [[fuzz]] in the impl.toml files)")
    if replay:
        log_dir = paths.RESULTS / "fuzz-replay"

        def said(r) -> None:
            mark = "[green]ok[/]" if r.ok else f"[red]FAILED[/] {r.detail}"
            console.print(f"replay {r.name} ({r.engine}, {r.inputs} inputs): {mark}")

        done = fz.replay(chosen, log_dir, said)
        bad = [r for r in done if not r.ok]
        console.print(f"{len(done) - len(bad)}/{len(done)} targets replayed cleanly")
        if bad:
            sys.exit(1)
        return
    planned = len(chosen) * seconds / jobs
    console.print(f"fuzzing {len(chosen)} targets, {seconds} s each, {jobs} at a time: "
                  f"about {budget.fmt_duration(planned)} plus the build")  # fmt: skip

    def finished(r) -> None:
        cov = ", ".join(f"{k} {v}" for k, v in r.coverage.items()) or "no coverage figure"
        mark = {"ok": "[green]ok[/]", "crashed": "[red]CRASH[/]"}.get(r.status, "[red]error[/]")
        failure = f"; {r.failure}" if r.failure else ""
        console.print(f"{r.workload}/{r.impl}/{r.target} ({r.engine}): {mark} "
                      f"{r.execs:,} execs in {r.seconds:.0f} s ({r.execs_per_s:,.0f}/s), {cov}"
                      f"{failure}")  # fmt: skip

    doc = fz.campaign(chosen, seconds, jobs, finished)
    for name, why in doc["not_built"].items():
        console.print(f"[red]not built[/] {name}: {why}")
    console.print(f"stored {paths.rel(paths.RESULTS / doc['run']['id'] / 'fuzz.json')}; "
                  f"appended to {paths.rel(fz.RECORD)}")  # fmt: skip
    if doc["not_built"] or any(t["status"] != "ok" for t in doc["targets"]):
        sys.exit(1)


@app.command("hostile")
@click.argument("workload")
@impl_opt
@click.option("--probe", "-p", "probe_names", multiple=True, help="probe (repeatable)")
@click.option("--seconds", type=click.FloatRange(min=0.5), default=10.0, show_default=True,
              help="length of each probe")  # fmt: skip
@click.option("--seed", type=int, default=1, show_default=True, help="seed of the random probes")
def hostile_cmd(workload, impl, probe_names, seconds, seed) -> None:
    """The hostile-client suite against every server of WORKLOAD (docs/robustness.md): slow
    senders, idle connections, resets, half-closes, huge declared lengths, clients that never
    read, garbage, UDP floods; a well-behaved client's latency measured throughout."""
    from .robustness import hostile, probes
    from .robustness import store as rstore

    chosen = [i for i in select(workload, impl) if not i.absent]
    w = registry.workload(workload)
    try:
        hostile.adapter(w)
    except ManifestError as e:
        raise usage_error(f"{workload} has no server to attack ({e})") from None
    known = set(probes.TCP_PROBES) | set(probes.UDP_PROBES)
    unknown = [p for p in probe_names if p not in known]
    if unknown:
        raise usage_error(f"unknown probe {unknown[0]} (valid: {', '.join(sorted(known))})")
    do_build(chosen, with_drivers=False)

    def said(r) -> None:
        mark = "[green]held[/]" if r.held else "[red]NOT HELD[/]"
        c = r.client
        lat = f"p99 {c['p99_ms']} ms" if c["p99_ms"] is not None else "no reply"
        console.print(f"{r.workload}/{r.impl} {r.probe}: {mark}; client {c['requests']} requests,"
                      f" {c['failures']} failed, {lat}; RSS +{r.rss_growth_kb / 1024:.1f} MiB"
                      f" (cap {r.cap_kb / 1024:.0f})")  # fmt: skip

    doc = hostile.run(w, chosen, seconds, seed, list(probe_names), said)
    path = rstore.save("hostile", doc)
    console.print(f"stored {paths.rel(path)}")


@app.command("soak")
@click.argument("workload")
@impl_opt
@click.option("--minutes", type=click.FloatRange(min=0.05), default=3.0, show_default=True,
              help="length of each server's soak")  # fmt: skip
@click.option("--seed", type=int, default=1, show_default=True, help="seed of the faults and load")
def soak_cmd(workload, impl, minutes, seed) -> None:
    """Each server of WORKLOAD (redis, comm, echonet, nativemsg) under mixed load with faults
    (docs/robustness.md): loss, a rate limit, a proxy that delays, re-chunks, reorders,
    duplicates and resets, clients killed mid-request; stdio faults for nativemsg. Nothing may be
    lost, RSS and descriptors must stay flat; exit 1 when any implementation FAILED."""
    from .robustness import soak
    from .robustness import store as rstore

    chosen = [i for i in select(workload, impl) if not i.absent]
    w = registry.workload(workload)
    if soak.transport(workload) is None:
        raise usage_error(f"{workload} has no soak (redis, comm, echonet, nativemsg)")
    reason = soak.unavailable_reason(workload)
    if reason:
        raise usage_error(f"cannot soak {workload}: {reason}")
    do_build(chosen, with_drivers=False)
    console.print(f"soaking {len(chosen)} implementations of {workload}, {minutes:g} min each "
                  f"(about {budget.fmt_duration(len(chosen) * (minutes * 60 + 15))})")  # fmt: skip

    def said(impl_id: str, row: dict) -> None:
        mark = "[green]passed[/]" if row["ok"] else "[red]FAILED[/]"
        console.print(f"{workload}/{impl_id}: {mark} {row['verdict']}")

    doc = soak.run(w, chosen, minutes, seed, said)
    path = rstore.save("soak", doc)
    console.print(f"stored {paths.rel(path)}")
    if not all(r["ok"] for r in doc["impls"].values()):
        sys.exit(1)


def print_fuzz_summary(rows: list[dict]) -> None:
    table = Table("workload", "impl", "target", "engine", "campaigns", "time", "execs",
                  "coverage (the engine's own measure)", "crashes")  # fmt: skip
    total_s = 0.0
    for r in rows:
        total_s += r["seconds"]
        cov = ", ".join(f"{k} {v:,}" for k, v in r["coverage"].items())
        table.add_row(r["workload"], r["impl"], r["target"], r["engine"], str(r["campaigns"]),
                      budget.fmt_duration(r["seconds"]), f"{r['execs']:,}", cov,
                      str(r["crashes"]))  # fmt: skip
    out.print(table)
    out.print(f"{len(rows)} targets, {budget.fmt_duration(total_s)} of fuzzing in all")


def main() -> None:
    try:
        app(prog_name="msgbench", standalone_mode=False)
    except click.UsageError as e:
        print(f"msgbench: error: {e.format_message()}", file=sys.stderr)
        sys.exit(2)
    except click.Abort:
        print("msgbench: interrupted", file=sys.stderr)
        sys.exit(130)
    except ManifestError as e:
        print(f"msgbench: manifest error: {e}", file=sys.stderr)
        sys.exit(2)


if __name__ == "__main__":
    main()
