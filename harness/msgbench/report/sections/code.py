"""Code size and complexity beside each scenario's primary metric; the implementations'
declared traits."""

from __future__ import annotations

from ...charts import fmt_num
from ..cells import impl_cell, plain, value_cell
from ..inputs import ImplInfo, scenario_metrics
from ..model import Cell, Table
from ..roles import short_label


def code_table(wl: dict, impls: list[ImplInfo], results: dict, outcomes: dict) -> Table | None:
    name = wl["name"]
    metrics = {m["impl"]: m for m in results.get("metrics", []) if m.get("workload") == name}
    if not metrics:
        return None
    scens = wl.get("scenarios", [])
    headers = ["implementation", "files", "nloc", "functions", "CCN mean", "CCN max"]
    defs = {s["name"]: scenario_metrics(s, outcomes, impls) for s in scens}
    for s in scens:
        d = defs[s["name"]].get(s["primary"]) or {}
        headers.append(f"{s['name']} {short_label(s['primary'], d)}")
    rows = []
    for imp in impls:
        m = metrics.get(imp.id)
        cells = [impl_cell(imp)]
        for k in ("files", "nloc", "functions", "ccn_mean", "ccn_max"):
            v = (m or {}).get(k)
            cells.append(Cell(f"{v:,}" if isinstance(v, int) else fmt_num(v), "num"))
        for s in scens:
            o = outcomes.get((s["name"], imp.id))
            if o is None:
                cells.append(Cell("—", "num muted"))
            elif o.status != "ok":
                failed = o.status == "fail"
                cells.append(Cell("FAIL" if failed else o.status, "fail" if failed else "skip"))
            else:
                row = o.rows.get(s["primary"])
                unit = (defs[s["name"]].get(s["primary"]) or {}).get("unit", "")
                cells.append(value_cell(row, unit, show_ci=False))
        rows.append(cells)
    caption = "code size and complexity (lizard) beside each scenario's primary metric (median)"
    return Table(headers, rows, [False] + [True] * (len(headers) - 1), caption=caption, cls="code")


def traits_table(impls: list[ImplInfo]) -> Table | None:
    keys: list[str] = []
    for imp in impls:
        for k in imp.traits:
            if k not in keys:
                keys.append(k)
    if not keys and not any(i.summary for i in impls):
        return None
    headers = ["implementation", "summary"] + keys
    rows = []
    for imp in impls:
        cells = [impl_cell(imp), Cell(imp.summary or "—")]
        for k in keys:
            v = imp.traits.get(k)
            cells.append(Cell(", ".join(map(str, v)) if isinstance(v, list) and v else plain(v)))
        rows.append(cells)
    return Table(headers, rows, [False] * len(headers), cls="traits")
