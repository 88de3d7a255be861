"""Instruction counts (`msgbench bench --measure instructions`): a scenario's trials with the
implementation's process under valgrind, reported as instructions per operation.

Wall time on a shared 2-core machine moves by a few percent between runs; the instructions a
deterministic program executes for the same work do not, and they are the same on any x86-64
machine running the same binaries. What they leave out (system calls, the kernel's work, cache
misses, branch mispredictions, time spent waiting) is said beside every figure (CAVEAT).

Method (docs/decisions.md, issue 13): each trial runs the scenario twice, with its operation
count N and 2N, and takes (I(2N) - I(N)) / (ops(2N) - ops(N)). Start-up, warm-up and shut-down
are the same in both runs and cancel; nothing has to know when the measured phase begins.
The tool is cachegrind with its cache simulation off (it counts executed instructions, Ir):
callgrind counts the same instructions but aborts on Go programs (its signal tracking asserts
when the Go runtime's handlers run), and a lab's figures must come from one tool.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from .trials import TrialContext, TrialFailed, TrialKind

if TYPE_CHECKING:
    from .registry import Scenario, Workload

MEASURES = ("time", "instructions")
METRIC = "instructions_per_op"
METRIC_DEF = {
    "field": "instructions.per_op",
    "unit": "instr/op",
    "better": "lower",
    "label": "instructions per operation",
    "role": "instructions",
}
TOOL = "cachegrind"
VALGRIND_OPTIONS = (
    f"--tool={TOOL}",
    "--cache-sim=no",  # count instructions only: no cache model to run, nothing to calibrate
    "--trace-children=yes",  # an implementation that execs or forks is counted in every process
)
# How much slower valgrind runs CPU-bound code (its documentation says 20-100x for its tools;
# cachegrind without the cache model sits at the low end). A trial's timeout allows this much of
# its recorded native duration.
SLOWDOWN = 50
CAVEAT = (
    "Instructions executed in user space by the implementation's processes, counted by "
    "valgrind (cachegrind): system calls, the kernel's work, cache misses, branch "
    "mispredictions and time spent waiting are not counted, and valgrind runs a program's "
    "threads one at a time. Deterministic and comparable across machines — but not time."
)
_SUMMARY = re.compile(rb"^summary:\s+(\d+)", re.MULTILINE)


@dataclass(frozen=True)
class Counting:
    """A scenario's `instructions` table in workload.toml: which scenario parameter sets the
    number of operations (`param`, run at N and 2N) and which field of the driver's output
    counts the operations it measured (`ops`, a dotted path)."""

    param: str
    ops: str


def valgrind() -> str | None:
    return shutil.which("valgrind")


def require_valgrind() -> str:
    """valgrind's path; else a clear error (scripts/apt-packages.txt lists it for setup)."""
    path = valgrind()
    if path is None:
        raise RuntimeError(
            "valgrind is not installed: `make setup` installs it (scripts/apt-packages.txt); "
            "--measure instructions needs it"
        )
    return path


def describe() -> dict:
    """The run document's `run.instructions`: how the counts were taken."""
    version = ""
    if valgrind():
        done = subprocess.run(["valgrind", "--version"], capture_output=True, text=True)
        version = done.stdout.strip()
    return {
        "tool": TOOL,
        "valgrind": version,
        "options": list(VALGRIND_OPTIONS),
        "method": "per trial: runs with N and 2N operations; (I(2N) - I(N)) / (ops(2N) - ops(N))",
        "caveat": CAVEAT,
    }


# The workload entries' tables about timed metrics (targets, side-by-side pairs, sweeps, the
# seed's claims, ratio charts, matrices): an instruction run measures none of their metrics.
TIME_TABLES = ("targets", "side_by_side", "sweeps", "published", "ratio_charts", "matrices")


def drop_time_tables(doc: dict) -> None:
    """Empty the workload entries' tables of timed metrics in an instruction run's document,
    so its report shows no target or chart without a figure."""
    for entry in doc.get("workloads", []):
        for key in TIME_TABLES:
            if key in entry:
                entry[key] = []


def counted_scenario(s: Scenario) -> Scenario:
    """The scenario as an instruction run measures it: one metric, instructions per op."""
    return replace(s, primary=METRIC, metrics=[METRIC])


def eligible(w: Workload, named: list[Scenario] | None = None) -> list[Scenario]:
    """The scenarios of `w` an instruction run measures: the `named` ones (each must be marked
    `instructions` in workload.toml, else ValueError), or (None) every marked one."""
    if named is None:
        return [counted_scenario(s) for s in w.scenarios.values() if s.instructions]
    wrong = [s.name for s in named if not s.instructions]
    if wrong:
        raise ValueError(
            f"scenario '{wrong[0]}' of {w.name} is not counted in instructions (only "
            "single-connection scenarios marked `instructions` in workload.toml are: "
            f"{', '.join(marked()) or 'none'})"
        )
    return [counted_scenario(s) for s in named]


def marked() -> list[str]:
    """Every scenario marked `instructions`, as "workload/scenario"."""
    from . import registry  # registry imports this module

    return [
        f"{w.name}/{s.name}"
        for w in registry.load().values()
        for s in w.scenarios.values()
        if s.instructions
    ]


