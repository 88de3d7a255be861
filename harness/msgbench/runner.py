"""Measuring trials: placement, interleaving, warm-up, timeouts, and the raw samples.

One trial = one run of the workload's driver against one implementation for one scenario.
Trials of different implementations interleave in a freshly shuffled order every round, and
the first round is a warm-up whose trials are discarded, so slow drift of the machine (thermal,
other tenants) spreads over every implementation instead of favouring whoever ran first. One
implementation per scenario also runs under a twin's label in the same rounds: the A/A control
(aa.py), the measure of this run's own noise.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from . import aa, instructions, machine, registry, trials
from .hosts import TrialHosts
from .registry import Impl, Scenario, Workload
from .topology import TopologyError
from .trials import TrialFailed

DEFAULT_TRIAL_TIMEOUT_S = 300
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
) -> dict:
    """Run one trial; return the driver's JSON document or raise TrialFailed. quantity
    "instructions": the implementation's instructions per operation (msgbench.instructions)."""
    ctx = trials.TrialContext(
        workload=w,
        scenario=s,
        impl=impl,
        profile=profile,
        placement=where,
        log_dir=log_dir,
        timeout_s=int(w.profiles.get("trial_timeout_s", DEFAULT_TRIAL_TIMEOUT_S)),
        hosts=hosts,
    )
    kind = trial_kind(w, s)
    doc = instructions.measure_trial(kind, ctx) if quantity == "instructions" else kind.run(ctx)
    if hosts is not None:
        doc.setdefault("hosts", hosts.description)
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


def runnable(w: Workload, s: Scenario, impls: list[Impl]) -> tuple[list[Impl], dict[str, str]]:
    """The implementations a scenario can measure, and why each other one is skipped."""
    skipped: dict[str, str] = {}
    missing = w.drivers[s.driver].missing() if s.driver else []
    kind = trial_kind(w, s)
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
        elif why := kind.runnable(impl, s):
            skipped[impl.id] = why
    return [i for i in impls if i.id not in skipped], skipped


def measure(
    plan: Plan,
    profile: str,
    where: Placement,
    log_dir: Path,
    seed: int | None = None,
    on_trial: Callable[[TrialDone], None] | None = None,
    quantity: str = "time",
) -> Measurements:
    """Run every scenario of the plan: round 0 is the warm-up, then `repetitions` rounds.
    quantity: what a trial measures, "time" (the driver's figures) or "instructions"."""
    rng = random.Random(seed)
    out = Measurements()
    log_dir.mkdir(parents=True, exist_ok=True)
    try:
        for w, scenarios, impls in plan:
            for s in scenarios:
                chosen, skipped = runnable(w, s, impls)
                for impl_id, why in skipped.items():
                    out.skipped[(w.name, s.name, impl_id)] = why
                if not chosen:
                    continue
                chosen, pair = aa.with_twin(w, chosen)  # the A/A control, in the same rounds
                if pair:
                    out.aa[(w.name, s.name)] = pair
                with _scenario_hosts(s) as hosts_or_failure:
                    _rounds(
                        w,
                        s,
                        chosen,
                        profile,
                        where,
                        log_dir,
                        rng,
                        out,
                        on_trial,
                        hosts_or_failure,
                        quantity,
                    )
    except KeyboardInterrupt:
        out.interrupted = True
    return out


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
) -> None:
    """One scenario's rounds: round 0 is the discarded warm-up, then `repetitions` rounds, each
    in a freshly shuffled order of implementations."""
    reps = w.repetitions(profile)
    for round_no in range(reps + 1):
        order = list(chosen)
        rng.shuffle(order)
        for impl in order:
            key = (w.name, s.name, impl.id)
            if key in out.failures:
                continue
            started = time.monotonic()
            try:
                if isinstance(hosts, str):  # the hosts could not be made: say why, per trial
                    raise TrialFailed(hosts)
                doc = run_trial(w, s, impl, profile, where, log_dir, hosts, quantity)
            except TrialFailed as e:
                out.failures[key] = f"round {round_no}: {e}"
            else:
                doc["_seconds"] = time.monotonic() - started
                if round_no > 0:  # round 0 is the discarded warm-up
                    doc["_round"] = round_no
                    doc["_time"] = time.time()
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
                        reps - round_no if failed else 0,
                    )
                )


def planned_trials(plan: Plan, profile: str) -> list[tuple[Workload, Scenario, Impl]]:
    """Every trial the plan will run (warm-up rounds and the A/A twin's included), in no
    particular order."""
    out = []
    for w, scenarios, impls in plan:
        for s in scenarios:
            chosen, _ = aa.with_twin(w, runnable(w, s, impls)[0])
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
