"""CPU time of Chromium's own processes over a run, by process type (browser, renderer, gpu,
utility…): where a round trip's time goes besides the host. Read from each process's CPU clock
(ns, all its threads) before and after the run; processes that start or end in between count
from zero or not at all, which is why it is read around the page's loop, not around the trial.
"""

from __future__ import annotations

import re

from . import procfs

_TYPE = re.compile(r"--type=(\S+)")
_UTILITY = re.compile(r"--utility-sub-type=(\S+)")


def _kind(pid: int, browser_pid: int) -> str:
    if pid == browser_pid:
        return "browser"
    # Chromium's children rewrite their argv into one space-separated string.
    line = " ".join(procfs.cmdline(pid))
    kind = _TYPE.search(line)
    if kind is None:
        return "other"
    sub = _UTILITY.search(line)
    if kind.group(1) == "utility" and sub:
        return f"utility:{sub.group(1).split('.')[0]}"
    return kind.group(1)


def snapshot(browser_pid: int, exclude_comm: str) -> dict[int, tuple[str, int]]:
    """pid -> (process type, CPU ns so far) for Chromium's processes, hosts excluded."""
    out = {}
    for pid in procfs.descendants(browser_pid):
        if procfs.comm(pid) == exclude_comm:
            continue
        ns = procfs.cpu_ns(pid)
        if ns is not None:
            out[pid] = (_kind(pid, browser_pid), ns)
    return out


def per_op_us(before: dict, after: dict, ops: int) -> dict[str, float]:
    """CPU µs per operation by process type, for processes alive at both ends."""
    totals: dict[str, int] = {}
    for pid, (kind, ns) in after.items():
        if pid in before:
            totals[kind] = totals.get(kind, 0) + ns - before[pid][1]
    return {
        kind: round(ns / 1e3 / ops, 3)
        for kind, ns in sorted(totals.items(), key=lambda kv: -kv[1])
        if ns > 0
    }
