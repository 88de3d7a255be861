"""Instructions per operation (a run of `msgbench bench --measure instructions`): per scenario,
each implementation's median count with its spread over the trials, and beside the figures what
valgrind counts and what it leaves out."""

from __future__ import annotations

from ... import instructions as counting
from ...charts import fmt_num, fmt_value
from ..cells import impl_cell, ratio_cell, status_cell
from ..inputs import ImplInfo
from ..model import Block, Cell, Para, Table

METRIC = counting.METRIC


def _spread_cells(row: dict, unit: str) -> list[Cell]:
    """The CV and the min–max of the trials (a deterministic count has CV 0, min = max)."""
    samples = row.get("samples") or []
    cv = row.get("cv")
    cv_text = "—" if cv is None else f"{cv:.2%}"
    if not samples:
        return [Cell(cv_text, "num"), Cell("—", "num muted")]
    lo, hi = min(samples), max(samples)
    width = f"range {(hi - lo) / row['median']:.2%} of the median" if row.get("median") else ""
    return [
        Cell(cv_text, "num"),
        Cell(f"{fmt_num(lo)} – {fmt_value(hi, unit)}", "num", sub=width),
    ]


def _method(run: dict, n_trials: list[int]) -> str:
    how = run.get("instructions") or {}
    tool = how.get("tool") or counting.TOOL
    version = f" ({how['valgrind']})" if how.get("valgrind") else ""
    trials = f"{min(n_trials)}" if min(n_trials) == max(n_trials) else "the n shown"
    return (
        f"Counted by {tool}{version} with `{' '.join(how.get('options') or [])}`. Each trial "
        "runs the scenario twice, with N and 2N operations, the implementation under valgrind "
        "and the driver not: (instructions(2N) − instructions(N)) ÷ (ops(2N) − ops(N)), so "
        "start-up, warm-up and shut-down cancel. The figure is the median over "
        f"{trials} trials; **spread** is their coefficient of variation and their range: a "
        "deterministic program repeats its count, a runtime with a scheduler or a collector "
        "(Go, Python) does not quite."
    )


def instructions(wl: dict, impls: list[ImplInfo], outcomes: dict, run: dict) -> list[Block]:
    """The section's blocks for one workload; [] when the run counted no instructions in it."""
    baseline = wl.get("baseline") or ""
    tables: list[Table] = []
    n_trials: list[int] = []
    for scen in wl.get("scenarios", []):
        name = scen["name"]
        rows_of = {i.id: outcomes[(name, i.id)] for i in impls if (name, i.id) in outcomes}
        counted = {k: o.rows[METRIC] for k, o in rows_of.items() if METRIC in o.rows}
        if not counted:
            continue
        unit = next(iter(counted.values())).get("unit", "instr/op")
        base_row = counted.get(baseline)
        rows: list[list[Cell]] = []
        for imp in sorted(impls, key=lambda i: (i.id not in counted, _median(counted, i.id))):
            o = rows_of.get(imp.id)
            if o is None:
                continue
            row = counted.get(imp.id)
            if row is None:
                rows.append([impl_cell(imp), Cell(imp.lang_label), status_cell(o, span=5)])
                continue
            n_trials.append(int(row.get("n") or 0))
            rows.append(
                [
                    impl_cell(imp),
                    Cell(imp.lang_label),
                    Cell(fmt_value(row["median"], unit), "num"),
                    ratio_cell(imp.id, baseline, "floor", row, base_row)
                    if baseline
                    else Cell("—", "num muted"),
                    *_spread_cells(row, unit),
                    Cell(str(row.get("n", "")), "num"),
                ]
            )
        tables.append(
            Table(
                headers=["implementation", "language", unit, "× baseline", "CV", "min – max", "n"],
                rows=rows,
                numeric=[False, False, True, True, True, True, True],
                caption=f"{name}: {scen.get('description', '')} — instructions per operation "
                "(lower is better), median of the trials, lowest first",
            )
        )
    if not tables:
        return []
    return [Para(counting.CAVEAT, "warn"), Para(_method(run, n_trials)), *tables]


def _median(counted: dict[str, dict], impl_id: str) -> float:
    row = counted.get(impl_id)
    return row["median"] if row and row.get("median") is not None else 0.0
