"""Turning measurements into the run document (results.json; schema in docs/results-schema.md)."""

from __future__ import annotations

import datetime as dt
import secrets

from . import aa, build, machine, stats, toolchains
from .registry import Impl, Scenario, Workload
from .runner import Measurements, Placement, field_value
from .verify import Verdict


def new_run_id(commit: str) -> str:
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    return f"{stamp}-{commit[:7] if commit != 'unknown' else secrets.token_hex(3)}"


def now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def run_header(
    run_id: str,
    command: str,
    profile: str,
    where: Placement,
    started: str,
    commit: str,
    dirty: bool,
) -> dict:
    return {
        "id": run_id,
        "started": started,
        "finished": None,
        "command": command,
        "commit": commit,
        "dirty": dirty,
        "profile": profile,
        "placement": where.as_json(),
        "machine": machine.fingerprint(),
        "toolchains": {k: v for k, v in toolchains.versions().items() if v},
        "flags": build.flags(),
        "interrupted": False,
    }


def scenario_metrics(w: Workload, s: Scenario, m: Measurements | None) -> list[str]:
    """The scenario's metrics in order, each family ("rps.*") expanded into the members the
    drivers reported for it in this run (one per redis-benchmark test, say)."""
    names: list[str] = []
    for metric in dict.fromkeys([s.primary, *s.metrics]):
        if "*" not in metric:
            names.append(metric)
            continue
        docs = [d for (wn, sn, _), ds in (m.docs.items() if m else []) for d in ds
                if (wn, sn) == (w.name, s.name)]  # fmt: skip
        names += [n for n in w.family_members(metric, docs) if n not in names]
    return names


# What the report needs of a metric's definition: roles choose its columns and charts.
METRIC_DEF_KEYS = ("unit", "better", "label", "family", "role", "percentile")
CPU_ROLES = ("cpu", "load_cpu", "peer_cpu")


def cpu_clocks(w: Workload, s: Scenario, names: list[str], m: Measurements | None) -> dict:
    """{metric: {impl: clock}} for the scenario's CPU metrics: the `cpu_clock` the driver
    reported beside each figure (impl.cpu_clock beside impl.cpu_us_per_op; the nearest
    enclosing object's `cpu_clock` for any other CPU field), so the report can name it."""
    out: dict[str, dict[str, str]] = {}
    for name in names:
        d = w.metric_def(name)
        if d.get("role") not in CPU_ROLES:
            continue
        parents = d["field"].split(".")[:-1]
        for (wn, sn, impl), docs in m.docs.items() if m else []:
            if (wn, sn) != (w.name, s.name) or not docs or _is_twin(m, wn, sn, impl):
                continue
            for depth in range(len(parents), 0, -1):
                clock = field_value(docs[0], ".".join([*parents[:depth], "cpu_clock"]))
                if isinstance(clock, str) and clock:
                    out.setdefault(name, {})[impl] = clock
                    break
    return out


def scenario_entry(w: Workload, s: Scenario, m: Measurements | None) -> dict:
    names = scenario_metrics(w, s, m)
    entry = {
        "name": s.name,
        "description": s.description,
        "primary": s.primary,
        "metrics": {
            name: {k: w.metric_def(name)[k] for k in METRIC_DEF_KEYS if k in w.metric_def(name)}
            for name in names
        },
    }
    clocks = cpu_clocks(w, s, names, m)
    if clocks:
        entry["cpu_clocks"] = clocks
    control = aa_entry(w, s, names, m)
    if control:
        entry["aa"] = control
    if s.peer:  # the implementation whose client drove every server (a [[matrices]] row)
        entry["peer"] = s.peer
    if s.hosts is not None:  # where its trials ran (each trial's addresses: the driver log)
        entry["hosts"] = {
            "topology": s.hosts.topology,
            "names": s.hosts.names(),
            "loss_percent": s.hosts.loss_percent,
            "rate": s.hosts.rate,
        }
    return entry


def workload_entry(w: Workload, scenarios: list[Scenario], m: Measurements | None = None) -> dict:
    names = {s.name for s in scenarios}
    return {
        "name": w.name,
        "title": w.title,
        "baseline": w.baseline,
        "reference": w.reference,
        "targets": [t for t in w.targets if t["scenario"] in {s.name for s in scenarios}],
        "side_by_side": [
            p for p in w.side_by_side if set(p["scenarios"]) <= {s.name for s in scenarios}
        ],
        "sweeps": [
            t for t in w.sweeps if {p[0] for p in t["points"]} & {s.name for s in scenarios}
        ],
        "ratio_charts": [t for t in w.ratio_charts if set(t["scenarios"]) & names],
        "matrices": [t for t in w.matrices if set(t["scenarios"]) & names],
        "scenarios": [scenario_entry(w, s, m) for s in scenarios],
    }


def impl_entry(impl: Impl) -> dict:
    return {
        "workload": impl.workload,
        "impl": impl.id,
        "language": impl.language,
        "variant": impl.variant,
        "summary": impl.summary,
        "traits": impl.traits,
        "argv": impl.argv(),
        **({"absent": impl.absent} if impl.absent else {}),
    }


