"""The Seeds section: for each published comparison the lab was built to settle (seeds/*.toml,
carried in the run document as `seeds`), its question and figures as the seed gave them, the
same experiment as this run measured it, and a verdict on each claim computed from this run's
data — never typed in.

A verdict reads the 95% bootstrap CI of a ratio of medians, widened by the scenario's A/A noise
band as the Targets table does (stats.bound_verdict): a difference is only called when the
widened CI excludes 1, so "no difference outside the noise" means exactly that. Kinds of claim
(seeds/README.md): `ratio` (the seed's A ÷ B), `faster` (A faster than B, no figure), `order`
(a ranking: each neighbouring pair as `faster`), `similar` (A ÷ B inside a band) and `bound`
(A ÷ B past a figure).
"""

from __future__ import annotations

from dataclasses import dataclass

from ... import stats
from ...charts import fmt_num, fmt_value
from .. import inputs
from ..cells import impl_cell, ratio, ratio_text, status_cell, value_cell
from ..inputs import ImplInfo, Outcome, slug
from ..model import Block, Bullets, Cell, Charts, Doc, Para, Table
from . import ratio_charts

HOLDS, REVERSED, NO_DIFFERENCE = "holds", "reversed", "no difference outside the noise"
DOES_NOT_HOLD, UNDECIDED, NOT_MEASURED = "does not hold", "undecided", "not measured"
_CLASS = {HOLDS: "pass", REVERSED: "fail", DOES_NOT_HOLD: "fail"}

INTRO = (
    "msgbench was built because five published comparisons (the seeds) drew conclusions from "
    "hand-run, single-shot benchmarks on other machines. Each block below quotes what a seed "
    "measured and concluded, as its text states it (figures that were only in its images are "
    "not quoted), reruns the same experiment in this run beside the lab's implementations in "
    "every language and the floor, and computes a verdict on each claim: **holds**, "
    "**reversed**, or **no difference outside the noise** (a ratio's 95% CI, widened by the "
    "scenario's A/A noise band, that contains 1); a claim of similarity or a bound **holds**, "
    "**does not hold**, or is **undecided**. The reasons the seed may have differed follow, "
    "each with the figures of this run that show it. The seed's machine, builds and method "
    "differ from this run's: a verdict says whether its conclusion survives a careful rerun "
    "here, not that its numbers were wrong there."
)


@dataclass
class Verdict:
    text: str  # one of the constants above
    detail: str = ""  # e.g. whether the seed's figure lies in the CI

    @property
    def cls(self) -> str:
        return _CLASS.get(self.text, "skip")

    def shown(self) -> str:
        return self.text + (f" ({self.detail})" if self.detail else "")


# ----------------------------------------------------------------------------- verdict rules


def side(r: dict | None, band: list[float] | None, n: int | None) -> str:
    """Where a ratio lies against 1 once its CI is widened by the noise band: "above",
    "below", "tie" (the widened CI holds 1) or "unknown" (no ratio, no CI, too few trials)."""
    if r is None or not r.get("ci95") or (n is not None and n < stats.MIN_N_FOR_VERDICT):
        return "unknown"
    m = band[1] if band else 1.0
    lo, hi = r["ci95"][0] / m, r["ci95"][1] * m
    return "above" if lo > 1.0 else "below" if hi < 1.0 else "tie"


def widened_text(r: dict | None, band: list[float] | None) -> str:
    """The interval a verdict is read from, shown beside the ratio's own CI so every verdict
    can be checked by eye: the A/A band (±%) and the CI widened by it."""
    if r is None or not r.get("ci95"):
        return ""
    if not band:
        return "no A/A band in this run: the CI itself"
    m = band[1]
    lo, hi = r["ci95"][0] / m, r["ci95"][1] * m
    return f"A/A band ±{(m - 1) * 100:.0f}%: widened [{fmt_num(lo)}, {fmt_num(hi)}]"


