"""workload.toml [[ratio_charts]]: one implementation ÷ another for one metric, per scenario in
the order the workload lists them, as a table and a chart of the ratios with their 95% CIs and
a line at 1 — a seed's "X against Y per case" chart redone from one run, with intervals.

The ratio and its CI are the ones the Targets and Seeds sections read (cells.ratio: the
ratio of the medians, bootstrapped over both sets of trials)."""

from __future__ import annotations

from ... import charts
from ..cells import ratio, ratio_text, status_cell, value_cell
from ..inputs import ImplInfo
from ..model import Block, Cell, Charts, Heading, Para, Table


def better_word(unit: str, better: str) -> str:
    """What the better side is called: faster for a lower-is-better time, else better."""
    return "faster" if charts.is_time_unit(unit) and better == "lower" else "better"


def reading(r: dict | None, num: str, den: str, better: str, unit: str) -> tuple[str, str]:
    """(text, css class): which side of 1 the ratio's CI lies on, and who that favours."""
    if r is None:
        return "not measured", "skip"
    lo, hi = r["ci95"] if r.get("ci95") else (r["ratio"], r["ratio"])
    suffix = "" if r.get("ci95") else " (no CI)"
    if lo <= 1.0 <= hi:
        return "tie (CI contains 1)", "na"
    below = hi < 1.0  # numerator's median is the smaller one
    winner = num if below == (better == "lower") else den
    factor = 1 / r["ratio"] if below else r["ratio"]
    return f"{winner} {better_word(unit, better)}, {charts.fmt_num(factor)}×{suffix}", "pass"


def ratio_charts(wl: dict, impls: list[ImplInfo], outcomes: dict, with_charts: bool) -> list[Block]:
    blocks: list[Block] = []
    scen_by_name = {sc["name"]: sc for sc in wl.get("scenarios", [])}
    color = {i.id: i.color for i in impls}
    for rc in wl.get("ratio_charts") or []:
        metric, num, den = rc["metric"], rc["numerator"], rc["denominator"]
        names = [n for n in rc.get("scenarios", []) if n in scen_by_name]
        if not names:
            continue
        d = scen_by_name[names[0]].get("metrics", {}).get(metric, {})
        unit, better = d.get("unit", ""), d.get("better", "lower")
        label = d.get("label") or metric
        blocks.append(Heading(4, rc.get("title") or f"{num} ÷ {den}: {label}"))
        if rc.get("description"):
            blocks.append(Para(rc["description"], "muted"))
        rows, values, missing = [], {}, {}
        for n in names:
            on, od = outcomes.get((n, num)), outcomes.get((n, den))
            rn = on.rows.get(metric) if on and on.status == "ok" else None
            rd = od.rows.get(metric) if od and od.status == "ok" else None
            r = ratio(rn, rd)
            text, sub = ratio_text(r)
            verdict, cls = reading(r, num, den, better, unit)
            rows.append(
                [
                    Cell(n),
                    value_cell(rn, unit) if rn else status_cell(on),
                    value_cell(rd, unit) if rd else status_cell(od),
                    Cell(text, "num", sub=sub),
                    Cell(verdict, cls),
                ]
            )
            if r is not None:
                lo, hi = r["ci95"] if r.get("ci95") else (None, None)
                values[n] = (r["ratio"], lo, hi)
            else:  # the side that was not measured names the row's status
                gone = [o for o in (on, od) if o is None or o.status != "ok"]
                status = "not run" if not gone or gone[0] is None else gone[0].status
                missing[n] = "FAIL" if status == "fail" else status
        side = "lower" if better == "lower" else "higher"
        blocks.append(
            Table(
                ["scenario", num, den, f"{num} ÷ {den}", "reading"],
                rows,
                [False, True, True, True, False],
                caption=f"{label} ({unit}, {side} is better): medians [95% CI] in this run; "
                f"{num} ÷ {den} is the ratio of the medians with its 95% CI by bootstrap over "
                f"both sets of trials (below 1: {num} {'lower' if better == 'lower' else 'higher'}"
                f"); a tie is a CI that contains 1",
            )
        )
        if with_charts and values:
            below = num if better == "lower" else den
            svg = charts.ratio_chart(
                names,
                values,
                f"{num} ÷ {den}, {label} (below 1: {below} {better_word(unit, better)})",
                color.get(num, charts.OTHER_COLOR),
                title=f"{num} ÷ {den}: {label}",
                missing=missing,
            )
            blocks.append(
                Charts([(f"{num} ÷ {den} of the {label} medians per scenario, 95% CI", svg)])
            )
    return blocks
