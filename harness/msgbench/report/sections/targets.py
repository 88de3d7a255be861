"""workload.toml [[targets]]: bounds on implementation ÷ floor (or ÷ reference) ratios, checked
against this run's measurements."""

from __future__ import annotations

from ...charts import fmt_num
from ..cells import ratio, ratio_text, status_cell
from ..model import Cell, Table
from ..roles import short_label


def targets_table(wl: dict, outcomes: dict) -> Table | None:
    """Each target a bound on the ratio implementation ÷ baseline (or ÷ reference,
    `against = "reference"`, or ÷ the best of a group, `against = "fastest"` with `among`) for
    one metric of one scenario."""
    targets = wl.get("targets") or []
    if not targets:
        return None
    scen_defs = {s["name"]: s.get("metrics") or {} for s in wl.get("scenarios", [])}
    rows: list[list[Cell]] = []
    for t in targets:
        scen, metric = t["scenario"], t["metric"]
        against = t.get("against", "baseline")
        d = scen_defs.get(scen, {})
        d = d.get(metric) or {} if isinstance(d, dict) else {}
        if against == "fastest":
            baseline = _best(outcomes, scen, metric, t.get("among") or t.get("impls", []), d)
            label = f"the best of {', '.join(t.get('among') or t.get('impls', []))}"
            if not baseline:
                continue
        else:
            baseline = wl.get(against) or ""
            label = baseline
        if not baseline:
            continue
        base = outcomes.get((scen, baseline))
        for impl in t.get("impls", []):
            o = outcomes.get((scen, impl))
            lo_bound, hi_bound = t.get("min_ratio"), t.get("max_ratio")
            bound = (f"≤ {fmt_num(hi_bound)}×" if hi_bound is not None else "") + (
                f"≥ {fmt_num(lo_bound)}×" if lo_bound is not None else ""
            )
            head = [
                Cell(scen),
                Cell(short_label(metric, d, use_label=False)),
                Cell(impl, "impl"),
                Cell(f"{bound} {label}" + (f" ({baseline})" if label != baseline else ""), "num"),
            ]
            if o is None or (scen, baseline) not in outcomes:
                rows.append([*head, Cell("—", "num muted"), Cell("not measured", "skip")])
                continue
            if o.status != "ok" or base is None or base.status != "ok":
                rows.append([*head, Cell("—", "num muted"), status_cell(o)])
                continue
            r = ratio(o.rows.get(metric), base.rows.get(metric))
            if r is None:
                rows.append([*head, Cell("—", "num muted"), Cell("no data", "skip")])
                continue
            text, sub = ratio_text(r)
            value = r["ratio"]
            met = (hi_bound is None or value <= hi_bound) and (
                lo_bound is None or value >= lo_bound
            )
            ci = r.get("ci95")
            sure = ci is not None and (
                (hi_bound is None or ci[1] <= hi_bound) and (lo_bound is None or ci[0] >= lo_bound)
                if met
                else (hi_bound is not None and ci[0] > hi_bound)
                or (lo_bound is not None and ci[1] < lo_bound)
            )
            verdict = ("met" if met else "MISSED") + ("" if sure else " (CI crosses the bound)")
            rows.append(
                [*head, Cell(text, "num", sub=sub), Cell(verdict, "pass" if met else "fail")]
            )
    return Table(
        ["scenario", "metric", "implementation", "target", "ratio [95% CI]", "verdict"],
        rows,
        [False, False, False, True, True, False],
        caption="targets declared in workload.toml, checked against this run; "
        "see Notes for the reasons behind a missed target",
    )


def _best(outcomes: dict, scen: str, metric: str, among: list[str], d: dict) -> str:
    """The implementation with the best median of `metric` in `scen` among `among` ("" if none
    was measured): the anchor of an `against = "fastest"` target."""
    measured = [
        (o.rows[metric]["median"], impl)
        for impl in among
        if (o := outcomes.get((scen, impl))) and o.status == "ok" and metric in o.rows
    ]
    if not measured:
        return ""
    pick = max if d.get("better") == "higher" else min
    return pick(measured)[1]
