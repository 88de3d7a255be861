"""Sweeps over several nodes (docs/hosts.md): each node measured complete rounds with its own
floor, so an implementation's ratio to the floor is read within a node. This section shows, per
scenario, each implementation's ratio on each node and whether the nodes agree (their ratios'
95% CIs overlap); for the floor itself, whose ratio is 1 everywhere, the ratio of its medians
between nodes: do the machines themselves agree?"""

from __future__ import annotations

from ... import stats
from ...charts import fmt_num, fmt_value
from ..cells import impl_cell, ratio_text
from ..inputs import ImplInfo
from ..model import Block, Cell, Heading, Para, Table

INTRO = (
    "The run's rounds were spread over the nodes below, each measuring complete rounds (every "
    "implementation and the floor, shuffled) after a warm-up of its own. Each cell: the node's "
    "median of the scenario's primary metric, and its ratio to the floor measured on the same "
    "node, with its 95% CI. The nodes **agree** on an implementation when its ratios' CIs "
    "overlap. The floor's row compares the nodes themselves: its median on each node over its "
    "median on the first."
)


def _ratio(a: list[float], b: list[float]) -> dict | None:
    try:
        return stats.ratio(a, b) if a and b else None
    except ValueError:
        return None


def _agreement(ratios: list[dict | None]) -> Cell:
    known = [r for r in ratios if r and r.get("ci95")]
    if len(known) < 2:
        return Cell("—", "muted")
    agree = all(stats.overlap(a["ci95"], b["ci95"]) for a in known for b in known)
    spread = max(r["ratio"] for r in known) / min(r["ratio"] for r in known)
    return Cell("agree" if agree else f"differ ({fmt_num(spread)}×)", "" if agree else "warn")


def nodes(wl: dict, impls: list[ImplInfo], outcomes: dict) -> list[Block]:
    blocks: list[Block] = []
    floor = wl.get("baseline")
    for scen in wl.get("scenarios", []):
        primary = scen.get("primary")
        base = outcomes.get((scen["name"], floor))
        base_row = base.rows.get(primary) if base and base.status == "ok" else None
        if not base_row or not base_row.get("nodes"):
            continue
        names = list(base_row["nodes"])
        unit = base_row.get("unit", "")
        rows = []
        for imp in impls:
            o = outcomes.get((scen["name"], imp.id))
            row = o.rows.get(primary) if o and o.status == "ok" else None
            if not row or not row.get("nodes"):
                continue
            cells: list[Cell] = [impl_cell(imp)]
            ratios = []
            for n in names:
                mine, theirs = row["nodes"].get(n) or [], base_row["nodes"].get(n) or []
                if imp.id == floor:  # the nodes themselves: each against the first node
                    r = _ratio(mine, base_row["nodes"][names[0]])
                else:
                    r = _ratio(mine, theirs)
                ratios.append(r)
                text, sub = ratio_text(r)
                median = (
                    fmt_value(stats.summarize(mine, row["better"])["median"], unit) if mine else "—"
                )
                cells.append(Cell(f"{median} · {text}", "num", sub=f"{sub} n={len(mine)}"))
            cells.append(_agreement(ratios))
            rows.append(cells)
        if rows:
            blocks.append(Heading(4, f"{scen['name']}: {primary} by node"))
            blocks.append(
                Table(
                    ["implementation", *names, "nodes"],
                    rows,
                    [False, *(True for _ in names), False],
                    caption="median · ratio to the floor on the same node [95% CI]; floor: ratio "
                    f"to its median on {names[0]}",
                )
            )
    return [Para(INTRO, "muted"), *blocks] if blocks else []
