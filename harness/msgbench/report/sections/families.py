"""Metric families ("rps.*": one metric per key a driver reports, e.g. per redis-benchmark
test): a table per family and a chart of the throughput family's ratios to the reference."""

from __future__ import annotations

from ... import charts
from ..cells import ratio, ratio_text, value_cell
from ..inputs import ImplInfo
from ..model import Cell, Table
from ..roles import with_role


def _families(defs: dict) -> dict[str, list[str]]:
    families: dict[str, list[str]] = {}
    for k, d in defs.items():
        if d.get("family"):
            families.setdefault(d["family"], []).append(k)
    return families


def _family_label(defs: dict, family: str, members: list[str]) -> str:
    """What the family measures, without a member's key: "* requests/s" gives "requests/s"."""
    prefix = family.partition("*")[0]
    return defs[members[0]].get("label", family).replace(members[0][len(prefix) :], "").strip()


def tables(wl: dict, scen: dict, defs: dict, impls: list[ImplInfo], outcomes: dict) -> list[Table]:
    """One table per metric family: a row per member, a column per implementation, each value
    with its ratio to the reference (or, in a workload without one, the floor) measured in the
    same run."""
    anchor = wl.get("reference") or wl.get("baseline") or ""
    present = [i for i in impls if (scen["name"], i.id) in outcomes]
    out = []
    for family, members in _families(defs).items():
        prefix = family.partition("*")[0]
        first = defs[members[0]]
        unit = first.get("unit", "")
        rows = []
        for k in members:
            anchor_o = outcomes.get((scen["name"], anchor))
            anchor_row = anchor_o.rows.get(k) if anchor_o and anchor_o.status == "ok" else None
            cells = [Cell(k[len(prefix) :])]
            for imp in present:
                o = outcomes[(scen["name"], imp.id)]
                row = o.rows.get(k) if o.status == "ok" else None
                cell = value_cell(row, unit, show_ci=False)
                if row and imp.id != anchor:
                    cell.sub = ratio_text(ratio(row, anchor_row))[0]
                elif o.status != "ok":
                    cell = Cell(o.status if o.status != "fail" else "FAIL", "skip")
                cells.append(cell)
            rows.append(cells)
        label = _family_label(defs, family, members)
        arrow = "lower is better" if first.get("better") == "lower" else "higher is better"
        caption = (
            f"{scen['name']}: {label} per test ({unit}, {arrow}), median of the trials; "
            f"under each value its ratio to {anchor or 'nothing'} in the same run"
        )
        out.append(
            Table(
                ["test"] + [i.id for i in present],
                rows,
                [False] + [True] * len(present),
                caption=caption,
                cls="full",
            )  # fmt: skip
        )
    return out


def charts_of(
    wl: dict, scen: dict, defs: dict, present: list[ImplInfo], outcomes: dict, missing: dict
) -> list[tuple[str, str]]:
    """For the scenario's first throughput family: every implementation's ratio to the
    reference per member, with its 95% CI."""
    anchor = wl.get("reference") or wl.get("baseline") or ""
    members = [k for k in with_role(defs, "throughput", families=True) if defs[k].get("family")]
    if not members or not anchor:
        return []
    family = defs[members[0]]["family"]
    members = [k for k in members if defs[k]["family"] == family]
    prefix = family.partition("*")[0]
    name = scen["name"]
    anchor_o = outcomes.get((name, anchor))
    if not anchor_o or anchor_o.status != "ok":
        return []
    values: dict[str, dict] = {}
    for imp in present:
        o = outcomes[(name, imp.id)]
        if imp.id == anchor or o.status != "ok":
            continue
        row: dict = {}
        for k in members:
            r = ratio(o.rows.get(k), anchor_o.rows.get(k))
            if r is not None:
                ci = r.get("ci95") or [None, None]
                row[k] = (r["ratio"], ci[0], ci[1])
        values[imp.id] = row
    chart_impls = [i.chart for i in present if i.id in values]
    better = defs[members[0]].get("better", "higher")
    svg = charts.latency_chart(
        chart_impls,
        values,
        [(k, k[len(prefix) :]) for k in members],
        "",
        title=f"{name}: {_family_label(defs, family, members)} per test ÷ {anchor}",
        missing={k: v for k, v in missing.items() if k != anchor},
        ylabel=f"× {anchor} ({better} is better, log scale)",
        width=8.0,
        rotate_labels=True,
        unit_line=1.0,
    )
    return [(f"per-test ratio to {anchor} in the same run, 95% CI", svg)]
