"""Measuring trials: placement, interleaving, warm-up, timeouts, and the raw samples.

One trial = one run of the workload's driver against one implementation for one scenario.
Trials of different implementations interleave in a freshly shuffled order every round, and
the first round is a warm-up whose trials are discarded, so slow drift of the machine (thermal,
other tenants) spreads over every implementation instead of favouring whoever ran first.
"""

from __future__ import annotations

import json
import random
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from . import machine
from .registry import Impl, Scenario, Workload

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


class TrialFailed(Exception):
    pass


def _cpus(cpus: tuple[int, ...]) -> str:
    return ",".join(str(c) for c in cpus)


def stdio_trial_argv(
    w: Workload,
    s: Scenario,
    impl: Impl,
    profile: str,
    where: Placement,
    stderr_log: Path,
    timeout_s: int,
) -> list[str]:
    """The driver launches the implementation itself (as a browser launches a host)."""
    argv = [*w.driver(s.driver), *s.argv(profile)]
    if where.driver_cpus:
        argv += ["--driver-cpus", _cpus(where.driver_cpus)]
    if where.impl_cpus:
        argv += ["--host-cpus", _cpus(where.impl_cpus)]
    argv += [
        "--host-stderr",
        str(stderr_log),
        "--timeout-s",
        str(timeout_s),
        "--host-cwd",
        impl.cwd(),
        "--",
        *impl.argv(),
    ]
    return argv


def free_port() -> int:
    """A free loopback port for a server trial (the kernel's choice; released at once, so a
    race with another program is possible but the driver then fails clearly at start-up)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def server_trial_argv(
    w: Workload,
    s: Scenario,
    impl: Impl,
    profile: str,
    where: Placement,
    stderr_log: Path,
    timeout_s: int,
) -> list[str]:
    """The driver starts the server on a free port ({port} in its argv), loads it, stops it:
    the same options as a stdio driver plus --port, and --client-json with the
    implementation's own client program when it has one (scenarios choose whether to use it)."""
    port = free_port()
    argv = stdio_trial_argv(w, s, impl, profile, where, stderr_log, timeout_s)
    cut = len(argv) - len(impl.argv()) - 1  # the "--" before the implementation's argv
    extra = ["--port", str(port)]
    if impl.client_argv():
        extra += ["--client-json", json.dumps(impl.client_argv(port))]
    return [*argv[:cut], *extra, "--", *impl.argv(port)]


TRIAL_ARGV = {"stdio": stdio_trial_argv, "server": server_trial_argv}


def run_trial(
    w: Workload, s: Scenario, impl: Impl, profile: str, where: Placement, log_dir: Path
) -> dict:
    """Run one trial; return the driver's JSON document or raise TrialFailed."""
    if w.kind not in TRIAL_ARGV:
        raise TrialFailed(f"workload kind '{w.kind}' has no trial runner")
    timeout_s = int(w.profiles.get("trial_timeout_s", DEFAULT_TRIAL_TIMEOUT_S))
    stderr_log = log_dir / f"{w.name}-{impl.id}.stderr.log"
    argv = TRIAL_ARGV[w.kind](w, s, impl, profile, where, stderr_log, timeout_s)
    with open(log_dir / f"{w.name}-driver.log", "a") as dlog:
        dlog.write(f"$ {' '.join(argv)}\n")
        try:
            proc = subprocess.run(
                argv, stdout=subprocess.PIPE, stderr=dlog, text=True, timeout=timeout_s + 30
            )
        except subprocess.TimeoutExpired:
            raise TrialFailed(f"driver did not finish within {timeout_s + 30} s") from None
        except OSError as e:
            raise TrialFailed(f"cannot start the driver: {e}") from None
        dlog.write(proc.stdout + "\n")
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise TrialFailed(
            f"driver exit status {proc.returncode}, output is not JSON "
            f"(see {log_dir.name}/{w.name}-driver.log)"
        ) from None
    if proc.returncode != 0 or "error" in doc:
        raise TrialFailed(str(doc.get("error", f"driver exit status {proc.returncode}")))
    return doc


@dataclass
class Measurements:
    """Everything measured so far; survives Ctrl-C so a partial run is still reported."""

    docs: dict[tuple[str, str, str], list[dict]] = field(default_factory=dict)
    failures: dict[tuple[str, str, str], str] = field(default_factory=dict)
    skipped: dict[tuple[str, str, str], str] = field(default_factory=dict)
    interrupted: bool = False


def measure(
    plan: list[tuple[Workload, list[Scenario], list[Impl]]],
    profile: str,
    where: Placement,
    log_dir: Path,
    seed: int | None = None,
    on_trial: Callable[[str], None] | None = None,
) -> Measurements:
    """Run every scenario of the plan: round 0 is the warm-up, then `repetitions` rounds."""
    rng = random.Random(seed)
    out = Measurements()
    log_dir.mkdir(parents=True, exist_ok=True)
    try:
        for w, scenarios, impls in plan:
            reps = w.repetitions(profile)
            for s in scenarios:
                missing = w.drivers[s.driver].missing()
                if missing:  # e.g. no browser: skipped with the reason, never silently
                    for impl in impls:
                        out.skipped[(w.name, s.name, impl.id)] = (
                            f"{', '.join(missing)} not installed (run `make setup`)"
                        )
                    continue
                runnable = list(impls)
                if s.own_client:  # e.g. comm's test4-own: the floor brings no client
                    for impl in impls:
                        if not impl.client_argv():
                            out.skipped[(w.name, s.name, impl.id)] = "has no client program"
                    runnable = [i for i in impls if i.client_argv()]
                for round_no in range(reps + 1):
                    order = list(runnable)
                    rng.shuffle(order)
                    for impl in order:
                        key = (w.name, s.name, impl.id)
                        if key in out.failures:
                            continue
                        try:
                            doc = run_trial(w, s, impl, profile, where, log_dir)
                        except TrialFailed as e:
                            out.failures[key] = f"round {round_no}: {e}"
                        else:
                            if round_no > 0:  # round 0 is the discarded warm-up
                                doc["_round"] = round_no
                                doc["_time"] = time.time()
                                out.docs.setdefault(key, []).append(doc)
                        if on_trial:
                            on_trial(f"{w.name} {s.name} {impl.id}")
    except KeyboardInterrupt:
        out.interrupted = True
    return out


def trials_planned(plan: list[tuple[Workload, list[Scenario], list[Impl]]], profile: str) -> int:
    return sum((w.repetitions(profile) + 1) * len(ss) * len(ii) for w, ss, ii in plan)


def field_value(doc: dict, dotted: str):
    """A value from the driver's JSON by dotted path ('latency_us.p50'); None if absent."""
    value = doc
    for part in dotted.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value
