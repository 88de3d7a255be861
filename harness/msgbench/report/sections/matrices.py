"""workload.toml [[matrices]]: one metric over scenarios that each name a `peer` (the
implementation whose client program drives every implementation's server in that scenario),
as one table: a row per client, a column per server, each cell the pair's median with its 95%
CI and its ratio to the row's diagonal (the same client against its own implementation's
server), so a row reads "how much does changing the server change this client's time"."""

from __future__ import annotations

from ..cells import impl_cell, ratio, ratio_text, status_cell, value_cell
from ..inputs import ImplInfo
from ..model import Block, Cell, Heading, Para, Table


def matrices(wl: dict, impls: list[ImplInfo], outcomes: dict) -> list[Block]:
    blocks: list[Block] = []
    scen_by_name = {sc["name"]: sc for sc in wl.get("scenarios", [])}
    by_id = {i.id: i for i in impls}
    for mx in wl.get("matrices") or []:
        metric = mx["metric"]
        names = [n for n in mx.get("scenarios", []) if n in scen_by_name]
        if not names:
            continue
        d = scen_by_name[names[0]].get("metrics", {}).get(metric, {})
        unit, better = d.get("unit", ""), d.get("better", "lower")
        label = d.get("label") or metric
        blocks.append(Heading(4, mx.get("title") or f"client × server: {label}"))
        if mx.get("description"):
            blocks.append(Para(mx["description"], "muted"))

        # Servers: every implementation measured (or failed) in one of the scenarios; those
        # skipped in all of them are named once under the table, not as a column of "skipped".
        servers, left_out = [], []
        for imp in impls:
            seen = [outcomes[(n, imp.id)] for n in names if (n, imp.id) in outcomes]
            if any(o.status != "skipped" for o in seen):
                servers.append(imp)
            elif seen:
                left_out.append(f"{imp.id} ({seen[0].reason or 'skipped'})")

        rows = []
        for n in names:
            peer = scen_by_name[n].get("peer") or ""
            if peer in by_id:
                head = impl_cell(by_id[peer])
                head.text = f"{peer} client"
            else:  # a run stored before scenarios recorded their peer: the scenario's name
                head = Cell(f"{peer} client" if peer else n, "impl")
            diag = outcomes.get((n, peer))
            diag_row = diag.rows.get(metric) if diag and diag.status == "ok" else None
            cells = [head]
            for server in servers:
                o = outcomes.get((n, server.id))
                row = o.rows.get(metric) if o and o.status == "ok" else None
                if not row:
                    cells.append(status_cell(o))
                    continue
                cell = value_cell(row, unit)
                if server.id == peer:
                    extra = "diagonal"
                else:
                    text, sub = ratio_text(ratio(row, diag_row))
                    extra = f"{text} {sub}".strip() if diag_row else "no diagonal"
                cell.sub = f"{cell.sub} · {extra}" if cell.sub else extra
                cells.append(cell)
            rows.append(cells)
        side = "lower" if better == "lower" else "higher"
        caption = (
            f"{label} ({unit}, {side} is better) of each client × server pair: median [95% CI], "
            "then the pair's ratio to the row's diagonal (the same client against its own "
            "implementation's server; 1.10× = 10% more than that pair) with its bootstrap 95% CI. "
            "Rows: " + ", ".join(names)
        )
        if left_out:
            caption += "; not in the matrix: " + "; ".join(left_out)
        blocks.append(
            Table(
                ["client ↓ / server →", *(s.id for s in servers)],
                rows,
                [False, *(True for _ in servers)],
                caption=caption,
            )
        )
    return blocks