def direction_verdict(where: str, expected: str) -> Verdict:
    """A claim that a ratio lies on the `expected` side of 1 ("above" or "below")."""
    if where == "unknown":
        return Verdict(UNDECIDED, f"fewer than {stats.MIN_N_FOR_VERDICT} trials or no interval")
    if where == "tie":
        return Verdict(NO_DIFFERENCE)
    return Verdict(HOLDS) if where == expected else Verdict(REVERSED)


def ratio_verdict(r: dict | None, band, n, seed: float) -> Verdict:
    v = direction_verdict(side(r, band, n), "above" if seed > 1 else "below")
    if v.text == HOLDS and r and r.get("ci95"):
        lo, hi = r["ci95"]
        inside = lo <= seed <= hi
        v.detail = (
            "the seed's figure lies in the CI"
            if inside
            else f"in direction; the seed's figure {fmt_num(seed)}× lies outside the CI"
        )
    elif v.text == NO_DIFFERENCE:
        m = band[1] if band else 1.0
        lo, hi = r["ci95"][0] / m, r["ci95"][1] * m
        if not lo <= seed <= hi:
            v.detail = f"the seed's {fmt_num(seed)}× lies outside even the widened interval"
    return v


def interval_verdict(r: dict | None, band, n, lo_bound, hi_bound) -> Verdict:
    """`similar` (both bounds) and `bound` (one): stats.bound_verdict's rule."""
    if r is None:
        return Verdict(NOT_MEASURED)
    got = stats.bound_verdict(r.get("ci95"), lo_bound, hi_bound, band, n)
    return Verdict({"met": HOLDS, "missed": DOES_NOT_HOLD}.get(got, UNDECIDED))


def overall(verdicts: list[Verdict]) -> Verdict:
    """One verdict for several (an order's pairs, a claim's scenarios): reversed or does not
    hold if any is, holds if all do, else the ties (and undecided ones) named by count."""
    texts = [v.text for v in verdicts]
    if not texts:
        return Verdict(NOT_MEASURED)
    for bad in (REVERSED, DOES_NOT_HOLD):
        if bad in texts:
            return Verdict(bad, _tally(texts) if len(texts) > 1 else "")
    if all(t == HOLDS for t in texts):
        return Verdict(HOLDS, _tally(texts) if len(texts) > 1 else "")
    if all(t in (NOT_MEASURED, UNDECIDED) for t in texts):
        return Verdict(texts[0] if len(set(texts)) == 1 else UNDECIDED, _tally(texts))
    return Verdict(NO_DIFFERENCE if NO_DIFFERENCE in texts else UNDECIDED, _tally(texts))


def _tally(texts: list[str]) -> str:
    counts = {t: texts.count(t) for t in dict.fromkeys(texts)}
    return ", ".join(f"{t}: {c} of {len(texts)}" for t, c in counts.items())


# ------------------------------------------------------------------------- the run's numbers


class RunView:
    """One workload's outcomes, metric definitions and A/A bands in this run."""

    def __init__(self, results: dict, wl: dict) -> None:
        self.wl = wl
        self.outcomes: dict[tuple[str, str], Outcome] = inputs.outcomes(results, wl["name"])
        self.impls: list[ImplInfo] = [i for i in inputs.impl_infos(results, wl) if not i.absent]
        self.scen = {s["name"]: s for s in wl.get("scenarios", [])}

    def impl(self, impl_id: str) -> ImplInfo | None:
        return next((i for i in self.impls if i.id == impl_id), None)

    def defn(self, scenario: str, metric: str) -> dict:
        return (self.scen.get(scenario, {}).get("metrics") or {}).get(metric) or {}

    def row(self, scenario: str, impl_id: str, metric: str) -> dict | None:
        o = self.outcomes.get((scenario, impl_id))
        return o.rows.get(metric) if o and o.status == "ok" else None

    def ratio(self, scenario: str, metric: str, a: str, b: str, b_metric: str = "") -> dict | None:
        return ratio(self.row(scenario, a, metric), self.row(scenario, b, b_metric or metric))

    def band(self, scenario: str, metric: str) -> list[float] | None:
        aa = ((self.scen.get(scenario, {}).get("aa") or {}).get("ratio") or {}).get(metric) or {}
        try:
            return stats.aa_band(aa["ci95"]) if aa.get("ci95") else None
        except ValueError:
            return None

    def trials(self, scenario: str, metric: str, *impl_ids: str) -> int | None:
        rows = [self.row(scenario, i, metric) for i in impl_ids]
        if any(r is None for r in rows):
            return None
        known = [r.get("n") or len(r.get("samples") or []) for r in rows]
        return min(known) if all(known) else None

    def better(self, scenario: str, metric: str) -> str:
        return self.defn(scenario, metric).get("better", "lower")


