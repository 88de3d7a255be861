"""One trial through the browser: Chromium up, the host registered, the page's closed loop run
(persistent.py or spawn.py), everything torn down. The JSON is built in report.py.

Start-up (Chromium, extension, page, host process) happens before the page's timed loop and
is never in a latency: the page times each message from postMessage/sendNativeMessage to its
reply, and the warm-up messages come first.
"""

from __future__ import annotations

import os
import time

from . import payload, persistent, report, spawn
from .cli import Args
from .deadline import Deadline
from .measured import PAGE_CALL_S
from .session import BrowserSession

HOST_NAME = "msgbench.nativemsg"
#: Kept back from --timeout-s for shutting Chromium down (chromium.shut_down: ≤ ~7 s).
SHUTDOWN_RESERVE_S = 7.0


def run(args: Args) -> dict:
    # Leave room to shut down inside --timeout-s, but never more than a quarter of it.
    reserve = min(SHUTDOWN_RESERVE_S, args.timeout_s / 4)
    work = Deadline(args.timeout_s - reserve)
    if args.driver_cpus:
        # The driver too (as the native driver pins itself), so it never lands on the host's CPU.
        os.sched_setaffinity(0, args.driver_cpus)
    config = {
        "op": args.op,
        "text": payload.echo_text(args.size) if args.op == "echo" else "",
        "checkFull": args.check_full,
    }
    started = time.monotonic()
    with BrowserSession(work, cpus=args.driver_cpus, stderr_path=args.impl_stderr) as browser:
        startup_s = time.monotonic() - started
        page = browser.bench("info", timeout=PAGE_CALL_S)
        reg = browser.register(HOST_NAME, args.impl_argv, cwd=args.impl_cwd)
        mode = persistent if args.mode == "persistent" else spawn
        measured = mode.measure(browser, reg, args, config, work)
        context = {
            "product": browser.version.get("product"),
            "binary": str(browser.browser.binary) if browser.browser else None,
            "startup_s": round(startup_s, 3),
            "cross_origin_isolated": page["crossOriginIsolated"],
            "timer_step_us": page["timerStepUs"],
            "host": reg.as_json(),
        }
    if browser.forced:
        context["forced_shutdown"] = browser.forced
    return report.build(args, measured, context)
