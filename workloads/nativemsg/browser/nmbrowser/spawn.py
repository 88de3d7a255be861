"""--mode spawn: runtime.sendNativeMessage, one host process per message, each started by
Chromium (which forks itself, then execs the host) and reaped by Chromium. The hosts are read
from outside: their CPU time from Chromium's cutime/cstime, their exit statuses from process
events, their RSS and CPUs by polling /proc during the warm-up only."""

from __future__ import annotations

from . import hostwatch, procevents, procfs, treecpu
from .cli import Args
from .deadline import Deadline
from .hostreg import Registration
from .measured import Measured, cpus_text, loop
from .session import BrowserSession

REAP_S = 5.0  # Chromium reaps a host that has not exited when its reply arrived within ~2 s


def measure(
    browser: BrowserSession, reg: Registration, args: Args, config: dict, work: Deadline
) -> Measured:
    events, events_missing = procevents.open_for(browser.pid)
    try:
        before = hostwatch.children_cpu_ticks(browser.pid)
        sample = None
        if args.warmup:
            # Warm-up hosts are polled in /proc (RSS, CPUs); the measured ones never are, so
            # that polling does not compete with them for the driver's CPUs.
            with hostwatch.SpawnSampler(browser.pid, reg) as sampler:
                browser.bench(
                    "runSend", reg.name, loop(config, 0, args.warmup, work),
                    timeout=work.remaining(),
                )  # fmt: skip
            sample = sampler.sample
        tree_before = treecpu.snapshot(browser.pid, reg.comm)
        result = browser.bench(
            "runSend", reg.name, loop(config, 0, args.iterations, work), timeout=work.remaining()
        )
        chromium_cpu = treecpu.per_op_us(
            tree_before, treecpu.snapshot(browser.pid, reg.comm), args.iterations
        )
        left = hostwatch.wait_all_gone(browser.pid, reg, Deadline(work.within(REAP_S)))
        after = hostwatch.children_cpu_ticks(browser.pid)
        if events is not None:
            events.read()
    finally:
        if events is not None:
            events.close()
    sent = args.iterations + args.warmup
    # The hosts are Chromium's children, forked and reaped by it: gone before anything of ours
    # could read their clocks, so Chromium's children ticks are the best the kernel gives.
    cpu_s = (after[0] + after[1] - before[0] - before[1]) / procfs.CLK_TCK
    host: dict = {
        "cpu_s": round(cpu_s, 6),
        "cpu_clock": "proc-children-ticks",
        "cpu_us_per_op": round(cpu_s * 1e6 / sent, 4),
        "processes": sent,
        "cpu_note": (
            "chromium's cutime+cstime over the run (every host it reaped; 10 ms ticks in "
            "total); includes each forked child's work before exec (closing chromium's fds, "
            "dropping its copy of chromium's address space)"
            + (f"; {left} host(s) not yet reaped are missing" if left else "")
        ),
        **_rss(sample, args.warmup),
        **_exits(events, events_missing, sent),
    }
    chromium_cpus = procfs.affinity(browser.pid)
    cpus = sorted(sample.cpus) if sample and sample.cpus else chromium_cpus
    placement = f"inherits chromium (cpu {cpus_text(chromium_cpus)})"
    if args.impl_cpus:
        placement += (
            f"; --impl-cpus {cpus_text(args.impl_cpus)} cannot apply to hosts chromium spawns"
        )
    return Measured(result, host, cpus, placement, {"cpu_us_per_op": chromium_cpu})


def _rss(sample: hostwatch.SpawnSample | None, warmup: int) -> dict:
    if sample is None:
        return {"maxrss_kb": None, "maxrss_note": "no warm-up hosts (--warmup 0) to sample"}
    if sample.vm_hwm_kb is None:
        return {"maxrss_kb": None, "maxrss_note": "no warm-up host was caught alive in /proc"}
    return {
        "maxrss_kb": sample.vm_hwm_kb,
        "maxrss_note": (
            f"largest VmHWM polled from {len(sample.seen)} of {warmup} warm-up hosts "
            "(a lower bound)"
        ),
    }


def _exits(events: procevents.ProcEvents | None, missing: str | None, sent: int) -> dict:
    if events is None:
        return {"exit_status": [], "exit_status_note": f"not observed: {missing}"}
    children = events.children
    hosts = children.execed  # what Chromium forked and exec'd during the run: the hosts
    statuses = [procfs.exit_status(s) for pid, s in children.exits.items() if pid in hosts]
    out: dict = {"exit_status": sorted(set(statuses))}
    notes = []
    if len(hosts) != sent:
        notes.append(f"{len(hosts)} host processes seen for {sent} messages")
    if len(statuses) != len(hosts):
        notes.append(f"{len(hosts) - len(statuses)} exit(s) not seen")
    if events.lost:
        notes.append("process events were lost (socket overflow)")
    if notes:
        out["exit_status_note"] = "; ".join(notes)
    return out
