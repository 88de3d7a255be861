"""workload.toml [[sweeps]]: one metric across scenarios that differ in one parameter (nodes
discovered, concurrent clients), as a table and a line chart with CI bands: the question "how
does it scale?" answered from one run."""

from __future__ import annotations

from ... import charts
from ..cells import impl_cell, status_cell, value_cell
from ..inputs import ImplInfo
from ..model import Block, Charts, Heading, Para, Table
from ..roles import short_label


def sweeps(wl: dict, impls: list[ImplInfo], outcomes: dict, with_charts: bool) -> list[Block]:
    blocks: list[Block] = []
    scen_by_name = {sc["name"]: sc for sc in wl.get("scenarios", [])}
    for sweep in wl.get("sweeps") or []:
        metric = sweep["metric"]
        points = [(scen, x) for scen, x in sweep["points"] if scen in scen_by_name]
        if not points:
            continue
        d = scen_by_name[points[0][0]].get("metrics", {}).get(metric, {})
        unit, better = d.get("unit", ""), d.get("better", "lower")
        label = short_label(metric, d, use_label=False)
        xlabel = sweep.get("xlabel", "")
        blocks.append(Heading(4, sweep.get("title", f"{label} against {xlabel}")))
        if sweep.get("description"):
            blocks.append(Para(sweep["description"], "muted"))
        present = [i for i in impls if any((s, i.id) in outcomes for s, _ in points)]
        rows = []
        series: dict[str, list[tuple[float, float, float | None, float | None]]] = {}
        for imp in present:
            cells = [impl_cell(imp)]
            for scen, x in points:
                o = outcomes.get((scen, imp.id))
                row = o.rows.get(metric) if o and o.status == "ok" else None
                cells.append(value_cell(row, unit) if row else status_cell(o))
                est = o.est(metric) if o else None
                if est:
                    series.setdefault(imp.id, []).append((float(x), *est))
            rows.append(cells)
        blocks.append(
            Table(
                ["implementation", *(f"{xlabel} = {x}" for _, x in points)],
                rows,
                [False, *(True for _ in points)],
                caption=f"{label}: median [95% CI] per scenario ("
                + ", ".join(s for s, _ in points)
                + ") in this run",
            )
        )
        if with_charts and series:
            missing = {
                i.id: "not measured" for i in present if i.id not in series
            }  # fmt: skip
            svg = charts.sweep_chart(
                [i.chart for i in present],
                series,
                xlabel,
                unit,
                label,
                better,
                title=sweep.get("title", ""),
                logx=bool(sweep.get("logx", False)),
                missing=missing,
            )
            blocks.append(Charts([(f"{label} against {xlabel}, median with 95% CI band", svg)]))
    return blocks
