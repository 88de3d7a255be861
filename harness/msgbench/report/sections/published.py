"""workload.toml [[published]]: what a seed article claimed, beside what this run measured of
the same thing, with a verdict computed from the run's data — never typed in.

A claim is a ratio of one implementation to an anchor (the seed compared everything with C): its
`ratio` (the seed's figure, for a metric where lower is better) or a bound (`min_ratio`). Its
verdict, from the bootstrap CI of this run's ratio:

- ratio claims: "holds" when the CI lies on the same side of 1 as the seed's ratio (the same
  one is faster), "reversed" when it lies on the other side, "tie" when it contains 1;
- bound claims: "holds" when the CI lies past the bound, "does not hold" when it lies short of
  it, "undecided" otherwise.

The seed's machine, build flags and method differ from the run's: the table says so beside it.
"""

from __future__ import annotations

from ...charts import fmt_num
from ..cells import impl_cell, ratio, ratio_text, status_cell, value_cell
from ..inputs import ImplInfo
from ..model import Block, Cell, Heading, Para, Table
from ..roles import short_label


def verdict(claim: dict, r: dict | None) -> tuple[str, str]:
    """(text, css class) of one claim against this run's ratio (None: not measured)."""
    if r is None:
        return "not measured", "skip"
    lo, hi = r["ci95"] if r.get("ci95") else (r["ratio"], r["ratio"])
    if "min_ratio" in claim:
        bound = claim["min_ratio"]
        if lo >= bound:
            return "holds", "pass"
        if hi < bound:
            return "does not hold", "fail"
        return "undecided (CI crosses the bound)", "skip"
    seed = claim["ratio"]
    if lo <= 1.0 <= hi:
        return "tie in this run (CI contains 1)", "skip"
    same_side = (hi < 1.0) == (seed < 1.0)
    if not same_side:
        return "reversed", "fail"
    if lo <= seed <= hi:
        return "holds, and the seed's figure is inside the CI", "pass"
    return "holds in direction, not in size", "pass"


def published(wl: dict, impls: list[ImplInfo], outcomes: dict) -> list[Block]:
    blocks: list[Block] = []
    scen_by_name = {sc["name"]: sc for sc in wl.get("scenarios", [])}
    for pub in wl.get("published") or []:
        scen = pub["scenario"]
        if scen not in scen_by_name:
            continue
        defs = scen_by_name[scen].get("metrics", {})
        anchor = pub["relative_to"]
        metrics = pub.get("metrics") or sorted({c["metric"] for c in pub.get("claims", [])})
        blocks.append(Heading(4, pub.get("title", f"{scen}: the seed's claims")))
        if pub.get("source"):
            blocks.append(Para(pub["source"], "muted"))
        a = outcomes.get((scen, anchor))
        rows = []
        for imp in impls:
            o = outcomes.get((scen, imp.id))
            if o is None:
                continue
            cells = [impl_cell(imp)]
            for m in metrics:
                d = defs.get(m, {})
                row = o.rows.get(m) if o.status == "ok" else None
                cells.append(value_cell(row, d.get("unit", "")) if row else status_cell(o))
                if imp.id == anchor:
                    cells.append(Cell("1 (anchor)", "num muted"))
                    continue
                text, sub = ratio_text(
                    ratio(row, a.rows.get(m) if a and a.status == "ok" else None)
                )
                cells.append(Cell(text, "num", sub=sub))
            rows.append(cells)
        headers = ["implementation"]
        for m in metrics:
            label = short_label(m, defs.get(m, {}), use_label=False)
            headers += [label, f"÷ {anchor}"]
        blocks.append(
            Table(
                headers,
                rows,
                [False, *(True for _ in headers[1:])],
                caption=f"this run: median [95% CI] and ratio to {anchor} (bootstrap CI)",
            )
        )
        claim_rows = []
        for c in pub.get("claims", []):
            m, who = c["metric"], c["impl"]
            o = outcomes.get((scen, who))
            r = None
            if o and o.status == "ok" and a and a.status == "ok":
                r = ratio(o.rows.get(m), a.rows.get(m))
            text, sub = ratio_text(r)
            seed = (
                f"≥ {fmt_num(c['min_ratio'])}×" if "min_ratio" in c else f"{fmt_num(c['ratio'])}×"
            )
            v, cls = verdict(c, r)
            imp = next((i for i in impls if i.id == who), None)
            claim_rows.append(
                [
                    impl_cell(imp) if imp else Cell(who, "impl"),
                    Cell(short_label(m, defs.get(m, {}), use_label=False)),
                    Cell(c.get("text", "")),
                    Cell(seed, "num"),
                    Cell(text, "num", sub=sub),
                    Cell(v, cls),
                ]
            )
        if claim_rows:
            blocks.append(
                Table(
                    [
                        "implementation",
                        "metric",
                        "the seed says",
                        f"seed ÷ {anchor}",
                        f"this run ÷ {anchor} [95% CI]",
                        "verdict",
                    ],
                    claim_rows,
                    [False, False, False, True, True, False],
                    caption="the seed's ratios come from another machine, unoptimised builds and "
                    "one run each; this run's from release builds, pinned, repeated trials",
                )  # fmt: skip
            )
    return blocks
