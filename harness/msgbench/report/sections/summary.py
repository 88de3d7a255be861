"""A scenario's summary table (ranked by the primary metric, with ratios, CPU and memory
columns chosen by role) and its full table (every metric that is not a family member).

Ranks are tiers of the verdicts between pairs of implementations (noise.assess): two share a
tier unless their difference clears this run's A/A noise band."""

from __future__ import annotations

from ... import stats
from ..cells import impl_cell, ratio_cell, status_cell, value_cell
from ..inputs import ImplInfo, Outcome, metric_label
from ..model import Cell, Table
from ..roles import clock_caption, first_with_role, short_label
from . import noise


def summary_table(
    wl: dict,
    scen: dict,
    defs: dict,
    impls: list[ImplInfo],
    outcomes: dict,
    absent: list[ImplInfo] = (),
    assessed: noise.Assessment | None = None,
) -> Table:
    """`absent`: implementations whose manifest says the language has none (impl.toml
    `absent`); each gets one short row at the end, its reason being under the workload's
    heading. `assessed`: the scenario's noise.assess (computed here when not given)."""
    name, primary = scen["name"], scen["primary"]
    pdef = defs.get(primary, {})
    unit, better = pdef.get("unit", ""), pdef.get("better", "lower")
    baseline, reference = wl.get("baseline") or "", wl.get("reference") or ""
    cpu = first_with_role(defs, "cpu", besides=primary)
    memory = first_with_role(defs, "memory", besides=primary)

    def o_of(imp_id: str) -> Outcome | None:
        return outcomes.get((name, imp_id))

    ok = {i.id: o_of(i.id) for i in impls if o_of(i.id) and o_of(i.id).est(primary)}
    if assessed is None:
        assessed = noise.assess(scen, defs, impls, outcomes)
    tiers = assessed.tiers
    tier_no = stats.tier_of(tiers)
    tier_size = {n: len(t) for t in tiers for n in t}
    base_row = o_of(baseline).rows.get(primary) if baseline and baseline in ok else None
    ref_row = o_of(reference).rows.get(primary) if reference and reference in ok else None

    headers = ["rank", "implementation", "language", f"{metric_label(defs, primary)}", "n"]
    numeric = [True, False, False, True, True]
    if baseline:
        headers.append("× baseline")
        numeric.append(True)
    if reference:
        headers.append("× reference")
        numeric.append(True)
    for extra in (cpu, memory):
        if extra:
            headers.append(metric_label(defs, extra))
            numeric.append(True)
    headers.append("noisy")
    numeric.append(False)

    def sort_key(imp: ImplInfo) -> tuple:
        if imp.id in tier_no:
            med = ok[imp.id].rows[primary]["median"]
            return (0, tier_no[imp.id], med if better == "lower" else -med, imp.id)
        return (1, 0, 0, imp.id)

    rows: list[list[Cell]] = []
    for imp in sorted(impls, key=sort_key):
        o = o_of(imp.id)
        if imp.id not in ok:
            if o is None and not any(k[1] == imp.id for k in outcomes):
                continue  # not part of this run at all
            rest = len(headers) - 3
            rows.append([Cell("—", "num muted"), impl_cell(imp), Cell(imp.lang_label)])
            rows[-1].append(status_cell(o, span=rest))
            continue
        row = o.rows[primary]
        t = tier_no[imp.id]
        cells = [
            Cell(("=" if tier_size[imp.id] > 1 else "") + str(t), "num rank"),
            impl_cell(imp),
            Cell(imp.lang_label),
            value_cell(row, unit),
            Cell(str(row.get("n", "")), "num"),
        ]
        if baseline:
            cells.append(ratio_cell(imp.id, baseline, "floor", row, base_row))
        if reference:
            cells.append(ratio_cell(imp.id, reference, "reference", row, ref_row))
        for extra in (cpu, memory):
            if extra:
                unit_x = defs[extra].get("unit", "")
                cells.append(value_cell(o.rows.get(extra), unit_x, show_ci=False))
        cells.append(Cell("noisy", "noisy") if row.get("noisy") else Cell("", "muted"))
        rows.append(cells)
    for imp in absent:
        rows.append(
            [
                Cell("—", "num muted"),
                impl_cell(imp),
                Cell(imp.lang_label),
                Cell("absent", "na", sub="no program; why: under the workload's heading",
                     span=len(headers) - 3),
            ]
        )  # fmt: skip
    arrow = "lower is better" if better == "lower" else "higher is better"
    caption = (
        f"{name}: {metric_label(defs, primary)} ({unit}, {arrow}), median and 95% CI; "
        "ratios are median ÷ the floor's median, with their 95% CI; rank: "
        + noise.caption_note(assessed)
    )
    clocks = clock_caption(scen, defs, [k for k in (primary, cpu) if k])
    if clocks:
        caption += f"; {clocks}"
    return Table(headers, rows, numeric, caption=caption, cls="summary")


def full_table(scen: dict, defs: dict, impls: list[ImplInfo], outcomes: dict) -> Table:
    keys = [k for k in defs if not defs[k].get("family")]  # families: families.tables
    headers = ["implementation"] + [short_label(k, defs[k]) for k in keys]
    rows = []
    for imp in impls:
        o = outcomes.get((scen["name"], imp.id))
        if o is None:
            continue
        cells = [impl_cell(imp)]
        if o.status != "ok":
            cells.append(status_cell(o, span=len(keys)))
        else:
            for k in keys:
                cells.append(value_cell(o.rows.get(k), defs[k].get("unit", "")))
        rows.append(cells)
    caption = f"{scen['name']}: every metric, median and [95% CI] (~ = noisy)"
    clocks = clock_caption(scen, defs, keys)
    if clocks:
        caption += f"; {clocks}"
    return Table(headers, rows, [False] + [True] * len(keys), caption=caption, cls="full")