# ------------------------------------------------------------------------------ the claims


def judge(c: dict, view: RunView, scenario: str) -> tuple[str, str, Verdict]:
    """(compared, this run's figure, verdict) of one claim in one scenario."""
    m, kind = c["metric"], c["kind"]
    if kind == "order":
        return _judge_order(c, view, scenario)
    if kind == "faster":
        a, b = c["slower"], c["faster"]
    else:
        a, b = c["impl"], c["against"]
    r = view.ratio(scenario, m, a, b)
    n, band = view.trials(scenario, m, a, b), view.band(scenario, m)
    text, sub = ratio_text(r)
    widened = widened_text(r, band)
    figure = text + (f" {sub}" if sub else "") + (f"; {widened}" if widened else "")
    compared = f"{a} ÷ {b}"
    if r is None:
        return compared, figure, unmeasured(view, scenario, m, a, b)
    if kind == "ratio":
        return compared, figure, ratio_verdict(r, band, n, c["seed"])
    if kind == "faster":
        expected = "above" if view.better(scenario, m) == "lower" else "below"
        v = direction_verdict(side(r, band, n), expected)
        if "seed_difference" in c:
            ra, rb = view.row(scenario, a, m), view.row(scenario, b, m)
            unit = view.defn(scenario, m).get("unit", "")
            diff = abs(ra["median"] - rb["median"])
            figure += f"; difference of medians {fmt_value(diff, unit)}"
        return compared, figure, v
    if kind == "similar":
        lo, hi = c["band"]
        return compared, figure, interval_verdict(r, band, n, lo, hi)
    return compared, figure, interval_verdict(r, band, n, c.get("min"), c.get("max"))


def unmeasured(view: RunView, scenario: str, metric: str, a: str, b: str) -> Verdict:
    """Why a ratio is missing: a side not measured, or a median of 0 (a CPU time below its
    clock's resolution at a small size), which gives no ratio rather than a verdict."""
    rows = [view.row(scenario, i, metric) for i in (a, b)]
    if all(rows):
        return Verdict(UNDECIDED, "no ratio: a median of 0, below the clock's resolution here")
    return Verdict(NOT_MEASURED)


def _judge_order(c: dict, view: RunView, scenario: str) -> tuple[str, str, Verdict]:
    m, order = c["metric"], c["order"]
    expected = "above" if view.better(scenario, m) == "lower" else "below"
    pairs, parts = [], []
    for fast, slow in zip(order, order[1:], strict=False):
        r = view.ratio(scenario, m, slow, fast)
        n, band = view.trials(scenario, m, slow, fast), view.band(scenario, m)
        v = (
            direction_verdict(side(r, band, n), expected)
            if r
            else unmeasured(view, scenario, m, slow, fast)
        )
        pairs.append(v)
        text, sub = ratio_text(r)
        widened = widened_text(r, band)
        parts.append(
            f"{slow} ÷ {fast} {text}{(' ' + sub) if sub else ''}"
            f"{(' (' + widened + ')') if widened else ''}: {v.text}"
        )
    measured = [(row["median"], i) for i in order if (row := view.row(scenario, i, m)) is not None]
    higher = view.better(scenario, m) == "higher"
    ranked = [i for _, i in sorted(measured, reverse=higher)]  # fastest first
    figure = "fastest first by median: " + ", ".join(ranked) if ranked else "—"
    v = overall(pairs)
    v.detail = "; ".join(parts)
    return " > ".join(order) + " (faster first)", figure, v


