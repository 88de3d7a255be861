"""Measuring trials: placement, interleaving, warm-up, timeouts, and the raw samples.

One trial = one run of the workload's driver against one implementation for one scenario.
Trials of different implementations interleave in a freshly shuffled order every round, and
the first round is a warm-up whose trials are discarded, so slow drift of the machine (thermal,
other tenants) spreads over every implementation instead of favouring whoever ran first. One
implementation per scenario also runs under a twin's label in the same rounds: the A/A control
(aa.py), the measure of this run's own noise.
"""

from __future__ import annotations

import functools
import random
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from . import aa, instructions, machine, registry, trials
from .hosts import TrialHosts
from .registry import Impl, Scenario, Workload
from .sites import Sites
from .topology import TopologyError
from .trials import TrialFailed

DEFAULT_TRIAL_TIMEOUT_S = 300
LOCAL_ROLES = {"driver": "local", "impl": "local"}  # no hosts file: this machine's process tree
PLACEMENTS = ("split", "same", "none")


class HarnessError(Exception):
    """A problem with the request or the machine, reported as one clear line."""


@dataclass(frozen=True)
class Placement:
    """Which CPUs the driver and the implementation are pinned to ([] = not pinned)."""

    mode: str
    driver_cpus: tuple[int, ...]
    impl_cpus: tuple[int, ...]

    def as_json(self) -> dict:
        return {
            "mode": self.mode,
            "driver_cpus": list(self.driver_cpus),
            "impl_cpus": list(self.impl_cpus),
        }


def placement(mode: str) -> Placement:
    """split: driver and implementation on different CPUs (the default: neither steals the
    other's time); same: both on one CPU (no cross-core wake-ups); none: the scheduler decides.
    The implementation gets the last usable CPU because CPU 0 usually takes more interrupts."""
    if mode not in PLACEMENTS:
        raise HarnessError(f"unknown placement '{mode}' (valid: {', '.join(PLACEMENTS)})")
    cpus = machine.usable_cpus()
    if mode == "none":
        return Placement(mode, (), ())
    if mode == "split":
        if len(cpus) < 2:
            raise HarnessError(
                f"--placement split needs 2 usable CPUs, this process may use {cpus}; "
                "use --placement same"
            )
        return Placement(mode, (cpus[0],), (cpus[-1],))
    return Placement(mode, (cpus[-1],), (cpus[-1],))


@dataclass
class TrialKey:
    workload: str
    scenario: str
    impl: str

    def tuple(self) -> tuple[str, str, str]:
        return (self.workload, self.scenario, self.impl)


def trial_kind(w: Workload, s: Scenario) -> trials.TrialKind:
    """The kind that runs this scenario's trials (the scenario's own, else the workload's)."""
    return registry.trial_kinds(w)[s.kind or w.kind]


def run_trial(
    w: Workload,
    s: Scenario,
    impl: Impl,
    profile: str,
    where: Placement,
    log_dir: Path,
    hosts: TrialHosts | None = None,
    quantity: str = "time",
    sites: Sites | None = None,
) -> dict:
    """Run one trial; return the driver's JSON document or raise TrialFailed. quantity
    "instructions": the implementation's instructions per operation (msgbench.instructions).
    sites: the hosts of a hosts file, where the trial's roles run (docs/hosts.md)."""
    ctx = trials.TrialContext(
        workload=w,
        scenario=s,
        impl=impl,
        profile=profile,
        placement=where,
        log_dir=log_dir,
        timeout_s=int(w.profiles.get("trial_timeout_s", DEFAULT_TRIAL_TIMEOUT_S)),
        hosts=hosts,
        sites=sites,
    )
    kind = trial_kind(w, s)
    doc = instructions.measure_trial(kind, ctx) if quantity == "instructions" else kind.run(ctx)
    if hosts is not None:
        doc.setdefault("hosts", hosts.description)
    # Which host each role ran on: a host of the run's hosts file, or this machine's process
    # tree (docs/hosts.md); echonet's nodes and controller are in `hosts` above.
    doc["roles"] = dict(sites.file.roles) if sites is not None else dict(LOCAL_ROLES)
    return doc


@dataclass
class Measurements:
    """Everything measured so far; survives Ctrl-C so a partial run is still reported."""

    docs: dict[tuple[str, str, str], list[dict]] = field(default_factory=dict)
    failures: dict[tuple[str, str, str], str] = field(default_factory=dict)
    skipped: dict[tuple[str, str, str], str] = field(default_factory=dict)
    interrupted: bool = False
    # (workload, scenario) -> the A/A pair measured there: {"subject", "twin", "chosen_as"}
    aa: dict[tuple[str, str], dict] = field(default_factory=dict)


