"""How long a run will take, before it starts and while it runs.

Each workload keeps the durations its trials and its conformance suite took in a measured run
(`workloads/<w>/durations.json`, written by `msgbench durations RUN`), so a fresh clone can
plan a run before anything has been measured on it. While a run goes on, the estimate of what
is left is scaled by how the trials done so far compared with their estimates: a machine twice
as slow as the one that wrote the file gets an ETA twice as long after a few trials.
"""

from __future__ import annotations

import json
import statistics
from dataclasses import dataclass, field
from pathlib import Path

from . import aa
from .registry import Impl, Scenario, Workload

DURATIONS_FILE = "durations.json"
DEFAULT_TRIAL_S = 5.0  # a scenario nobody has timed yet
DEFAULT_VERIFY_S = 60.0  # an implementation whose suite nobody has timed yet


def _path(w: Workload) -> Path:
    return w.dir / DURATIONS_FILE


def load(w: Workload) -> dict:
    """{"trials": {profile: {scenario: {impl: s}}}, "verify": {impl: s}} ({} if none)."""
    try:
        return json.loads(_path(w).read_text())
    except (OSError, json.JSONDecodeError):
        return {}


def trial_estimate(w: Workload, s: Scenario, impl: Impl, profile: str, known: dict) -> float:
    """Seconds for one trial: the recorded one, else (the A/A twin) its subject's, else the
    scenario's median over the other implementations (a new variant costs about what its
    language's siblings cost); for a profile nobody timed in this scenario, the same read from
    another profile's durations and scaled by how much more work this profile's parameters ask
    for; else a default."""
    trials = known.get("trials", {})
    own = _recorded(trials.get(profile, {}).get(s.name, {}), impl)
    if own is not None:
        return own
    for other in sorted(trials, key=lambda p: -_work(s, p)):  # the largest timed sizes first
        timed = _recorded(trials[other].get(s.name, {}), impl)
        if other != profile and timed is not None and _work(s, other) and _work(s, profile):
            return timed * _work(s, profile) / _work(s, other)
    return DEFAULT_TRIAL_S


def _recorded(recorded: dict, impl: Impl) -> float | None:
    """The trial seconds one profile's durations give `impl` (see trial_estimate), or None."""
    if impl.id in recorded:
        return float(recorded[impl.id])
    subject = aa.subject_of(impl.id, recorded)
    if subject:  # the twin runs its subject's program
        return float(recorded[subject])
    if recorded:
        return float(statistics.median(recorded.values()))
    return None


def _work(s: Scenario, profile: str) -> float:
    """How much a profile asks of a trial: the sum of the scenario's numeric parameters for it
    (requests, messages, iterations with their warm-up), 0 when it has none. A linear model
    that leaves out each trial's fixed start-up, so a scaled-up estimate errs long, not short."""
    values = (s.params or {}).get(profile) or {}
    return float(sum(v for v in values.values() if isinstance(v, (int, float))))


def verify_estimate(impl: Impl, known: dict) -> float:
    recorded = known.get("verify", {})
    if impl.id in recorded:
        return float(recorded[impl.id])
    if recorded:
        return float(statistics.median(recorded.values()))
    return DEFAULT_VERIFY_S


@dataclass
class Estimate:
    verify_s: float
    trials: list[float]  # one per planned trial, warm-ups included
    per_workload: dict[str, float] = field(default_factory=dict)  # verify + trials
    per_trial: dict[tuple[str, str, str], float] = field(default_factory=dict)  # (w, s, impl)

    @property
    def measure_s(self) -> float:
        return sum(self.trials)

    @property
    def total_s(self) -> float:
        return self.verify_s + self.measure_s


def estimate(
    plan: list[tuple[Workload, list[Scenario], list[Impl]]],
    profile: str,
    trials: list[tuple[Workload, Scenario, Impl]],
    verify: bool = True,
) -> Estimate:
    known = {w.name: load(w) for w, _, _ in plan}
    est = Estimate(verify_s=0.0, trials=[])
    for w, _, impls in plan:
        v = sum(verify_estimate(i, known[w.name]) for i in impls if not i.absent) if verify else 0.0
        est.verify_s += v
        est.per_workload[w.name] = v
    for w, s, impl in trials:
        key = (w.name, s.name, impl.id)
        if key not in est.per_trial:
            est.per_trial[key] = trial_estimate(w, s, impl, profile, known[w.name])
        est.trials.append(est.per_trial[key])
        est.per_workload[w.name] += est.per_trial[key]
    return est


class Eta:
    """The time left, re-estimated after every trial."""

    def __init__(self, estimates: list[float]):
        self.left = sum(estimates)  # estimated seconds of the trials not yet run
        self.mean = sum(estimates) / len(estimates) if estimates else 0.0
        self.done_estimated = 0.0
        self.done_actual = 0.0

    def trial_done(self, estimated: float, actual: float, dropped: int = 0) -> None:
        """A trial that was estimated at `estimated` s took `actual` s; `dropped` later trials
        of the same implementation and scenario will not run (it failed)."""
        self.left = max(0.0, self.left - estimated - dropped * estimated)
        self.done_estimated += estimated
        self.done_actual += actual

    @property
    def speed(self) -> float:
        """Actual ÷ estimated so far (1 before anything ran)."""
        if self.done_estimated <= 0:
            return 1.0
        return self.done_actual / self.done_estimated

    @property
    def remaining_s(self) -> float:
        return self.left * self.speed


def fmt_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds >= 3600:
        return f"{seconds // 3600} h {seconds % 3600 // 60:02d} min"
    if seconds >= 60:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds} s"


def record(w: Workload, profile: str, trial_s: dict, verify_s: dict) -> Path:
    """Merge one run's durations into the workload's file: trial_s {scenario: {impl: [s]}}
    (medians are kept), verify_s {impl: s}. Other profiles and absent entries are kept."""
    known = load(w)
    trials = known.setdefault("trials", {}).setdefault(profile, {})
    for scenario, by_impl in trial_s.items():
        for impl, secs in by_impl.items():
            if secs:
                trials.setdefault(scenario, {})[impl] = round(statistics.median(secs), 3)
    for impl, secs in verify_s.items():
        known.setdefault("verify", {})[impl] = round(secs, 1)
    known["about"] = (
        "Seconds per trial (median, warm-up included) and per conformance run, measured by "
        "`msgbench durations RUN`; `msgbench bench` plans its duration from them."
    )
    path = _path(w)
    path.write_text(json.dumps(known, indent=1, sort_keys=True) + "\n")
    return path