def seed_figure(c: dict) -> str:
    kind = c["kind"]
    if kind == "ratio":
        return f"{fmt_num(c['seed'])}×"
    if kind == "similar":
        return f"{fmt_num(c['band'][0])}× to {fmt_num(c['band'][1])}×"
    if kind == "bound":
        return (f"≥ {fmt_num(c['min'])}×" if "min" in c else "") + (
            f"≤ {fmt_num(c['max'])}×" if "max" in c else ""
        )
    if kind == "faster" and "seed_difference" in c:
        lo, hi = c["seed_difference"]
        return f"{c['faster']} faster by {fmt_num(lo)}–{fmt_num(hi)}"
    if kind == "faster":
        return f"{c['faster']} faster"
    return " > ".join(c["order"])


def claim_verdicts(c: dict, view: RunView) -> list[tuple[str, str, str, Verdict]]:
    """(scenario, compared, figure, verdict) for each scenario the claim is judged in."""
    out = []
    for scen in [c["scenario"]] if "scenario" in c else c.get("scenarios", []):
        compared, figure, v = judge(c, view, scen)
        out.append((scen, compared, figure, v))
    return out


def claims_table(e: dict, view: RunView) -> Table | None:
    rows = []
    for c in e.get("claims", []):
        judged = claim_verdicts(c, view)
        for i, (scen, compared, figure, v) in enumerate(judged):
            rows.append(
                [
                    Cell(c["says"] if i == 0 else "", "muted" if i else ""),
                    Cell(scen),
                    Cell(_metric_label(view, scen, c["metric"])),
                    Cell(compared),
                    Cell(seed_figure(c) if i == 0 else "", "num"),
                    Cell(figure, "num"),
                    Cell(v.shown(), v.cls),
                ]
            )
        if len(judged) > 1:
            v = overall([j[3] for j in judged])
            rows.append(
                [Cell("", ""), Cell("all of the above", "muted"), Cell(""), Cell(""), Cell(""),
                 Cell(""), Cell(v.shown(), v.cls)]
            )  # fmt: skip
    if not rows:
        return None
    return Table(
        ["the seed says", "scenario", "metric", "compared", "the seed's figure",
         "this run [95% CI]; the interval judged", "verdict"],
        rows,
        [False, False, False, False, True, True, False],
        caption="verdicts computed from this run: the ratio's 95% bootstrap CI widened by the "
        "scenario's A/A noise band (seeds/README.md has the rules)",
    )  # fmt: skip


def _metric_label(view: RunView, scen: str, metric: str) -> str:
    d = view.defn(scen, metric)
    return f"{d.get('label', metric)}" + (f" ({d['unit']})" if d.get("unit") else "")


# ------------------------------------------------------------------------ the other blocks


def figures_table(e: dict) -> Table | None:
    rows = [
        [
            Cell(f["what"]),
            Cell(f"{f['value']}" + _unit_suffix(f["unit"])),
            Cell(f"“{f['quote']}”", sub=f.get("note", "")),
            Cell(f["where"], "muted"),
        ]
        for f in e.get("figures", [])
    ]
    if not rows:
        return None
    return Table(
        ["figure", "the seed's value", "its text says", "where"],
        rows,
        [False, False, False, False],
        caption="quoted from the seed's text; figures that were only in its images are not here",
    )


def _unit_suffix(unit: str) -> str:
    """How a figure's unit follows its value: none for words, 3.66× for a ratio, else spaced."""
    return "" if unit in ("words", "order") else unit if unit == "×" else f" {unit}"


