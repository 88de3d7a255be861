"""How busy the machine was before and during a run: the CPU that work other than the lab's took
on the CPUs the trials use, and the time the hypervisor stole from them.

A thread samples /proc every INTERVAL_S seconds while the trials run: per-CPU busy and steal
ticks from /proc/stat, and the CPU time of the lab's own process tree (this process and its
descendants). "Foreign" CPU is the busy time of the watched CPUs less the lab's own. One sample
reads /proc/stat and the stat files of the lab's processes only (found through the kernel's
`children` lists, one per thread): 0.2 ms of CPU for a few processes, ~2 ms for a tree of 170
threads such as a browser's (measured on the lab's 2-core VM), i.e. at most ~0.2% of one CPU at
one sample a second; the record says what it cost (`sampler_cpu_seconds`). Nothing here may
fail a run: an error becomes a note in the record.

A run whose roles are on Ray nodes (docs/hosts.md) starts its drivers and implementations through
Ray's processes, not as this process's descendants: there the lab's own processes are also those
marked with the run's token in their environment (`mark()`), and the Ray workers that started
them, for the CPU of the marked children they reaped. Ray's own work stays foreign: what the
cluster's processes take from the trials' CPUs is what the record then shows.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np

INTERVAL_S = 1.0  # one sample a second: fine enough to see a build or a test suite start
BEFORE_S = 1.0  # the look at the machine before the first trial, with the lab idle

# The busy rule. The goal is to resolve differences of ~3% between implementations on a
# 2-core machine whose CPUs the driver and the implementation each hold.
#: Mean foreign CPU (in CPUs) on the watched CPUs at or above which a run is "busy": a quarter of
#: a CPU of other work preempts the lab's processes ~1/8 of the time on two CPUs, several times
#: the 3% the A/A control should resolve; below it the remainder is mostly kernel threads and
#: the tick-granular accounting's own error (~0.02 CPU a sample at 100 Hz).
BUSY_FOREIGN_CPUS = 0.25
#: Mean steal fraction at or above which a run is "busy": the hypervisor ran something else for
#: that share of the time the lab's CPUs wanted to run, a direct error of that size on any
#: CPU-bound figure, i.e. as large as the 3% the run should resolve.
BUSY_STEAL_FRACTION = 0.03
RULE = (
    f"busy when, during the trials, other work took on average at least {BUSY_FOREIGN_CPUS} CPU "
    f"of the CPUs the trials use, or the hypervisor stole at least {BUSY_STEAL_FRACTION:.0%} of "
    "their time (the look before the first trial decides when the trials gave no sample)"
)


@dataclass(frozen=True)
class CpuTimes:
    busy: int  # user + nice + system: ticks spent running tasks (guest time is inside user)
    steal: int
    total: int  # every state, idle, iowait, interrupts and steal included


class Reader(Protocol):
    def cpu_times(self) -> dict[int, CpuTimes]: ...

    def loadavg(self) -> list[float]: ...

    def tree_ticks(self, pid: int) -> int: ...


def _read(path: str) -> bytes:
    """A /proc file's bytes. os.open/os.read rather than Path.read_text: a sample reads one
    `children` file per thread of the lab (a browser has hundreds), and this is ~3x cheaper."""
    fd = os.open(path, os.O_RDONLY)
    try:
        return os.read(fd, 65536)
    finally:
        os.close(fd)


class ProcReader:
    """/proc under `root` (a fixture tree in tests)."""

    def __init__(self, root: Path = Path("/")):
        self.proc = str(root / "proc")
        self._children_lists: bool | None = None
        # The run's token (`NAME=value` in a process's environment), and the parents that
        # reaped marked children: {pid: their cutime + cstime when adopted}.
        self.marker: bytes | None = None
        self._adopted: dict[int, int] = {}

    def cpu_times(self) -> dict[int, CpuTimes]:
        out = {}
        with open(f"{self.proc}/stat", "rb") as f:  # longer than one read on a many-CPU machine
            text = f.read()
        for line in text.splitlines():
            name, *fields = line.split()
            if not name.startswith(b"cpu") or name == b"cpu" or len(fields) < 8:
                continue
            user, nice, system, idle, iowait, irq, softirq, steal = map(int, fields[:8])
            total = user + nice + system + idle + iowait + irq + softirq + steal
            out[int(name[3:])] = CpuTimes(user + nice + system, steal, total)
        return out

    def loadavg(self) -> list[float]:
        return [float(x) for x in _read(f"{self.proc}/loadavg").split()[:3]]

    def tree_ticks(self, pid: int) -> int:
        """utime + stime + cutime + cstime summed over pid and its live descendants. A child that
        exits and is reaped moves its time into its parent's cutime/cstime, so the sum carries on
        across exits and its differences are the tree's CPU use; a process that vanishes between
        two reads is skipped (its time shows up in its parent's at the next sample). With a
        marker, the marked processes outside the tree count too (marked_ticks)."""
        tree = self._tree(pid)
        own = sum(self._ticks(p) for p in tree)
        return own + self.marked_ticks(set(tree)) if self.marker else own

    def marked_ticks(self, exclude: set[int]) -> int:
        """The ticks of every live process whose environment holds the marker (outside
        `exclude`), plus the children's ticks (cutime + cstime, since adoption) of the unmarked
        parents that started them: a marked child's time moves there when it is reaped, so the
        sum carries on across exits as tree_ticks' does."""
        marked: dict[int, list[bytes]] = {}
        for entry in os.listdir(self.proc):
            if not entry.isdigit() or int(entry) in exclude:
                continue
            try:
                env = _read(f"{self.proc}/{entry}/environ")
            except OSError:
                continue
            if self.marker in env.split(b"\0"):
                fields = self._stat(int(entry))
                if fields:
                    marked[int(entry)] = fields
        total = sum(sum(int(x) for x in f[11:15]) for f in marked.values())
        for fields in marked.values():
            parent = int(fields[1])
            if parent not in marked and parent not in exclude and parent not in self._adopted:
                reaped = self._reaped(parent)
                if reaped is not None:
                    self._adopted[parent] = reaped
        for parent, base in list(self._adopted.items()):
            reaped = self._reaped(parent)
            if reaped is None:
                del self._adopted[parent]  # gone: what it reaped is no longer readable
            else:
                total += reaped - base
        return total

    def _reaped(self, pid: int) -> int | None:
        fields = self._stat(pid)
        return int(fields[13]) + int(fields[14]) if fields else None

    def _ticks(self, pid: int) -> int:
        fields = self._stat(pid)
        return sum(int(x) for x in fields[11:15]) if fields else 0

    def _stat(self, pid: int) -> list[bytes] | None:
        """The fields after the command name (state, ppid, ...), None for a vanished process."""
        try:
            text = _read(f"{self.proc}/{pid}/stat")
        except OSError:
            return None
        fields = text.rpartition(b")")[2].split()  # the name may hold spaces and parentheses
        return fields if len(fields) >= 15 else None

    def _tree(self, pid: int) -> list[int]:
        if self._children_lists is None:
            self._children_lists = os.path.exists(f"{self.proc}/{pid}/task/{pid}/children")
        if not self._children_lists:
            return self._tree_by_scan(pid)
        tree, todo = [], [pid]
        while todo:
            p = todo.pop()
            tree.append(p)
            task_dir = f"{self.proc}/{p}/task"
            try:
                tids = os.listdir(task_dir)
            except OSError:
                continue  # vanished
            for tid in tids:  # a child is listed under the thread that forked it
                try:
                    todo += [int(c) for c in _read(f"{task_dir}/{tid}/children").split()]
                except (OSError, ValueError):
                    continue
        return tree

    def _tree_by_scan(self, pid: int) -> list[int]:
        """Without the kernel's children lists: every process's parent from its stat file."""
        kids: dict[int, list[int]] = {}
        for entry in os.listdir(self.proc):
            if entry.isdigit():
                fields = self._stat(int(entry))
                if fields:
                    kids.setdefault(int(fields[1]), []).append(int(entry))
        tree, todo = [], [pid]
        while todo:
            p = todo.pop()
            tree.append(p)
            todo += kids.get(p, [])
        return tree


@dataclass
class Sample:
    seconds: float
    busy_cpus: float  # the watched CPUs' busy time, in CPUs
    own_cpus: float  # the lab's process tree's CPU time, in CPUs
    steal_fraction: float  # stolen share of the watched CPUs' time
    per_cpu: dict[int, tuple[float, float]] = field(default_factory=dict)  # cpu: (busy, steal)

    @property
    def foreign_cpus(self) -> float:
        return max(0.0, self.busy_cpus - max(0.0, self.own_cpus))


@dataclass
class _Snapshot:
    at: float
    cpus: dict[int, CpuTimes]
    own_ticks: int


def is_busy(before: dict | None, during: dict | None) -> tuple[bool, list[str]]:
    """The busy flag and its reasons, by RULE, from the summaries `stop()` records."""
    if during:
        when = "during the trials"
        foreign, steal = during["foreign_cpus"]["mean"], during["steal_fraction"]["mean"]
    elif before and "foreign_cpus" in before:
        when = "before the trials"
        foreign, steal = before["foreign_cpus"], before["steal_fraction"]
    else:
        return False, []
    reasons = []
    if foreign >= BUSY_FOREIGN_CPUS:
        reasons.append(f"other work took {foreign:.2f} CPU on average {when}")
    if steal >= BUSY_STEAL_FRACTION:
        reasons.append(f"the hypervisor stole {steal:.1%} of the CPUs' time {when}")
    return bool(reasons), reasons


class LoadWatch:
    """start() before the first trial, stop() after the last (also on Ctrl-C): stop() returns
    the run's load record (docs/results-schema.md, run.load)."""

    def __init__(
        self,
        cpus: Iterable[int] | None = None,
        *,
        reader: Reader | None = None,
        interval: float = INTERVAL_S,
        before: float = BEFORE_S,
        pid: int | None = None,
        clock: Callable[[], float] = time.monotonic,
        clk_tck: int | None = None,
    ):
        self.cpus = sorted(set(cpus)) if cpus else None  # None: every CPU
        self.reader = reader or ProcReader()
        self.interval, self.before_s = interval, before
        self.pid = os.getpid() if pid is None else pid
        self.clock = clock
        self.clk_tck = clk_tck or os.sysconf("SC_CLK_TCK")
        self.notes: list[str] = []
        self.samples: list[Sample] = []
        self.before: dict | None = None
        self.sampler_cpu_s = 0.0
        self._last: _Snapshot | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Look at the machine for `before` seconds with the lab idle, then sample in a thread.
        Raises nothing but KeyboardInterrupt (Ctrl-C during the look)."""
        t0 = time.thread_time()
        try:
            loadavg = self.reader.loadavg()
        except Exception as e:  # noqa: BLE001 (a missing /proc must not stop a run)
            loadavg = None
            self._note(f"load average unreadable: {e}")
        self._last = self._snapshot()
        self.sampler_cpu_s += time.thread_time() - t0
        time.sleep(self.before_s)
        t0 = time.thread_time()
        first = self._take()
        self.samples.clear()  # the look before is not a sample of the trials
        if first is not None:
            self.before = {"seconds": round(first.seconds, 3), "loadavg": loadavg}
            self.before |= _rounded(first)
        elif loadavg is not None:
            self.before = {"seconds": None, "loadavg": loadavg}
        self.sampler_cpu_s += time.thread_time() - t0
        self._thread = threading.Thread(target=self._loop, name="msgbench-loadwatch", daemon=True)
        self._thread.start()

    def mark(self, name: str, value: str) -> None:
        """Count processes with `name=value` in their environment as the lab's own (a run's
        processes started through Ray: the module's docstring)."""
        if isinstance(self.reader, ProcReader):
            self.reader.marker = f"{name}={value}".encode()

    def stop(self) -> dict:
        """Stop sampling, take the last (partial) sample, and return the load record."""
        try:
            self._stop.set()
            if self._thread is not None:
                self._thread.join(timeout=self.interval + 5)
            t0 = time.thread_time()
            last = self._last
            if last is None or self.clock() - last.at >= self.interval / 5:
                self._take()  # a shorter window is mostly tick rounding
            self.sampler_cpu_s += time.thread_time() - t0
            return self._record()
        except Exception as e:  # noqa: BLE001 (the record is a bonus; the run is what counts)
            return {"busy": False, "reasons": [], "rule": RULE, "notes": [*self.notes, str(e)]}

    def _loop(self) -> None:
        while not self._stop.wait(self.interval):
            t0 = time.thread_time()
            self._take()
            self.sampler_cpu_s += time.thread_time() - t0

    def _note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def _snapshot(self) -> _Snapshot | None:
        try:
            cpus = self.reader.cpu_times()
            own = self.reader.tree_ticks(self.pid)
        except Exception as e:  # noqa: BLE001
            self._note(f"/proc unreadable: {type(e).__name__}: {e}")
            return None
        if self.cpus is not None:
            cpus = {c: t for c, t in cpus.items() if c in self.cpus}
        return _Snapshot(self.clock(), cpus, own)

    def _take(self) -> Sample | None:
        """A sample from the last snapshot to now (and now becomes the last snapshot)."""
        now = self._snapshot()
        prev, self._last = self._last, now or self._last
        if now is None or prev is None or now.at <= prev.at:
            return None
        seconds = now.at - prev.at
        per_cpu, busy, steal, total = {}, 0.0, 0, 0
        for cpu, t in now.cpus.items():
            p = prev.cpus.get(cpu)
            d_total = t.total - p.total if p else 0
            if d_total <= 0:
                continue  # offline, or no tick in the window
            d_busy, d_steal = t.busy - p.busy, t.steal - p.steal
            per_cpu[cpu] = (d_busy / d_total, d_steal / d_total)
            busy += d_busy / d_total
            steal, total = steal + d_steal, total + d_total
        if not per_cpu:
            self._note("no CPU of /proc/stat moved in a sample window")
            return None
        own = (now.own_ticks - prev.own_ticks) / self.clk_tck / seconds
        sample = Sample(seconds, busy, own, steal / total, per_cpu)
        self.samples.append(sample)
        return sample

    def _record(self) -> dict:
        during = _summary(self.samples) if self.samples else None
        busy, reasons = is_busy(self.before, during)
        elapsed = sum(s.seconds for s in self.samples) + ((self.before or {}).get("seconds") or 0)
        return {
            "interval_s": self.interval,
            "cpus": self.cpus,
            "before": self.before,
            "during": during,
            "busy": busy,
            "reasons": reasons,
            "rule": RULE,
            "sampler_cpu_seconds": round(self.sampler_cpu_s, 4),
            "sampler_cpu_fraction": round(self.sampler_cpu_s / elapsed, 5) if elapsed else None,
            "notes": self.notes,
        }


def _rounded(s: Sample) -> dict:
    return {
        "busy_cpus": round(s.busy_cpus, 3),
        "own_cpus": round(s.own_cpus, 3),
        "foreign_cpus": round(s.foreign_cpus, 3),
        "steal_fraction": round(s.steal_fraction, 4),
    }


def _summary(samples: list[Sample]) -> dict:
    """Means weighted by each sample's length (the last one is partial), and maxima."""
    w = np.array([s.seconds for s in samples])

    def stat(values: list[float], digits: int = 3) -> dict:
        v = np.array(values)
        return {"mean": round(float(np.average(v, weights=w)), digits),
                "max": round(float(v.max()), digits)}  # fmt: skip

    cpus = sorted({c for s in samples for c in s.per_cpu})
    per_cpu = {}
    for c in cpus:
        have = [s for s in samples if c in s.per_cpu]
        cw = np.array([s.seconds for s in have])
        per_cpu[str(c)] = {
            k: round(float(np.average([s.per_cpu[c][i] for s in have], weights=cw)), 4)
            for i, k in enumerate(("busy", "steal"))
        }
    return {
        "samples": len(samples),
        "seconds": round(float(w.sum()), 2),
        "foreign_cpus": stat([s.foreign_cpus for s in samples]),
        "own_cpus": stat([s.own_cpus for s in samples]),
        "busy_cpus": stat([s.busy_cpus for s in samples]),
        "steal_fraction": stat([s.steal_fraction for s in samples], 4),
        "per_cpu": per_cpu,
    }


def watched_cpus(placement: dict) -> list[int] | None:
    """The CPUs a run's trials are pinned to (run.placement), None (all) when unpinned."""
    cpus = {*placement.get("driver_cpus", ()), *placement.get("impl_cpus", ())}
    return sorted(cpus) or None