@dataclass(frozen=True)
class TrialDone:
    """What the progress display hears after each trial."""

    workload: str
    scenario: str
    impl: str
    seconds: float
    failed: bool
    rounds_dropped: int  # later rounds of this (scenario, impl) that a failure cancels


Plan = list[tuple[Workload, list[Scenario], list[Impl]]]


def runnable(
    w: Workload, s: Scenario, impls: list[Impl], sites: Sites | None = None
) -> tuple[list[Impl], dict[str, str]]:
    """The implementations a scenario can measure, and why each other one is skipped."""
    skipped: dict[str, str] = {}
    kind = trial_kind(w, s)
    apart = _apart_reason(w, s, kind, sites)
    missing = w.drivers[s.driver].missing() if s.driver else []
    no_hosts = s.hosts.unavailable_reason() if s.hosts else None
    for impl in impls:
        if impl.absent:  # no program in this language (impl.toml `absent`): said once, not faked
            skipped[impl.id] = f"absent: {impl.absent}"
        elif impl.measured_in and s.name not in impl.measured_in:  # a seed's own system
            only = ", ".join(impl.measured_in)
            skipped[impl.id] = f"measured only in {only}: {impl.measured_in_why}"
        elif no_hosts:  # e.g. not root: namespaces cannot be made; never faked on loopback
            skipped[impl.id] = f"needs {s.hosts.topology} hosts: {no_hosts}"
        elif missing:  # e.g. no browser: skipped with the reason, never silently
            skipped[impl.id] = f"{', '.join(missing)} not installed (run `make setup`)"
        elif s.own_client and not impl.client_argv():  # e.g. comm's floor brings no client
            skipped[impl.id] = "has no client program"
        elif apart:
            skipped[impl.id] = apart
        elif sites and sites.file.split and not impl.listens_on_host:
            skipped[impl.id] = (
                "listens on 127.0.0.1 only (its argv has no {host}): it cannot be reached from "
                "the driver's host"
            )
        elif why := kind.runnable(impl, s):
            skipped[impl.id] = why
    return [i for i in impls if i.id not in skipped], skipped


def _apart_reason(w: Workload, s: Scenario, kind, sites: Sites | None) -> str | None:
    """Why a scenario cannot run under the hosts file's roles, or None."""
    if sites is None:
        return None
    if s.hosts is not None and sites.file.kind != "local":
        return (
            f"the scenario makes its own {s.hosts.topology} hosts on the runner's machine; "
            "it runs without a hosts file"
        )
    if sites.file.split and not kind.splits:
        return (
            f"its trials ({kind.name}) start the implementation as the driver's own child; "
            "it cannot run on another host"
        )
    return None


def measure(
    plan: Plan,
    profile: str,
    where: Placement,
    log_dir: Path,
    seed: int | None = None,
    on_trial: Callable[[TrialDone], None] | None = None,
    quantity: str = "time",
    sites: Sites | None = None,
) -> Measurements:
    """Run every scenario of the plan: round 0 is the warm-up, then `repetitions` rounds.
    quantity: what a trial measures, "time" (the driver's figures) or "instructions".
    sites: the hosts of a hosts file, where each trial's roles run (docs/hosts.md)."""
    rng = random.Random(seed)
    out = Measurements()
    log_dir.mkdir(parents=True, exist_ok=True)
    try:
        for w, scenarios, impls in plan:
            for s in scenarios:
                chosen, skipped = runnable(w, s, impls, sites)
                for impl_id, why in skipped.items():
                    out.skipped[(w.name, s.name, impl_id)] = why
                if not chosen:
                    continue
                chosen, pair = aa.with_twin(w, chosen)  # the A/A control, in the same rounds
                if pair:
                    out.aa[(w.name, s.name)] = pair
                with _scenario_hosts(s) as hosts_or_failure:
                    run = functools.partial(_rounds, w, s, chosen, profile, where, log_dir)
                    if sites is not None and sites.file.sweep:
                        _sweep(run, w.repetitions(profile), rng, out, on_trial, hosts_or_failure,
                               quantity, sites)  # fmt: skip
                    else:
                        reps = range(w.repetitions(profile) + 1)
                        run(rng, out, on_trial, hosts_or_failure, quantity, sites, reps)
    except KeyboardInterrupt:
        out.interrupted = True
    return out


