"""--mode persistent: runtime.connectNative, one host for the whole trial. The host is found
among Chromium's children once the port opens, pinned to --host-cpus, and read from /proc
after its last reply and before its stdin closes (as the native driver reads VmHWM)."""

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
        if args.host_cpus:
            procfs.pin_all_threads(pid, args.host_cpus)
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
    if args.host_cpus:
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
    host: dict = {"processes": 1}
    if reading is None:
        host.update(cpu_user_s=None, cpu_sys_s=None, cpu_us_per_op=None, maxrss_kb=None)
        host["maxrss_note"] = "the host exited before it could be read"
        return host
    user_s, sys_s = _split(reading)
    host.update(
        cpu_user_s=round(user_s, 6),
        cpu_sys_s=round(sys_s, 6),
        cpu_us_per_op=round(reading.cpu_ns / 1e3 / sent, 3),
        maxrss_kb=reading.vm_hwm_kb,
        cpu_note=(
            "/proc schedstat of the host's threads (exact; the 10 ms ticks of /proc/<pid>/stat "
            "if larger, i.e. threads exited), split user/system in the ratio of those ticks; "
            "the host's whole life up to its last reply, warm-up included"
        ),
    )
    return host


def _split(reading: hostwatch.HostReading) -> tuple[float, float]:
    """Exact total CPU, split as the kernel itself splits it: in the ratio of the ticks."""
    total_s = reading.cpu_ns / 1e9
    ticks = reading.utime_ticks + reading.stime_ticks
    if ticks == 0:
        return total_s, 0.0
    user = total_s * reading.utime_ticks / ticks
    return user, total_s - user