def wrap_argv(argv: list[str], folder: Path) -> list[str]:
    """The implementation's argv under valgrind, its counts written into `folder` (one file
    per process) and valgrind's own messages beside them, not into the implementation's log."""
    return [
        "valgrind",
        *VALGRIND_OPTIONS,
        f"--{TOOL}-out-file={folder / f'{TOOL}.out.%p'}",
        f"--log-file={folder / 'valgrind.%p.log'}",
        *argv,
    ]


def read_total(folder: Path) -> int:
    """Instructions executed by every process counted into `folder` (the sum of the files'
    `summary:` lines); TrialFailed when there is none (the process was killed before valgrind
    could write, or the trial kind did not run it through TrialContext.wrap)."""
    files = sorted(folder.glob(f"{TOOL}.out.*"))
    totals = []
    for f in files:
        found = _SUMMARY.search(f.read_bytes())
        if found is None:
            raise TrialFailed(f"{f.name} has no summary line (valgrind stopped while writing it?)")
        totals.append(int(found.group(1)))
    if not totals:
        raise TrialFailed(
            f"valgrind wrote no count into {folder.name}: the implementation did not exit "
            "normally, or this trial kind does not start it through TrialContext.wrap"
        )
    return sum(totals)


@dataclass(frozen=True)
class Count:
    """One run of a trial: its operation parameter, the operations the driver measured, the
    instructions the implementation executed."""

    n: int
    ops: float
    instructions: int


def per_op(short: Count, long: Count) -> float:
    """(I(2N) - I(N)) / (ops(2N) - ops(N)): what one more operation costs, start-up and
    shut-down cancelled. TrialFailed when the difference cannot be such a cost."""
    extra_ops = long.ops - short.ops
    if extra_ops <= 0:
        raise TrialFailed(
            f"the run with {long.n} operations measured {long.ops:g} ops, not more than the run "
            f"with {short.n} ({short.ops:g})"
        )
    extra = long.instructions - short.instructions
    if extra <= 0:
        raise TrialFailed(
            f"{long.instructions} instructions for {long.ops:g} ops, not more than "
            f"{short.instructions} for {short.ops:g}: no per-operation cost can be read"
        )
    return extra / extra_ops


def base_n(ctx: TrialContext, counting: Counting) -> int:
    """N: the operation parameter as this trial would run it (the implementation's own
    [params] first, then the scenario's for the profile)."""
    own = ctx.impl.params.get(ctx.scenario.name, {}).get(ctx.profile) or {}
    values = {**ctx.scenario.params.get(ctx.profile, {}), **own}
    n = values.get(counting.param)
    if not isinstance(n, int) or n <= 0:
        raise TrialFailed(
            f"scenario {ctx.scenario.name}: `{counting.param}` for profile {ctx.profile} is "
            f"{n!r}, not a positive number of operations"
        )
    return n


def timeout_s(ctx: TrialContext) -> int:
    """The trial's timeout under valgrind: SLOWDOWN x its recorded native duration
    (durations.json), and never less than the workload's own trial timeout."""
    from . import budget

    known = budget.load(ctx.workload)
    native = budget.trial_estimate(ctx.workload, ctx.scenario, ctx.impl, ctx.profile, known)
    return max(ctx.timeout_s, int(SLOWDOWN * native))


def trial_folder(ctx: TrialContext) -> Path:
    """A fresh folder in the run's logs for one trial's counts (kept: cg_annotate reads them)."""
    parent = ctx.log_dir / "instructions" / f"{ctx.workload.name}-{ctx.scenario.name}-{ctx.impl.id}"
    parent.mkdir(parents=True, exist_ok=True)
    number = len([p for p in parent.iterdir() if p.is_dir()]) + 1
    folder = parent / f"trial-{number:02d}"
    folder.mkdir()
    return folder


def measure_trial(kind: TrialKind, ctx: TrialContext) -> dict:
    """One trial: the scenario at N and 2N operations, the implementation under valgrind each
    time. Returns {"instructions": {"per_op", "n", "ops", "instructions", "tool"}}."""
    from .runner import field_value  # the runner imports this module

    counting: Counting | None = ctx.scenario.instructions
    if counting is None:
        raise TrialFailed(f"scenario {ctx.scenario.name} is not marked `instructions`")
    n = base_n(ctx, counting)
    folder = trial_folder(ctx)
    limit = timeout_s(ctx)
    counts = []
    for size in (n, 2 * n):
        out = folder / f"n{size}"
        out.mkdir()
        run_ctx = replace(
            ctx, params={counting.param: size}, wrap=partial(wrap_argv, folder=out), timeout_s=limit
        )
        doc = kind.run(run_ctx)
        ops = field_value(doc, counting.ops)
        if not isinstance(ops, int | float):
            raise TrialFailed(f"the driver's output has no operation count `{counting.ops}`")
        counts.append(Count(size, float(ops), read_total(out)))
    short, long = counts
    value = per_op(short, long)
    with open(ctx.driver_log, "a") as log:
        log.write(
            f"# instructions {ctx.scenario.name} {ctx.impl.id}: "
            f"{long.instructions} - {short.instructions} instructions over "
            f"{long.ops:g} - {short.ops:g} ops = {value:.1f} per op ({folder})\n"
        )
    return {
        "instructions": {
            "per_op": value,
            "n": [short.n, long.n],
            "ops": [short.ops, long.ops],
            "instructions": [short.instructions, long.instructions],
            "tool": TOOL,
        }
    }