def rerun_table(e: dict, view: RunView) -> Table | None:
    t = e["table"]
    anchor = t["anchor"]
    if "scenario" in t:
        scen, metrics = t["scenario"], t["metrics"]
        rows = []
        for imp in view.impls:
            o = view.outcomes.get((scen, imp.id))
            if o is None or o.status == "skipped":  # e.g. the floor, which has no client
                continue
            cells = [impl_cell(imp)]
            for m in metrics:
                row = view.row(scen, imp.id, m)
                unit = view.defn(scen, m).get("unit", "")
                cells.append(value_cell(row, unit) if row else status_cell(o))
                if imp.id == anchor:
                    cells.append(Cell("1 (anchor)", "num muted"))
                else:
                    text, sub = ratio_text(view.ratio(scen, m, imp.id, anchor))
                    cells.append(Cell(text, "num", sub=sub))
            rows.append(cells)
        headers = ["implementation"]
        for m in metrics:
            headers += [_metric_label(view, scen, m), f"÷ {anchor}"]
        caption = f"{scen}: median [95% CI] of this run's trials, and the ratio to {anchor}"
    else:
        metric, impls = t["metric"], t["impls"]
        rows = []
        for scen in t["scenarios"]:
            unit = view.defn(scen, metric).get("unit", "")
            cells = [Cell(scen)]
            for i in impls:
                row = view.row(scen, i, metric)
                o = view.outcomes.get((scen, i))
                cells.append(value_cell(row, unit) if row else status_cell(o))
            for i in impls:
                if i != anchor:
                    text, sub = ratio_text(view.ratio(scen, metric, i, anchor))
                    cells.append(Cell(text, "num", sub=sub))
            rows.append(cells)
        headers = ["scenario", *impls, *(f"{i} ÷ {anchor}" for i in impls if i != anchor)]
        label = _metric_label(view, t["scenarios"][0], metric)
        caption = f"{label}: median [95% CI] of this run's trials, and the ratios to {anchor}"
    if not rows:
        return None
    return Table(headers, rows, [False, *(True for _ in headers[1:])], caption=caption)


def evidence_items(reason: dict, view: RunView) -> str:
    shown = []
    for ev in reason.get("evidence", []):
        scen, m, a = ev["scenario"], ev["metric"], ev["impl"]
        label = _metric_label(view, scen, m)
        if ev.get("spread"):
            row = view.row(scen, a, m)
            samples = (row or {}).get("samples") or []
            if not samples:
                shown.append(f"{a}, {label} in {scen}: not measured")
                continue
            unit = view.defn(scen, m).get("unit", "")
            cv = row.get("cv")
            shown.append(
                f"{a}, {label} in {scen}: trials from {fmt_value(min(samples), unit)} to "
                f"{fmt_value(max(samples), unit)} (n = {len(samples)}"
                + (f", CV {cv:.1%}" if cv is not None else "")
                + ")"
            )
            continue
        other = ev.get("other_metric", "")
        b = ev.get("against", "")
        r = view.ratio(scen, m, a, b, other)
        text, sub = ratio_text(r)
        what = f"{a}: {m} ÷ {other}" if other else f"{a} ÷ {b}, {label}"
        shown.append(f"{what} in {scen}: {text}" + (f" {sub}" if sub else ""))
    return "; ".join(shown)


def systems_items(e: dict, view: RunView) -> list[str]:
    out = []
    for s in e.get("systems", []):
        if s.get("impl"):
            imp = view.impl(s["impl"])
            version = f" ({imp.variant})" if imp and imp.variant else ""
            out.append(f"**{s['name']}**: measured here as `{s['impl']}`{version}. {s['ran']}.")
        else:
            out.append(f"**{s['name']}**: cannot be had here: {s['why']}.")
    return out


# -------------------------------------------------------------------------------- assembly


