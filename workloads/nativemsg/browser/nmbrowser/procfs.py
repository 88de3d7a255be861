"""Host-side readings from /proc: which processes Chromium started, their CPU time, peak RSS,
CPU placement and exit status. The hosts are Chromium's children, not ours, so wait4 is not
available; everything is read while they are alive or zombies (before Chromium reaps them).

Every function tolerates a process vanishing between two reads (it returns None or skips it).
"""

from __future__ import annotations

import ctypes
import os
import time
from dataclasses import dataclass

CLK_TCK = os.sysconf("SC_CLK_TCK")
PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
# Field numbers of /proc/<pid>/stat (proc(5)), counted from 1 as the manual does.
_STATE, _PPID, _UTIME, _STIME, _CUTIME, _CSTIME = 3, 4, 14, 15, 16, 17
_STARTTIME, _EXIT_CODE = 22, 52


@dataclass(frozen=True)
class Stat:
    pid: int
    comm: str
    state: str
    ppid: int
    utime: int  # clock ticks, whole thread group
    stime: int
    cutime: int  # ticks of reaped children (and their reaped descendants)
    cstime: int
    starttime: int  # clock ticks after boot: with the pid, identifies a process
    exit_code: int | None  # wait status, only meaningful for a zombie


def stat(pid: int) -> Stat | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            raw = f.read().decode("utf-8", "replace")
    except OSError:
        return None
    # comm is in parentheses and may itself contain spaces or ')': split after the last ')'.
    open_paren, close_paren = raw.find("("), raw.rfind(")")
    rest = raw[close_paren + 2 :].split()
    fields = ["", "", *rest]  # so that fields[n - 1] is field n

    def field(n: int) -> int:
        return int(fields[n - 1])

    return Stat(
        pid=pid,
        comm=raw[open_paren + 1 : close_paren],
        state=fields[_STATE - 1],
        ppid=field(_PPID),
        utime=field(_UTIME),
        stime=field(_STIME),
        cutime=field(_CUTIME),
        cstime=field(_CSTIME),
        starttime=field(_STARTTIME),
        exit_code=field(_EXIT_CODE) if len(fields) >= _EXIT_CODE else None,
    )


def all_pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def children(ppid: int) -> list[Stat]:
    """Processes whose parent is `ppid` (zombies included)."""
    out = []
    for pid in all_pids():
        s = stat(pid)
        if s is not None and s.ppid == ppid:
            out.append(s)
    return out


def descendants(root: int) -> list[int]:
    """`root` and every process below it (by parent pid), zombies included."""
    parents: dict[int, int] = {}
    for pid in all_pids():
        s = stat(pid)
        if s is not None:
            parents[pid] = s.ppid
    tree = {root}
    changed = True
    while changed:
        changed = False
        for pid, ppid in parents.items():
            if ppid in tree and pid not in tree:
                tree.add(pid)
                changed = True
    return sorted(tree)


def comm(pid: int) -> str:
    s = stat(pid)
    return s.comm if s else "?"


def cmdline(pid: int) -> list[str]:
    """The argv of a live process ([] for a zombie or a vanished one)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            raw = f.read()
    except OSError:
        return []
    return [a.decode("utf-8", "surrogateescape") for a in raw.split(b"\0")[:-1]]


def pids_with_env(name: str, value: str) -> list[int]:
    """Live processes whose environment holds name=value (how one launch marks its tree).
    Chromium's own children rewrite that memory with their titles: this finds the browser
    process and the hosts, not zygotes or renderers."""
    needle = f"{name}={value}".encode()
    found = []
    for pid in all_pids():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    found.append(pid)
        except OSError:
            continue
    return found


def threads(pid: int) -> list[int]:
    """Thread ids of `pid` ([] once it has gone)."""
    try:
        return [int(t) for t in os.listdir(f"/proc/{pid}/task")]
    except OSError:
        return []


#: Linux's CPUCLOCK_SCHED: a process clock of user + system time in ns.
_CPUCLOCK_SCHED = 2


def cpu_ns(pid: int) -> int | None:
    """CPU time of every thread `pid` has had (exited ones included), in ns, from the
    kernel's process CPU clock: the clock id glibc's clock_getcpuclockid(pid) gives, Linux's
    MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) = (~pid << 3) | 2. Exact where /proc/<pid>/stat
    counts 10 ms ticks and per-thread schedstat misses exited threads. None once the process
    has gone (a zombie reads as its final total until it is reaped)."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | _CPUCLOCK_SCHED)
    except OSError:
        return None


def vm_hwm_kb(pid: int) -> int | None:
    """Peak resident set (VmHWM) in KiB; None once the process has exited."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def pin_all_threads(pid: int, cpus: list[int]) -> list[int]:
    """sched_setaffinity on every thread of `pid` (the call applies to one thread only; new
    threads inherit their creator's mask). Returns the thread ids pinned."""
    pinned: list[int] = []
    # Twice: a thread created while the first pass ran is caught by the second.
    for _ in range(2):
        for tid in threads(pid):
            try:
                os.sched_setaffinity(tid, cpus)
            except OSError:
                continue
            if tid not in pinned:
                pinned.append(tid)
    return pinned


def affinity(pid: int) -> list[int] | None:
    try:
        return sorted(os.sched_getaffinity(pid))
    except OSError:
        return None


def prctl_function():
    """libc's prctl(2), or None where it cannot be found."""
    try:
        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None


def become_child_subreaper() -> bool:
    """Make orphaned descendants (hosts whose Chromium was killed) our children, so that we
    can reap them instead of leaving zombies to a PID 1 that may not reap. Linux only."""
    prctl = prctl_function()
    return prctl is not None and prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def exit_status(wait_status: int) -> int:
    """A wait status as the native driver reports it: the exit code, or 128 + the signal number
    for a killed host (the shell's habit)."""
    if os.WIFSIGNALED(wait_status):
        return 128 + os.WTERMSIG(wait_status)
    return os.WEXITSTATUS(wait_status)
