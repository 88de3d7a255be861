"""The `msgbench` command line: argument handling and console output only.

The work itself lives in registry (manifests), build, verify, runner (measurement), results
(the run document), store, report and metrics; this module wires them to commands.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from . import build as builder
from . import doctor as doctor_mod
from . import machine, paths, registry, results, runner, store, verify
from . import metrics as code_metrics
from .registry import Impl, ManifestError

console = Console(stderr=True, highlight=False)
out = Console(highlight=False)


PROFILES = ("smoke", "quick", "full")


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def app() -> None:
    """msgbench: one lab for comparing messaging systems in C, C++, Rust, Go and Python."""


workload_arg = click.argument("workload", required=False)
impl_opt = click.option(
    "--impl", "-i", "impl", multiple=True, help="implementation id (repeatable; default: all)"
)
json_opt = click.option("--json", "as_json", is_flag=True, help="machine-readable output")


def usage_error(message: str) -> click.UsageError:
    return click.UsageError(message)


def select(workload: str | None, impls: tuple[str, ...] | list[str] | None) -> list[Impl]:
    try:
        chosen = registry.select(workload, list(impls) or None)
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
    chosen = select(workload, ())
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
            "yes" if j["built"] else "no",
            shlex.join(paths.rel(a) if a.startswith("/") else a for a in j["run"]),
        )
    out.print(table)


def do_build(chosen: list[Impl], with_drivers: bool = True) -> list[builder.BuildResult]:
    results_: list[builder.BuildResult] = []
    workloads = {i.workload for i in chosen}
    steps = len(chosen) + (len(workloads) if with_drivers else 0)
    with progress() as bar:
        task = bar.add_task("building", total=steps)
        cmake_ok = True
        if any(i.build["system"] == "cmake" for i in chosen):
            bar.update(task, description="configuring cmake")
            ok, msg = builder.configure_cmake(paths.BUILD_LOGS / "cmake-configure.log")
            cmake_ok = ok
        if with_drivers:
            for name in sorted(workloads):
                bar.update(task, description=f"building driver {name}")
                results_.extend(builder.build_drivers(registry.workload(name)))
                bar.advance(task)
        for impl in chosen:
            bar.update(task, description=f"building {impl.name}")
            results_.append(builder.build_impl(impl, cmake_ok))
            bar.advance(task)
    for r in results_:
        if r.ok:
            console.print(f"[green]built[/]  {r.name}")
        else:
            console.print(f"[red]FAILED[/] {r.name}: {r.message} — log: {paths.rel(r.log)}")
    return results_


@app.command("build")
@workload_arg
@impl_opt
def build_cmd(workload: str | None, impl: tuple[str, ...]) -> None:
    """Build implementations (and drivers) with the release flags of profiles.toml."""
    built = do_build(select(workload, impl))
    sys.exit(0 if all(r.ok for r in built) else 1)


def do_verify(chosen: list[Impl], log_dir: Path) -> dict[tuple[str, str], verify.Verdict]:
    verdicts: dict[tuple[str, str], verify.Verdict] = {}
    by_workload: dict[str, list[Impl]] = {}
    for i in chosen:
        by_workload.setdefault(i.workload, []).append(i)
    with progress() as bar:
        task = bar.add_task("conformance", total=len(by_workload))
        for name, impls in by_workload.items():
            bar.update(task, description=f"conformance {name} ({len(impls)} implementations)")
            for impl_id, v in verify.run(registry.workload(name), impls, log_dir).items():
                verdicts[(name, impl_id)] = v
            bar.advance(task)
    print_matrix(verdicts)
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
                f"[red]{v.error}[/]"
                if v.error
                else (f"[green]{v.passed} ok[/]" if v.failed == 0 else f"[red]{v.failed} FAIL[/]")
                for v in row.values()
            ],
        )
        out.print(table)
        for impl_id, v in row.items():
            for f in v.failures:
                out.print(f"[red]FAIL[/] {name}/{impl_id} {f['test']}: {f['message']}")


@app.command("verify")
@workload_arg
@impl_opt
def verify_cmd(workload: str | None, impl: tuple[str, ...]) -> None:
    """Run the conformance suite against implementations; exit 0 only if all selected pass."""
    chosen = select(workload, impl)
    verdicts = do_verify(chosen, paths.BUILD / "verify")
    sys.exit(0 if all(v.ok for v in verdicts.values()) else 1)


@app.command()
@workload_arg
@click.option("--scenario", "-s", multiple=True, help="scenario name (repeatable; default: all)")
@impl_opt
@click.option(
    "--profile",
    type=click.Choice(PROFILES),
    default="quick",
    show_default=True,
    help="repetitions and sizes (workload.toml)",
)
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
@click.option("--no-build", is_flag=True, help="use the binaries as they are")
@click.option("--seed", type=int, help="seed for the trial order (default: random)")
def bench(
    workload: str | None,
    scenario: tuple[str, ...],
    impl: tuple[str, ...],
    profile: str,
    placement: str,
    json_path: Path | None,
    no_build: bool,
    seed: int | None,
) -> None:
    """Build, verify, then measure; write results/<run-id>/ and store the run.

    The workload's baseline (and reference, if any) are always measured too: ratios are only
    read between results of one run."""
    chosen = select(workload, impl)
    # The floor and the reference are measured in every run, whatever --impl says.
    for name in {i.workload for i in chosen}:
        w = registry.workload(name)
        for extra in (w.baseline, w.reference):
            if extra and extra in w.impls and w.impls[extra] not in chosen:
                chosen.append(w.impls[extra])
    plan = []
    for name in dict.fromkeys(i.workload for i in chosen):
        w = registry.workload(name)
        if scenario:
            unknown = [s for s in scenario if s not in w.scenarios]
            if unknown and workload:
                raise usage_error(
                    f"unknown scenario '{unknown[0]}' for {name} (valid: {', '.join(w.scenarios)})"
                )
            scenarios = [w.scenarios[s] for s in scenario if s in w.scenarios]
        else:
            scenarios = list(w.scenarios.values())
        if scenarios:
            plan.append((w, scenarios, [i for i in chosen if i.workload == name]))
    if not plan:
        raise usage_error(f"no workload has a scenario named {', '.join(scenario or [])}")
    try:
        where = runner.placement(placement)
    except runner.HarnessError as e:
        raise usage_error(str(e)) from None

    commit, dirty = machine.git_state()
    started = results.now()
    run_id = results.new_run_id(commit)
    run_dir = store.run_dir(run_id)
    log_dir = run_dir / "logs"
    command = "msgbench " + shlex.join(sys.argv[1:])

    selected = [i for _, _, impls in plan for i in impls]
    if not no_build:
        built = {r.name: r for r in do_build(selected)}
        drivers_ok = all(r.ok for n, r in built.items() if n.startswith("driver "))
        if not drivers_ok:
            console.print("[red]a driver failed to build; nothing can be measured[/]")
            sys.exit(1)
    verdicts = do_verify(selected, log_dir)
    measurable = [(w, ss, [i for i in ii if verdicts[(w.name, i.id)].ok]) for w, ss, ii in plan]
    total = runner.trials_planned(measurable, profile)
    console.print(
        f"run {run_id}: {total} trials, profile {profile}, placement "
        f"{where.mode} (driver CPUs {list(where.driver_cpus) or 'any'}, "
        f"implementation CPUs {list(where.impl_cpus) or 'any'})"
    )
    with progress() as bar:
        task = bar.add_task("measuring", total=total)
        measured = runner.measure(
            measurable,
            profile,
            where,
            log_dir,
            seed=seed,
            on_trial=lambda what: bar.update(task, advance=1, description=what),
        )
    if measured.interrupted:
        console.print("[yellow]interrupted: keeping the trials measured so far[/]")

    doc = {
        "run": results.run_header(run_id, command, profile, where, started, commit, dirty),
        "workloads": [results.workload_entry(w, ss, measured) for w, ss, _ in plan],
        "impls": [results.impl_entry(i) for i in selected],
        "results": [
            row
            for w, ss, ii in plan
            for s in ss
            for i in ii
            for row in results.result_rows(w, s, i, measured, verdicts[(w.name, i.id)])
        ],
        "verify": [v.as_json() for v in verdicts.values()],
        "metrics": [code_metrics.measure(i) for i in selected],
        "notes": results.notes(selected, {s.name for _, ss, _ in plan for s in ss})
        + results.driver_context(measured),
    }
    doc["run"]["finished"] = results.now()
    doc["run"]["interrupted"] = measured.interrupted
    json_file = store.save(doc)
    if json_path:
        json_path.write_text(json_file.read_text())
    from . import report

    report.write(run_dir, doc)
    print_summary(doc)
    out.print(f"results: {paths.rel(json_file)}")
    out.print(f"report:  {paths.rel(run_dir / 'report.html')}")
    failed = any(r["status"] == "fail" for r in doc["results"])
    sys.exit(130 if measured.interrupted else (1 if failed else 0))


def print_summary(doc: dict) -> None:
    for w in doc["workloads"]:
        for s in w["scenarios"]:
            table = Table(title=f"{w['name']} / {s['name']}  ({s['primary']})")
            for col in ("impl", "median", "95% CI", "n", "status"):
                table.add_column(col, justify="right" if col != "impl" else "left")
            for r in doc["results"]:
                if (r["workload"], r["scenario"]) != (w["name"], s["name"]):
                    continue
                if r["metric"] != s["primary"]:
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


@app.command("report")
@click.argument("run", required=False)
def report_cmd(run: str | None) -> None:
    """Re-render the report of a stored run (RUN: id or prefix; default: the latest)."""
    from . import report

    try:
        doc = store.load(run)
    except KeyError as e:
        raise usage_error(str(e.args[0])) from None
    # Presentation-only declarations (no measurements) that a run stored before they existed
    # lacks are taken from the current manifests, so old runs render with new report sections.
    for entry in doc.get("workloads", []):
        try:
            w = registry.workload(entry["name"])
        except ManifestError:
            continue
        names = {s["name"] for s in entry.get("scenarios", [])}
        entry.setdefault("targets", [t for t in w.targets if t["scenario"] in names])
        entry.setdefault(
            "side_by_side", [p for p in w.side_by_side if set(p["scenarios"]) <= names]
        )
    run_dir = store.run_dir(doc["run"]["id"])
    report.write(run_dir, doc)
    out.print(f"report:  {paths.rel(run_dir / 'report.html')}")


@app.command("metrics")
@workload_arg
@impl_opt
@json_opt
def metrics_cmd(workload: str | None, impl: tuple[str, ...], as_json: bool) -> None:
    """Code metrics (lizard) of the source files each manifest names."""
    rows = [code_metrics.measure(i) for i in select(workload, impl)]
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
@click.argument("run_b")
def compare(run_a: str, run_b: str) -> None:
    """Differences between two stored runs (RUN_A earlier, RUN_B later) outside the noise.

    A difference counts only when the 95% intervals do not overlap."""
    from . import stats

    try:
        a, b = store.load(run_a), store.load(run_b)
    except KeyError as e:
        raise usage_error(str(e.args[0])) from None
    index = {
        (r["workload"], r["scenario"], r["impl"], r["metric"]): r
        for r in a["results"]
        if r["status"] == "ok"
    }
    table = Table("workload", "scenario", "impl", "metric", "A", "B", "B/A", "verdict")
    for r in b["results"]:
        key = (r["workload"], r["scenario"], r["impl"], r["metric"])
        if r["status"] != "ok" or key not in index:
            continue
        ra = index[key]
        verdict = stats.compare(r, ra, r["better"])
        ratio = r["median"] / ra["median"] if ra["median"] else float("nan")
        colour = {"better": "green", "worse": "red"}.get(verdict, "dim")
        table.add_row(
            *key,
            f"{ra['median']:.4g}",
            f"{r['median']:.4g}",
            f"{ratio:.3f}",
            f"[{colour}]{verdict}[/]",
        )
    out.print(table)


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
