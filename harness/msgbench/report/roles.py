"""What a metric is for, read from its definition (workload.toml [metrics] `role`), never from
its name: the summary table's columns and the charts are chosen by role.

Roles: throughput, latency (with `percentile`, 100 = max), cpu (the implementation's CPU per
unit of work), memory, load_cpu (the load generator's CPU), peer_cpu (a peer's CPU, e.g.
Chromium's), instructions (per operation, counted under valgrind). Runs stored before
workload.toml declared roles carry none; `legacy_role` infers them from the metric names those
runs used, so old runs still render.
"""

from __future__ import annotations

import re

from .. import charts

ROLES = ("throughput", "latency", "cpu", "memory", "load_cpu", "peer_cpu", "instructions")
CPU_ROLES = ("cpu", "load_cpu", "peer_cpu")

# Every metric name the workloads used before roles existed, with the role it now declares.
_LEGACY_ROLES = {
    "ops_per_s": "throughput",
    "mb_per_s": "throughput",
    "msgs_per_s": "throughput",
    "rps_geomean": "throughput",
    "cpu_per_op": "cpu",
    "cpu_per_req": "cpu",
    "cpu_per_msg": "cpu",
    "rss": "memory",
    "bytes_per_key": "memory",
    "client_cpu_per_req": "load_cpu",
    "browser_cpu": "peer_cpu",
    "renderer_cpu": "peer_cpu",
}
_LEGACY_PERCENTILE = re.compile(r"^p(\d+)$")


def legacy_role(key: str, d: dict) -> tuple[str, float | None]:
    """(role, percentile) of a metric defined without a role: a run stored before roles.
    The only place that looks at a metric's name."""
    if key in _LEGACY_ROLES:
        return _LEGACY_ROLES[key], None
    m = _LEGACY_PERCENTILE.match(key)
    if (m or key == "max") and charts.is_time_unit(d.get("unit", "")):
        digits = m.group(1) if m else ""
        pct = float(digits[:2] + "." + digits[2:]) if len(digits) > 2 else float(digits or 100)
        return "latency", pct
    if d.get("family") and d.get("better") == "higher":
        return "throughput", None  # rps.*: the only higher-is-better family there was
    return "", None


def role_of(key: str, d: dict) -> str:
    return d["role"] if d.get("role") else legacy_role(key, d)[0]


def percentile_of(key: str, d: dict) -> float | None:
    """The percentile of a latency metric (100 = max), None for any other metric."""
    if d.get("role"):
        pct = d.get("percentile")
        return float(pct) if d["role"] == "latency" and pct is not None else None
    return legacy_role(key, d)[1]


def with_role(defs: dict[str, dict], role: str, families: bool = False) -> list[str]:
    """The metrics of a role in the scenario's order; family members only when asked."""
    return [
        k for k, d in defs.items() if role_of(k, d) == role and (families or not d.get("family"))
    ]


def first_with_role(defs: dict[str, dict], role: str, besides: str) -> str | None:
    """The scenario's first metric of a role other than `besides` (its primary metric)."""
    return next((k for k in with_role(defs, role) if k != besides), None)


def latency_percentiles(defs: dict[str, dict]) -> list[str]:
    """The latency metrics that are percentiles, lowest percentile first (max last)."""
    lat = [k for k in with_role(defs, "latency") if percentile_of(k, defs[k]) is not None]
    return sorted(lat, key=lambda k: percentile_of(k, defs[k]))


def short_label(key: str, d: dict, use_label: bool = True) -> str:
    """A column-sized name: p50 / p99.9 / max for a percentile, else the label (or the key)."""
    pct = percentile_of(key, d)
    if pct is not None:
        return "max" if pct == 100 else f"p{pct:g}"
    return (d.get("label") or key) if use_label else key


# The CPU clocks of the driver contract (`impl.cpu_clock`), as the report names them.
CLOCKS = {
    "process-cpu-clock": "process CPU clock (ns)",
    "wait4-rusage": "wait4 rusage (µs)",
    "proc-children-ticks": "/proc children ticks (10 ms)",
    "self-reported": "the program's own clock over its timed iterations",
}


def clock_note(clocks: dict[str, str] | None) -> str:
    """How a CPU metric was measured, from {impl: clock name} as results.json records it:
    "process CPU clock (ns)", or per clock the implementations it measured when they differ."""
    if not clocks:
        return ""
    by_clock: dict[str, list[str]] = {}
    for impl, clock in clocks.items():
        by_clock.setdefault(CLOCKS.get(clock, clock), []).append(impl)
    if len(by_clock) == 1:
        return next(iter(by_clock))
    return "; ".join(f"{c} for {', '.join(i)}" for c, i in by_clock.items())


def clock_caption(scen: dict, defs: dict[str, dict], keys: list[str]) -> str:
    """For each CPU metric among keys whose clock the run recorded (the scenario entry's
    "cpu_clocks": {metric: {impl: clock}}): "server CPU per message measured with the process
    CPU clock (ns)"."""
    recorded = scen.get("cpu_clocks") or {}
    parts = []
    for k in keys:
        note = clock_note(recorded.get(k))
        if note and role_of(k, defs.get(k) or {}) in CPU_ROLES:
            parts.append(f"{(defs.get(k) or {}).get('label') or k} measured with the {note}")
    return "; ".join(parts)