def result_rows(
    w: Workload, s: Scenario, impl: Impl, m: Measurements, verdict: Verdict | None
) -> list[dict]:
    """One row per metric; one status row when the implementation was not measured."""
    key = (w.name, s.name, impl.id)
    base = {"workload": w.name, "scenario": s.name, "impl": impl.id}

    def status_row(status: str, reason: str) -> list[dict]:
        d = w.metric_defs[s.primary]
        return [
            {
                **base,
                "metric": s.primary,
                "unit": d["unit"],
                "better": d["better"],
                "n": 0,
                "median": None,
                "ci95": None,
                "cv": None,
                "noisy": False,
                "samples": [],
                "status": status,
                "reason": reason,
            }
        ]

    if verdict is not None and not verdict.ok:
        if verdict.error:
            return status_row("skipped" if "not built" in verdict.error else "fail", verdict.error)
        names = ", ".join(f["test"] for f in verdict.failures[:3])
        return status_row("fail", f"conformance: {verdict.failed} failed ({names})")
    if key in m.skipped:
        return status_row("skipped", m.skipped[key])
    if key in m.failures:
        return status_row("fail", m.failures[key])
    docs = m.docs.get(key, [])
    if not docs:
        return status_row("skipped", "interrupted before it was measured")
    rows = []
    for metric in scenario_metrics(w, s, m):
        d = w.metric_def(metric)
        samples = metric_samples(docs, d["field"])
        if not samples:
            continue
        summary = stats.summarize(samples, d["better"])
        rows.append(
            {
                **base,
                "metric": metric,
                "unit": d["unit"],
                "better": d["better"],
                **summary,
                "samples": samples,
                "status": "ok",
                "reason": "",
            }
        )
        by_node = _node_samples(docs, d["field"])
        if by_node:  # a sweep over several nodes (docs/hosts.md): each node's own samples
            rows[-1]["nodes"] = by_node
    return rows


def _node_samples(docs: list[dict], dotted: str) -> dict[str, list[float]]:
    """{node: samples} of a sweep's trials, in the sweep's order of nodes; {} without one."""
    nodes = list(dict.fromkeys(d["_node"] for d in docs if d.get("_node")))
    return {n: metric_samples([d for d in docs if d.get("_node") == n], dotted) for n in nodes}


def metric_samples(docs: list[dict], dotted: str) -> list[float]:
    """One metric's value in each trial's document (trials that did not report it left out)."""
    return [float(x) for x in (field_value(doc, dotted) for doc in docs) if x is not None]


def _is_twin(m: Measurements, workload: str, scenario: str, impl: str) -> bool:
    return (m.aa.get((workload, scenario)) or {}).get("twin") == impl


def aa_entry(w: Workload, s: Scenario, names: list[str], m: Measurements | None) -> dict | None:
    """The scenario's A/A control: {"subject", "twin", "chosen_as", "ratio": {metric: {"ratio",
    "ci95"}}}, the ratio being median(subject) ÷ median(twin) with its 95% bootstrap CI (both
    resampled independently). None when the scenario measured no A/A pair; a metric is left
    out of "ratio" when either side has no samples of it (a failed trial, say)."""
    pair = m.aa.get((w.name, s.name)) if m else None
    if not pair:
        return None
    subject_docs = m.docs.get((w.name, s.name, pair["subject"]), [])
    twin_docs = m.docs.get((w.name, s.name, pair["twin"]), [])
    ratios = {}
    for name in names:
        dotted = w.metric_def(name)["field"]
        a, b = metric_samples(subject_docs, dotted), metric_samples(twin_docs, dotted)
        if not a or not b:
            continue
        try:
            ratios[name] = stats.ratio(a, b)
        except ValueError:  # the twin's median is zero: no ratio to show
            continue
    return {**pair, "ratio": ratios}


def aa_rows(w: Workload, s: Scenario, subject: Impl, m: Measurements) -> list[dict]:
    """The twin's result rows (like any implementation's, plus "aa_of": the subject), or none
    when the scenario measured no A/A pair of `subject`."""
    pair = m.aa.get((w.name, s.name))
    if not pair or pair["subject"] != subject.id:
        return []
    rows = result_rows(w, s, aa.twin(subject), m, None)
    return [{**row, "aa_of": subject.id} for row in rows]


# String fields a driver may report about how it measured (e.g. the browser driver: where
# latency was timed, where the host actually ran); kept in the run so reports can say so.
CONTEXT_FIELDS = ("measured_in", "host_placement")


def driver_context(m: Measurements) -> list[dict]:
    """One note per (scenario, field, value) that the drivers reported, naming the impls."""
    seen: dict[tuple[str, str, str, str], list[str]] = {}
    for (workload, scenario, impl), docs in m.docs.items():
        if _is_twin(m, workload, scenario, impl):  # the subject's run, said once under its name
            continue
        for field_name in CONTEXT_FIELDS:
            value = docs[0].get(field_name)
            if isinstance(value, str) and value:
                seen.setdefault((workload, scenario, field_name, value), []).append(impl)
    return [
        {
            "workload": w,
            "scenario": s,
            "impl": "",
            "text": f"{f.replace('_', ' ')}: {v} ({', '.join(sorted(impls))})",
        }
        for (w, s, f, v), impls in sorted(seen.items())
    ]


def notes(impls: list[Impl], scenarios: set[str]) -> list[dict]:
    """The manifests' notes about the scenarios of this run ("*": about every scenario)."""
    out = []
    for impl in impls:
        for scenario, text in impl.notes.items():
            if scenario != "*" and scenario not in scenarios:
                continue
            scenario = "" if scenario == "*" else scenario
            out.append(
                {"workload": impl.workload, "scenario": scenario, "impl": impl.id, "text": text}
            )
    return out
