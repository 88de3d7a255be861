"""The bench pipeline: plan → build → verify → measure → store → report.

cli.py turns arguments into a `BenchRequest` and supplies `Hooks` (its console output); this
module decides what runs and assembles the run document. Nothing here prints.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from . import (
    budget,
    hostagent,
    loadwatch,
    machine,
    paths,
    registry,
    results,
    runner,
    seeds,
    store,
    toolchains,
    verify,
)
from . import build as builder
from . import instructions as counts
from . import metrics as code_metrics
from .hostsfile import HostsFile
from .registry import Impl, ManifestError
from .sites import SiteError, Sites, open_sites

PROFILES = ("smoke", "quick", "full")
MEASURES = counts.MEASURES  # what a trial measures: time, or instructions under valgrind


class PlanError(Exception):
    """The request names something that does not exist or cannot run here (a usage error)."""


@dataclass
class BenchRequest:
    workload: str | None = None
    scenarios: tuple[str, ...] = ()
    impls: tuple[str, ...] = ()
    profile: str = "quick"
    placement: str = "split"
    seed: int | None = None
    build: bool = True
    command: str = "msgbench bench"
    measure: str = "time"  # or "instructions": counted under valgrind (msgbench.instructions)
    # The seed's-build variants (`<impl>-seedbuild`) join the plan's scenarios they are made
    # for: `msgbench seeds` only (they exist for its section); --impl can still name one.
    seed_builds: bool = False
    # --hosts FILE: which host each role of a trial runs on (docs/hosts.md); None: this
    # machine's process tree, as always.
    hosts_file: HostsFile | None = None


@dataclass
class BenchPlan:
    request: BenchRequest
    plan: runner.Plan
    selected: list[Impl]
    where: runner.Placement


@dataclass
class Outcome:
    doc: dict
    run_dir: Path
    json_file: Path
    exit_code: int


class Hooks(Protocol):
    """What the pipeline tells its user, and the two steps that show their own progress."""

    def build(self, impls: list[Impl]) -> list[builder.BuildResult]: ...

    def verify(self, impls: list[Impl], log_dir: Path) -> dict[tuple[str, str], verify.Verdict]: ...

    def planned(self, run_id: str, bp: BenchPlan, est: budget.Estimate, measured: int) -> None: ...

    def measuring(self, total: int, eta: budget.Eta) -> Callable[[runner.TrialDone], None]: ...

    def finished_measuring(self) -> None: ...

    def message(self, text: str) -> None: ...


def make_plan(req: BenchRequest) -> BenchPlan:
    """Which implementations and scenarios a request means. The floor and the reference are
    measured in every run, whatever --impl says: ratios are only read inside one run."""
    try:
        chosen = registry.select(req.workload, list(req.impls) or None, req.seed_builds)
    except ManifestError as e:
        raise PlanError(str(e)) from None
    if req.impls and not chosen:
        raise PlanError(f"no implementation named {', '.join(req.impls)} in any workload")
    if req.profile not in PROFILES:
        raise PlanError(f"unknown profile '{req.profile}' (valid: {', '.join(PROFILES)})")
    counting = _check_measure(req)
    for name in {i.workload for i in chosen}:
        w = registry.workload(name)
        for extra in (w.baseline, w.reference):
            if extra and extra in w.impls and w.impls[extra] not in chosen:
                chosen.append(w.impls[extra])
    plan: runner.Plan = []
    for name in dict.fromkeys(i.workload for i in chosen):
        w = registry.workload(name)
        if req.scenarios:
            wanted = _scenarios_of(name, req.scenarios)
            unknown = [s for s in wanted if s not in w.scenarios]
            qualified = [s for s in req.scenarios if s.startswith(f"{name}/")]
            if unknown and (req.workload or f"{name}/{unknown[0]}" in qualified):
                raise PlanError(
                    f"unknown scenario '{unknown[0]}' for {name} (valid: {', '.join(w.scenarios)})"
                )
            scenarios = [w.scenarios[s] for s in wanted if s in w.scenarios]
        else:
            scenarios = w.scenarios_for(req.profile)
        if counting:  # the named scenarios, each marked; else every marked one of the workload
            try:
                scenarios = counts.eligible(w, scenarios if req.scenarios else None)
            except ValueError as e:
                raise PlanError(str(e)) from None
        # A seed's own system ([measured_in]) joins only a plan with one of its scenarios.
        names = {s.name for s in scenarios}
        impls = [
            i for i in chosen
            if i.workload == name and (not i.measured_in or names & set(i.measured_in))
        ]  # fmt: skip
        if scenarios:
            plan.append((w, scenarios, impls))
    if not plan and counting:
        raise PlanError(
            "--measure instructions: no scenario here is counted in instructions (workload.toml "
            "marks the single-connection ones with `instructions`: "
            f"{', '.join(counts.marked()) or 'none'})"
        )
    if not plan:
        raise PlanError(f"no workload has a scenario named {', '.join(req.scenarios)}")
    try:
        where = runner.placement(req.placement)
    except runner.HarnessError as e:
        raise PlanError(str(e)) from None
    selected = [i for _, _, impls in plan for i in impls]
    return BenchPlan(req, plan, selected, where)


def _scenarios_of(workload: str, named: tuple[str, ...]) -> list[str]:
    """The scenario names meant for `workload`: plain names (any workload's), and
    "workload/scenario" names of this one (a plan over several workloads, `msgbench seeds`)."""
    out = []
    for s in named:
        wl, sep, scen = s.partition("/")
        if not sep:
            out.append(s)
        elif wl == workload:
            out.append(scen)
    return list(dict.fromkeys(out))


def _check_measure(req: BenchRequest) -> bool:
    """True for an instruction count, which needs valgrind; PlanError for an unknown measure."""
    if req.measure not in MEASURES:
        raise PlanError(f"unknown measure '{req.measure}' (valid: {', '.join(MEASURES)})")
    if req.measure != "instructions":
        return False
    try:
        counts.require_valgrind()
    except RuntimeError as e:
        raise PlanError(str(e)) from None
    return True


def execute(bp: BenchPlan, hooks: Hooks) -> Outcome:
    req = bp.request
    commit, dirty = machine.git_state()
    started = results.now()
    run_id = results.new_run_id(commit)
    run_dir = store.run_dir(run_id)
    log_dir = run_dir / "logs"
    log_dir.mkdir(parents=True, exist_ok=True)

    # The hosts file as planning sees it (nothing made yet): which trials it rules out.
    planning = Sites(req.hosts_file, {}, "") if req.hosts_file else None
    all_trials = runner.planned_trials(bp.plan, req.profile, planning)
    est = budget.estimate(bp.plan, req.profile, all_trials)
    hooks.planned(run_id, bp, est, len(all_trials))

    if req.build:
        built = hooks.build(bp.selected)
        if not all(r.ok for r in built if r.name.startswith("driver ")):
            raise PlanError("a driver failed to build; nothing can be measured")

    verdicts: dict[tuple[str, str], verify.Verdict] = {}
    verify_seconds: dict[str, dict[str, float]] = {}
    for w, _, impls in bp.plan:
        t0 = time.monotonic()
        verdicts.update(hooks.verify(impls, log_dir))
        suites = [i for i in impls if not i.absent]  # an absent implementation runs no suite
        per_impl = (time.monotonic() - t0) / max(1, len(suites))
        verify_seconds[w.name] = {i.id: per_impl for i in suites}

    measurable = [(w, ss, [i for i in ii if verdicts[(w.name, i.id)].ok]) for w, ss, ii in bp.plan]
    trials = runner.planned_trials(measurable, req.profile, planning)
    estimates = budget.estimate(measurable, req.profile, trials, verify=False)
    eta = budget.Eta(estimates.trials)
    trial_seconds: dict[str, dict[str, dict[str, list[float]]]] = {}
    show = hooks.measuring(len(trials), eta)

    def on_trial(done: runner.TrialDone) -> None:
        estimated = estimates.per_trial[(done.workload, done.scenario, done.impl)]
        eta.trial_done(estimated, done.seconds, done.rounds_dropped)
        if not done.failed:
            trial_seconds.setdefault(done.workload, {}).setdefault(done.scenario, {}).setdefault(
                done.impl, []
            ).append(done.seconds)
        show(done)

    # The machine's load before and during the trials (run.load); stopped whatever happens.
    watch = loadwatch.LoadWatch(loadwatch.watched_cpus(bp.where.as_json()))
    hosts_record = None
    with ExitStack() as stack:
        # The hosts first (a Ray node builds what the run measures): none of that is the
        # trials' load. Then the machine's load before and during the trials (run.load).
        opened = None
        if req.hosts_file is not None:
            try:
                opened = stack.enter_context(open_sites(req.hosts_file))
            except SiteError as e:
                raise PlanError(str(e)) from None
            hosts_record = {"file": req.hosts_file.as_json(), "hosts": opened.describe()}
            if req.hosts_file.kind == "ray":  # its trials run under Ray's processes
                watch.mark(hostagent.TOKEN_ENV, opened.token)
                if req.build:
                    build_on_nodes(opened, bp, hooks)
            hosts_record["binaries"] = opened.binaries(binaries_of(bp))
            opened.start_costs()
        try:
            watch.start()
            measured = runner.measure(
                measurable,
                req.profile,
                bp.where,
                log_dir,
                seed=req.seed,
                on_trial=on_trial,
                quantity=req.measure,
                sites=opened,
            )
            if opened is not None and hosts_record is not None:
                hosts_record["cluster_processes"] = opened.costs()
        finally:
            load = watch.stop()
    hooks.finished_measuring()
    if measured.interrupted:
        hooks.message("interrupted: keeping the trials measured so far")

    doc = assemble(bp, run_id, started, commit, dirty, measured, verdicts)
    doc["run"]["load"] = load
    if hosts_record is not None:  # where the roles ran, each host's fingerprint (docs/hosts.md)
        doc["run"]["hosts"] = hosts_record
    doc["durations"] = {"trials": trial_seconds, "verify": verify_seconds}
    from .robustness import evidence

    # The robustness evidence at the time of the run (the fuzz record, the newest hostile and
    # soak runs), kept in the document so that its report says what was known then.
    doc["robustness"] = evidence.collect([w["name"] for w in doc.get("workloads", [])])
    json_file = store.save(doc)
    from . import report

    report.write(run_dir, doc)
    failed = any(r["status"] == "fail" for r in doc["results"])
    code = 130 if measured.interrupted else (1 if failed else 0)
    return Outcome(doc, run_dir, json_file, code)  # doc['durations']: the run's timings


NODE_BUILD_TIMEOUT_S = 1800


def build_on_nodes(opened: Sites, bp: BenchPlan, hooks: Hooks) -> None:
    """Every Ray node builds what the run measures, with its own toolchains and the same
    profiles.toml (docs/hosts.md); one after the other, as nodes may share a file system."""
    for name, site in opened.by_name.items():
        for w, _, impls in bp.plan:
            argv = [str(paths.ROOT / "msgbench"), "build", w.name]
            argv += [a for i in impls if not i.absent for a in ("--impl", i.id)]
            done = site.build(argv, NODE_BUILD_TIMEOUT_S)
            if done.returncode != 0:
                tail = (done.stdout + done.stderr).strip().splitlines()[-3:]
                raise PlanError(f"host {name}: `{' '.join(argv[1:])}` failed: {' | '.join(tail)}")
        hooks.message(f"built on host {name}")


def binaries_of(bp: BenchPlan) -> list[str]:
    """The programs a run starts: each implementation's and each driver's executable."""
    files = {str(i.executable) for i in bp.selected if not i.absent}
    for w, scenarios, _ in bp.plan:
        for s in scenarios:  # the driver's program, and its script where it is one
            files.update(a for a in w.driver(s.driver) if Path(a).is_file())
    return sorted(f for f in files if f.startswith("/"))


def assemble(
    bp: BenchPlan,
    run_id: str,
    started: str,
    commit: str,
    dirty: bool,
    measured: runner.Measurements,
    verdicts: dict[tuple[str, str], verify.Verdict],
) -> dict:
    """The run document (docs/results-schema.md)."""
    req, plan, selected = bp.request, bp.plan, bp.selected
    doc = {
        "run": results.run_header(
            run_id, req.command, req.profile, bp.where, started, commit, dirty
        ),
        "workloads": [results.workload_entry(w, ss, measured) for w, ss, _ in plan],
        "impls": [results.impl_entry(i) for i in selected],
        "results": [
            row
            for w, ss, ii in plan
            for s in ss
            for i in ii
            for row in [
                *results.result_rows(w, s, i, measured, verdicts[(w.name, i.id)]),
                *results.aa_rows(w, s, i, measured),  # the A/A twin's, after its subject's
            ]
        ],
        "verify": [v.as_json() for v in verdicts.values()],
        "metrics": [code_metrics.measure(i) for i in selected if not i.absent],
        "notes": results.notes(selected, {s.name for _, ss, _ in plan for s in ss})
        + results.driver_context(measured),
        # The seeds (seeds/*.toml) whose experiments this run measured: the report's Seeds
        # section judges their claims on this run's data.
        "seeds": seeds.for_run(
            seeds.load(checked=False), {(w.name, s.name) for w, ss, _ in plan for s in ss}
        ),
    }
    doc["run"]["python_packages"] = toolchains.python_packages()  # the lock's, as installed
    doc["run"]["finished"] = results.now()
    doc["run"]["interrupted"] = measured.interrupted
    doc["run"]["measure"] = req.measure
    if req.measure == "instructions":
        doc["run"]["instructions"] = counts.describe()
        counts.drop_time_tables(doc)
    return doc


def record_durations(doc: dict) -> list[Path]:
    """Write a stored run's durations into each workload's durations.json (the planner's
    input on a fresh clone). Only runs made by this pipeline carry them."""
    durations = doc.get("durations")
    if doc["run"].get("measure", "time") != "time":  # valgrind's durations are not a plan's
        raise PlanError(f"run {doc['run']['id']} counted instructions: its durations are not kept")
    if not durations:
        raise PlanError(f"run {doc['run']['id']} has no recorded durations (made before them)")
    written = []
    profile = doc["run"]["profile"]
    for entry in doc["workloads"]:
        w = registry.workload(entry["name"])
        written.append(
            budget.record(
                w,
                profile,
                durations["trials"].get(w.name, {}),
                durations["verify"].get(w.name, {}),
            )
        )
    return written
