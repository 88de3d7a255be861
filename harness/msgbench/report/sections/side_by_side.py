"""workload.toml [[side_by_side]]: the same metric of two scenarios that measure the same thing
two ways (the lab's driver beside a real browser, or beside the implementation's own client),
per implementation, same run."""

from __future__ import annotations

from ... import charts
from ...charts import fmt_value
from ..cells import impl_cell, ratio, ratio_text, status_cell, value_cell
from ..inputs import ImplInfo
from ..model import Block, Cell, Charts, Heading, Para, Table
from ..roles import short_label


def side_by_side(wl: dict, impls: list[ImplInfo], outcomes: dict, with_charts: bool) -> list[Block]:
    blocks: list[Block] = []
    scen_by_name = {sc["name"]: sc for sc in wl.get("scenarios", [])}
    for pair in wl.get("side_by_side") or []:
        a, b = pair["scenarios"]
        metric = pair["metric"]
        if a not in scen_by_name or b not in scen_by_name:
            continue
        d = scen_by_name[a].get("metrics", {}).get(metric, {})
        unit, better = d.get("unit", ""), d.get("better", "lower")
        label = short_label(metric, d, use_label=False)
        blocks.append(Heading(4, pair.get("title", f"{a} beside {b}")))
        if pair.get("description"):
            blocks.append(Para(pair["description"], "muted"))
        rows = []
        for imp in impls:
            oa, ob = outcomes.get((a, imp.id)), outcomes.get((b, imp.id))
            if oa is None and ob is None:
                continue
            ra = oa.rows.get(metric) if oa and oa.status == "ok" else None
            rb = ob.rows.get(metric) if ob and ob.status == "ok" else None
            cells = [impl_cell(imp)]
            cells.append(value_cell(ra, unit) if ra else status_cell(oa))
            cells.append(value_cell(rb, unit) if rb else status_cell(ob))
            text, sub = ratio_text(ratio(rb, ra))
            cells.append(Cell(text, "num", sub=sub))
            diff = (rb["median"] - ra["median"]) if ra and rb else None
            cells.append(Cell(fmt_value(diff, unit) if diff is not None else "—", "num"))
            rows.append(cells)
        blocks.append(
            Table(
                ["implementation", f"{a} {label}", f"{b} {label}", f"{b} ÷ {a}", "difference"],
                rows,
                [False, True, True, True, True],
                caption=f"{label}: median [95% CI] of each scenario in this run; the ratio's CI "
                "by bootstrap over both sets of trials",
            )
        )
        if with_charts:
            items = []
            for scen in (a, b):
                present = [i for i in impls if (scen, i.id) in outcomes]
                values = {i.id: outcomes[(scen, i.id)].est(metric) for i in present}
                missing = {
                    i.id: outcomes[(scen, i.id)].status
                    for i in present
                    if outcomes[(scen, i.id)].status != "ok"
                }
                svg = charts.bar_chart(
                    [i.chart for i in present], values, unit, label, better,
                    title=f"{scen}: {label}", missing=missing,
                )  # fmt: skip
                items.append((f"{scen}: {label} per implementation, 95% CI", svg))
            blocks.append(Charts(items))
    return blocks
