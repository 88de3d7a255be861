"""The one JSON object the browser driver prints: the native driver's shape (the driver
contract, docs/driver-contract.md) plus what only a browser run has (where it was timed, the
browser, the host's placement as achieved)."""

from __future__ import annotations

from . import payload, stats
from .cli import Args
from .measured import Measured

MEASURED_IN = "extension page (performance.now, 5 µs resolution)"


def build(args: Args, m: Measured, browser: dict) -> dict:
    run = m.run
    latencies = run["latenciesUs"]
    ops = len(latencies)
    elapsed_s = run["elapsedMs"] / 1e3
    per_s = ops / elapsed_s if elapsed_s > 0 else 0.0
    body = payload.request_body_bytes(args.op, args.size)
    return {
        "driver": "nativemsg-browser",
        "mode": args.mode,
        "op": args.op,
        "size": args.size,
        "iterations": args.iterations,
        "warmup": args.warmup,
        "driver_cpus": args.driver_cpus,
        "impl_cpus": m.host_cpus,
        "impl_cpus_requested": args.impl_cpus,
        "host_placement": m.placement,
        "ops": ops,
        "elapsed_s": round(elapsed_s, 6),
        "ops_per_s": round(per_s, 3),
        "mb_per_s": round(per_s * body / 1e6, 6),
        "latency_us": stats.summarize(latencies),
        "measured_in": MEASURED_IN,
        "impl": m.host,
        "checked": {"full": run["checked"]["full"], "length": run["checked"]["light"]},
        "browser": {**browser, **m.extra},
    }