def anchor(seed_id: str, key: str) -> str:
    return slug("seed", seed_id, key)


def seeds(doc: Doc, results: dict, with_charts: bool = True) -> None:
    """The Seeds section, when the run carries seeds (`msgbench seeds`, or any run that
    measured a seed's scenario)."""
    carried = results.get("seeds") or []
    if not carried:
        return
    workloads = {w["name"]: w for w in results.get("workloads", [])}
    doc.heading(2, "Seeds: the published comparisons, rerun", "seeds")
    doc.blocks.append(Para(INTRO))
    captures = {}
    for s in carried:
        if s.get("same_as"):
            captures.setdefault(s["same_as"], []).append(s)
    for s in carried:
        if s.get("same_as"):
            continue
        for e in s.get("experiments", []):
            wl = workloads.get(e["workload"])
            if wl is None:
                continue
            ids = " and ".join([s["id"], *(c["id"] for c in captures.get(s["id"], []))])
            title = f"Seed {ids}: {e['title']}"
            doc.heading(3, title, anchor(s["id"], e["key"]))
            view = RunView(results, wl)
            doc.blocks.extend(experiment_blocks(s, e, view, captures))
            if with_charts:  # the workload's chart of the seed's own comparison (seed 004's)
                doc.blocks.extend(seed_charts(e, view))


def experiment_blocks(s: dict, e: dict, view: RunView, captures: dict) -> list[Block]:
    blocks: list[Block] = []
    source = f"“{s['title']}”, {s['venue']}; author: {s['author']}. "
    for c in captures.get(s["id"], []):
        source += f"Seed {c['id']} is {c['venue']}. "
    blocks.append(Para(source.strip(), "muted"))
    blocks.append(Para(f"**Question.** {e['question']}"))
    blocks.append(Para(f"**The seed's experiment.** {e['method']}. Machine: {e['machine']}."))
    figures = figures_table(e)
    if figures:
        blocks.append(figures)
    blocks.append(Para(f"**Rerun here.** {e['rerun']}"))
    systems = systems_items(e, view)
    if systems:
        blocks.append(Bullets(systems))
    table = rerun_table(e, view)
    blocks.append(table or Para("Not measured in this run.", "muted"))
    claims = claims_table(e, view)
    if claims:
        blocks.append(Para("**Verdicts.**"))
        blocks.append(claims)
    reasons = [f"{r['says']} {evidence_items(r, view)}".strip() for r in e.get("reasons", [])]
    if reasons:
        blocks.append(Para("**Why the seed may have differed.**"))
        blocks.append(Bullets(reasons))
    return blocks


def seed_charts(e: dict, view: RunView) -> list[Block]:
    """The workload's [[ratio_charts]] drawn over this experiment's scenarios only."""
    ours = set(e["scenarios"])
    mine = [rc for rc in view.wl.get("ratio_charts") or [] if set(rc["scenarios"]) <= ours]
    if not mine:
        return []
    wl = {**view.wl, "ratio_charts": mine}
    drawn = ratio_charts.ratio_charts(wl, view.impls, view.outcomes, with_charts=True)
    return [b for b in drawn if isinstance(b, Charts)]


def summary_rows(results: dict) -> list[dict]:
    """One row per claim for the README's table: seed, experiment anchor, the seed's words and
    the overall verdict over the claim's scenarios."""
    workloads = {w["name"]: w for w in results.get("workloads", [])}
    rows = []
    for s in results.get("seeds") or []:
        for e in s.get("experiments", []):
            wl = workloads.get(e["workload"])
            if wl is None:
                continue
            view = RunView(results, wl)
            for c in e.get("claims", []):
                v = overall([j[3] for j in claim_verdicts(c, view)])
                rows.append(
                    {"seed": s["id"], "anchor": anchor(s["id"], e["key"]), "says": c["says"],
                     "verdict": v.text, "detail": v.detail}
                )  # fmt: skip
    return rows
