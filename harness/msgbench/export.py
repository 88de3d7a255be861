"""Exporting a run: its raw per-trial samples as CSV or JSON, its summary as Markdown.

The samples are the numbers every median, interval and ratio of the report is computed from,
one row per sample, so that anyone can redo the statistics with their own tools. The columns
(docs/export.md) are the same in CSV and JSON; the JSON is a list of objects keyed by them.
"""

from __future__ import annotations

import csv
import io
import json

from .charts import fmt_interval, fmt_num, fmt_value
from .report.cells import ratio, ratio_text

FORMATS = ("csv", "json", "md")

COLUMNS = (
    "run_id",
    "commit",
    "dirty",
    "machine_id",
    "profile",
    "workload",
    "scenario",
    "impl",
    "aa_of",
    "metric",
    "unit",
    "better",
    "trial",
    "value",
)


def sample_rows(doc: dict, metrics: tuple[str, ...] = ()) -> list[dict]:
    """One row per recorded sample of the run (A/A twins included), in the document's order.
    metrics: only these metrics (default: all). Results without samples (failed, skipped)
    give no row."""
    run = doc.get("run") or {}
    machine = run.get("machine") or {}
    head = {
        "run_id": run.get("id", ""),
        "commit": run.get("commit") or "",
        "dirty": bool(run.get("dirty")),
        "machine_id": machine.get("fingerprint_id") or "",
        "profile": run.get("profile") or "",
    }
    rows = []
    for r in doc.get("results", []):
        if metrics and r["metric"] not in metrics:
            continue
        for trial, value in enumerate(r.get("samples") or [], start=1):
            rows.append(
                {
                    **head,
                    "workload": r["workload"],
                    "scenario": r["scenario"],
                    "impl": r["impl"],
                    "aa_of": r.get("aa_of") or "",
                    "metric": r["metric"],
                    "unit": r.get("unit", ""),
                    "better": r.get("better", ""),
                    "trial": trial,
                    "value": value,
                }
            )
    return rows


def to_csv(rows: list[dict]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    # true/false as JSON writes them, not Python's True/False
    writer.writerows({**r, "dirty": "true" if r["dirty"] else "false"} for r in rows)
    return buf.getvalue()


def to_json(rows: list[dict]) -> str:
    return json.dumps(rows, ensure_ascii=False, indent=1) + "\n"


def _aa_line(scen: dict, metric: str) -> str:
    """The scenario's A/A control for one metric, when the run measured one."""
    aa = scen.get("aa") or {}
    r = (aa.get("ratio") or {}).get(metric)
    if not r:
        return ""
    lo, hi = r.get("ci95") or (None, None)
    return (
        f"A/A control: `{aa.get('subject')}` ÷ `{aa.get('twin')}` = {fmt_num(r['ratio'])}× "
        f"{fmt_interval(lo, hi, r['ratio'], '')} (the same implementation measured twice: "
        "this run's noise)"
    )


def _scenario_table(rows: dict[str, dict], floor: str, unit: str) -> list[str]:
    lines = [
        "| impl | median | 95% CI | n | × floor | 95% CI of × floor | status |",
        "|---|---:|---|---:|---:|---|---|",
    ]
    for impl, r in rows.items():
        if r.get("status") != "ok" or r.get("median") is None:
            reason = (r.get("reason") or "").replace("|", "\\|").replace("\n", " ")
            lines.append(f"| {impl} | — | — | 0 | — | — | {r.get('status')} {reason} |".rstrip())
            continue
        lo, hi = r.get("ci95") or (None, None)
        if impl == floor:
            times, times_ci = "1 (floor)", ""
        else:
            times, times_ci = ratio_text(ratio(r, rows.get(floor)))
        lines.append(
            f"| {impl} | {fmt_value(r['median'], unit)} | {fmt_interval(lo, hi, r['median'], unit)}"
            f" | {r['n']} | {times} | {times_ci} | {'noisy' if r.get('noisy') else 'ok'} |"
        )
    return lines


def to_markdown(doc: dict, metrics: tuple[str, ...] = ()) -> str:
    """The run's summary: per workload and scenario, one table per metric (default: the
    scenario's primary metric) with median, 95% CI, n and the ratio to the floor with its CI;
    the A/A control under it when the run has one."""
    run = doc.get("run") or {}
    commit = (run.get("commit") or "")[:12] + (" (dirty)" if run.get("dirty") else "")
    out = [
        f"# msgbench run {run.get('id', '')}",
        "",
        f"commit {commit} · profile {run.get('profile', '')} · started {run.get('started', '')}",
        "",
        "Median of n trials with its 95% bootstrap CI; × floor is the median over the floor's "
        "median, its CI bootstrapped from both sets of samples.",
    ]
    for wl in doc.get("workloads", []):
        floor = wl.get("baseline") or ""
        out += ["", f"## {wl['name']}", ""]
        for scen in wl.get("scenarios", []):
            chosen = [m for m in metrics if m in scen.get("metrics", {})] or [scen["primary"]]
            for metric in chosen:
                rows = {
                    r["impl"]: r
                    for r in doc.get("results", [])
                    if (r["workload"], r["scenario"], r["metric"])
                    == (wl["name"], scen["name"], metric)
                    and not r.get("aa_of")
                }
                if not rows:
                    continue
                d = scen.get("metrics", {}).get(metric, {})
                unit = d.get("unit") or next(iter(rows.values())).get("unit", "")
                better = d.get("better") or next(iter(rows.values())).get("better", "")
                label = d.get("label", metric)
                out += [f"### {scen['name']}: {label} ({better} is better)", ""]
                out += _scenario_table(rows, floor, unit)
                aa = _aa_line(scen, metric)
                if aa:
                    out += ["", aa]
                out.append("")
    return "\n".join(out).rstrip() + "\n"


def export(doc: dict, fmt: str, metrics: tuple[str, ...] = ()) -> str:
    if fmt == "csv":
        return to_csv(sample_rows(doc, metrics))
    if fmt == "json":
        return to_json(sample_rows(doc, metrics))
    if fmt == "md":
        return to_markdown(doc, metrics)
    raise ValueError(f"unknown format {fmt!r} (valid: {', '.join(FORMATS)})")
