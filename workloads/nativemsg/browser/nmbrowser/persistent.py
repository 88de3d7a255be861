"""--mode persistent: runtime.connectNative, one host for the whole trial. The host is found
among Chromium's children once the port opens, pinned to --impl-cpus, and read after its last
reply and before its stdin closes, as the native driver reads it: its process CPU clock (the
span is its life from exec to its last reply) and its VmHWM."""

from __future__ import annotations

import time

from . import hostwatch, procevents, procfs, treecpu
from .cli import Args
from .deadline import Deadline
from .hostreg import Registration
from .measured import PAGE_CALL_S, Measured, cpus_text, loop
from .session import BrowserSession

HOST_APPEAR_S = 10.0
HOST_EXIT_S = 3.0  # Chromium SIGKILLs a host still running ~2 s after the port closed


def measure(
    browser: BrowserSession, reg: Registration, args: Args, config: dict, work: Deadline
) -> Measured:
    events, events_missing = procevents.open_for(browser.pid)
    try:
        browser.bench("open", reg.name, timeout=PAGE_CALL_S)
        opened = time.monotonic()
        pid = hostwatch.find_host(browser.pid, reg, Deadline(work.within(HOST_APPEAR_S)))
        appeared_s = time.monotonic() - opened
        if args.impl_cpus:
            procfs.pin_all_threads(pid, args.impl_cpus)
        before = treecpu.snapshot(browser.pid, reg.comm)
        result = browser.bench(
            "runPort", loop(config, args.warmup, args.iterations, work), timeout=work.remaining()
        )
        reading = hostwatch.read_host(pid)
        chromium_cpu = treecpu.per_op_us(
            before, treecpu.snapshot(browser.pid, reg.comm), args.iterations + args.warmup
        )
        browser.bench("close", timeout=PAGE_CALL_S)
        status, status_how = _exit_status(pid, events, events_missing, work)
    finally:
        if events is not None:
            events.close()
    host = _host_usage(reading, args.iterations + args.warmup)
    host["exit_status"] = [] if status is None else [status]
    if status is None:
        host["exit_status_note"] = status_how
    cpus = reading.cpus if reading else None
    if args.impl_cpus:
        # The delay is in host_found_after_s; the text stays the same across trials.
        placement = f"pinned to cpu {cpus_text(cpus)} once it appeared after connectNative"
    else:
        placement = f"inherits chromium (cpu {cpus_text(cpus)})"
    extra = {"host_found_after_s": round(appeared_s, 4), "cpu_us_per_op": chromium_cpu}
    return Measured(result, host, cpus, placement, extra)


def _exit_status(pid, events, events_missing, work: Deadline) -> tuple[int | None, str]:
    wait = work.within(HOST_EXIT_S)
    if events is not None:
        raw = events.wait_exit(pid, wait)
        if raw is not None:
            return procfs.exit_status(raw), ""
        return None, f"no exit within {wait:.1f} s of the port closing"
    status, how = hostwatch.wait_exit(pid, Deadline(wait))
    return status, f"{how} ({events_missing})" if status is None else ""


def _host_usage(reading: hostwatch.HostReading | None, sent: int) -> dict:
    if reading is None:
        # A host serves until its stdin closes (SPEC §3): one that is gone after its last reply
        # has no CPU time or peak RSS left to read.
        raise RuntimeError("the host exited after its last reply, before its stdin was closed")
    cpu_s = reading.cpu_ns / 1e9
    return {
        "cpu_s": round(cpu_s, 9),
        "cpu_clock": "process-cpu-clock",
        "cpu_us_per_op": round(cpu_s * 1e6 / sent, 4),
        "maxrss_kb": reading.vm_hwm_kb,
        "processes": 1,
        "cpu_note": (
            "the host's process CPU clock (all threads, ns), read after its last reply: its "
            "life from exec to its last reply, warm-up included"
        ),
    }