def _sweep(
    run: Callable[..., None],
    reps: int,
    rng: random.Random,
    out: Measurements,
    on_trial: Callable[[TrialDone], None] | None,
    hosts: TrialHosts | str | None,
    quantity: str,
    sites: Sites,
) -> None:
    """A scenario's rounds spread over the sweep's nodes (docs/hosts.md): node i measures
    rounds i+1, i+1+N, ... complete (every implementation, the floor among them, in a freshly
    shuffled order), after a warm-up round of its own, so that its ratios are read within it.
    Concurrent nodes measure at the same time (separate machines); otherwise they take turns."""
    nodes = sites.file.sweep
    share = {
        node: [0, *(r for r in range(1, reps + 1) if (r - 1) % len(nodes) == i)]
        for i, node in enumerate(nodes)
    }
    seeds = {node: rng.getrandbits(64) for node in nodes}

    def on(node: str) -> None:
        run(random.Random(seeds[node]), out, on_trial, hosts, quantity, sites.on(node),
            share[node], node)  # fmt: skip

    if not sites.file.concurrent:
        for node in nodes:
            on(node)
        return
    with ThreadPoolExecutor(len(nodes), thread_name_prefix="sweep") as pool:
        futures = [pool.submit(on, node) for node in nodes]
        try:
            for f in futures:
                f.result()
        except KeyboardInterrupt:
            out.interrupted = True  # the nodes stop before their next trial
            raise


@contextmanager
def _scenario_hosts(s: Scenario) -> Iterator[TrialHosts | str | None]:
    """The scenario's hosts for all its trials (set up once, always torn down), or the reason
    they could not be made (every trial of the scenario then fails with it)."""
    if s.hosts is None:
        yield None
        return
    try:
        opened = s.hosts.open()
        hosts = opened.__enter__()
    except (TopologyError, OSError) as e:
        yield f"cannot set up the scenario's {s.hosts.topology} hosts: {e}"
        return
    try:
        yield hosts
    finally:
        opened.__exit__(None, None, None)


def _rounds(
    w: Workload,
    s: Scenario,
    chosen: list[Impl],
    profile: str,
    where: Placement,
    log_dir: Path,
    rng: random.Random,
    out: Measurements,
    on_trial: Callable[[TrialDone], None] | None,
    hosts: TrialHosts | str | None,
    quantity: str = "time",
    sites: Sites | None = None,
    rounds: Sequence[int] = (),
    node: str | None = None,
) -> None:
    """Some of one scenario's rounds (all of them without a sweep): round 0 is the discarded
    warm-up, then the measured rounds, each in a freshly shuffled order of implementations.
    node: the sweep's node that measures them (recorded in each trial)."""
    for at, round_no in enumerate(rounds):
        order = list(chosen)
        rng.shuffle(order)
        for impl in order:
            key = (w.name, s.name, impl.id)
            if key in out.failures or out.interrupted:
                continue
            started = time.monotonic()
            try:
                if isinstance(hosts, str):  # the hosts could not be made: say why, per trial
                    raise TrialFailed(hosts)
                doc = run_trial(w, s, impl, profile, where, log_dir, hosts, quantity, sites)
            except TrialFailed as e:
                out.failures[key] = f"round {round_no}: {e}"
            else:
                doc["_seconds"] = time.monotonic() - started
                if round_no > 0:  # round 0 is the discarded warm-up
                    doc["_round"] = round_no
                    doc["_time"] = time.time()
                    if node is not None:
                        doc["_node"] = node
                    out.docs.setdefault(key, []).append(doc)
            if on_trial:
                failed = key in out.failures
                on_trial(
                    TrialDone(
                        w.name,
                        s.name,
                        impl.id,
                        time.monotonic() - started,
                        failed,
                        len(rounds) - at - 1 if failed else 0,
                    )
                )


def planned_trials(
    plan: Plan, profile: str, sites: Sites | None = None
) -> list[tuple[Workload, Scenario, Impl]]:
    """Every trial the plan will run (warm-up rounds and the A/A twin's included), in no
    particular order."""
    out = []
    for w, scenarios, impls in plan:
        for s in scenarios:
            chosen, _ = aa.with_twin(w, runnable(w, s, impls, sites)[0])
            out += [(w, s, i) for i in chosen for _ in range(w.repetitions(profile) + 1)]
    return out


def trials_planned(plan: Plan, profile: str) -> int:
    return len(planned_trials(plan, profile))


def field_value(doc: dict, dotted: str):
    """A value from the driver's JSON by dotted path ('latency_us.p50'); None if absent."""
    value = doc
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value
