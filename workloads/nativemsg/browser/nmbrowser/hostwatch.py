"""Watching the hosts Chromium starts: finding them, pinning them, reading their CPU time, peak
RSS and exit status from /proc. Chromium, not the driver, is their parent, so this is all done
from outside; every wait is bounded and every reading may come back empty (a host that has
already gone).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

from . import procfs
from .deadline import Deadline, Timeout
from .hostreg import Registration

#: Poll period while waiting for a host to appear or to exit: short, since a host's whole life
#: in spawn mode is about a millisecond, and these waits are outside every timed interval.
POLL_S = 0.001


def hosts_of(browser_pid: int, reg: Registration) -> list[procfs.Stat]:
    """Chromium's children that are this host (live or zombie). Zombies have no cmdline: they
    are recognised by the name the kernel gave the process at exec (comm)."""
    found = []
    for child in procfs.children(browser_pid):
        if child.comm != reg.comm:
            continue
        if child.state == "Z" or reg.matches(procfs.cmdline(child.pid)):
            found.append(child)
    return found


def find_host(browser_pid: int, reg: Registration, deadline: Deadline) -> int:
    """The pid of the live host started for a port, once it has appeared."""
    while True:
        live = [h for h in hosts_of(browser_pid, reg) if h.state != "Z"]
        if len(live) > 1:
            raise RuntimeError(f"{len(live)} processes of host {reg.name}; expected one")
        if live:
            return live[0].pid
        if deadline.expired():
            raise Timeout(f"host {reg.name} ({reg.path}) did not appear under chromium")
        time.sleep(POLL_S)


def cpus_of(pid: int) -> list[int] | None:
    """Union of the CPU masks of every thread of `pid`: where it may run."""
    union: set[int] = set()
    for tid in procfs.threads(pid):
        mask = procfs.affinity(tid)
        if mask:
            union.update(mask)
    return sorted(union) or None


@dataclass
class HostReading:
    pid: int
    cpu_ns: int  # user + system, all threads: the process CPU clock (ns)
    vm_hwm_kb: int | None
    cpus: list[int] | None
    threads: int


def read_host(pid: int) -> HostReading | None:
    s = procfs.stat(pid)
    ns = procfs.cpu_ns(pid)
    if s is None or ns is None or s.state == "Z":
        return None
    return HostReading(
        pid=pid,
        cpu_ns=ns,
        vm_hwm_kb=procfs.vm_hwm_kb(pid),
        cpus=cpus_of(pid),
        threads=len(procfs.threads(pid)),
    )


def wait_exit(pid: int, deadline: Deadline) -> tuple[int | None, str]:
    """After the port closed: the host's exit status if it could be seen (a zombie not yet
    reaped by Chromium), and what happened."""
    while not deadline.expired():
        s = procfs.stat(pid)
        if s is None:
            return None, "reaped by chromium before its status could be read"
        if s.state == "Z" and s.exit_code is not None:
            return procfs.exit_status(s.exit_code), "read from /proc while a zombie"
        time.sleep(POLL_S)
    return None, f"still running {deadline.seconds:g} s after the port closed"


def wait_all_gone(browser_pid: int, reg: Registration, deadline: Deadline) -> int:
    """Wait until Chromium has reaped every process of this host (their CPU time is in
    Chromium's cutime/cstime only then); returns how many were still there at the end."""
    while True:
        left = len(hosts_of(browser_pid, reg))
        if left == 0 or deadline.expired():
            return left
        time.sleep(0.01)


def children_cpu_ticks(browser_pid: int) -> tuple[int, int]:
    """(user, system) clock ticks of Chromium's reaped children: the spawned hosts."""
    s = procfs.stat(browser_pid)
    if s is None:
        raise RuntimeError("chromium has exited")
    return s.cutime, s.cstime


@dataclass
class SpawnSample:
    """What polling saw of short-lived hosts: a lower bound, since many live ~1 ms."""

    seen: set[int] = field(default_factory=set)
    vm_hwm_kb: int | None = None
    cpus: set[int] = field(default_factory=set)
    exit_statuses: dict[int, int] = field(default_factory=dict)  # pid -> status (zombies)


class SpawnSampler:
    """Polls Chromium's children in a thread while the warm-up hosts run (never during the
    measured ones: polling /proc costs CPU on the driver's CPUs, where Chromium runs)."""

    def __init__(self, browser_pid: int, reg: Registration):
        self.browser_pid = browser_pid
        self.reg = reg
        self.sample = SpawnSample()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="spawn-sampler", daemon=True)

    def __enter__(self) -> SpawnSampler:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(timeout=5.0)

    def _run(self) -> None:
        while not self._stop.is_set():
            for host in hosts_of(self.browser_pid, self.reg):
                self._note(host)
            time.sleep(POLL_S)

    def _note(self, host: procfs.Stat) -> None:
        sample = self.sample
        sample.seen.add(host.pid)
        if host.state == "Z":
            if host.exit_code is not None:
                sample.exit_statuses[host.pid] = procfs.exit_status(host.exit_code)
            return
        hwm = procfs.vm_hwm_kb(host.pid)
        if hwm is not None:
            sample.vm_hwm_kb = max(hwm, sample.vm_hwm_kb or 0)
        cpus = cpus_of(host.pid)
        if cpus:
            sample.cpus.update(cpus)
