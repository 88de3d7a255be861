"""workload.toml [[targets]]: bounds on implementation ÷ floor (or ÷ reference, ÷ another
implementation, ÷ the fastest of a group) ratios, checked against this run's measurements: met,
MISSED, or undecided when the ratio's 95% CI, widened by the scenario's A/A noise band, straddles
the bound (stats.bound_verdict). Each row is a question of its own: no correction across
targets."""

from __future__ import annotations

from ... import stats
from ...charts import fmt_num
from ..cells import ratio, ratio_text, status_cell
from ..model import Cell, Table
from ..roles import short_label


def targets_table(wl: dict, outcomes: dict, impls: list | None = None) -> Table | None:
    """Each target a bound on the ratio implementation ÷ baseline (or ÷ reference,
    `against = "reference"`; ÷ the best of a group, `against = "fastest"` with `among`; ÷ one
    implementation, `against = "<its id>"`) for one metric of one scenario. The implementations
    held to it are `impls`, and with `best_of_languages` each listed language's best variant in
    this run (its best median of the metric; `except` lists ids that are no candidates, such as
    a language's own floor): "the best C host is within 0.7× of the floor" is a
    claim about the language's choice of library, not about one folder. `impls` (the run's
    ImplInfo list) gives the languages; without it only `impls` targets are checked."""
    targets = wl.get("targets") or []
    if not targets:
        return None
    scen_defs = {s["name"]: s.get("metrics") or {} for s in wl.get("scenarios", [])}
    controls = {s["name"]: s.get("aa") or {} for s in wl.get("scenarios", [])}
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
        elif against in ("baseline", "reference"):
            baseline = wl.get(against) or ""
            label = baseline
        else:
            baseline = label = against
        if not baseline:
            continue
        base = outcomes.get((scen, baseline))
        skip = set(t.get("except", []))  # e.g. a language's own floor, which is no host
        held = [(impl, impl) for impl in t.get("impls", [])] + [
            (f"best {lang}: {best}" if best else f"best {lang}", best)
            for lang in t.get("best_of_languages", [])
            for best in [_best(outcomes, scen, metric, _of_language(impls, lang, skip), d)]
        ]
        for shown_as, impl in held:
            o = outcomes.get((scen, impl))
            lo_bound, hi_bound = t.get("min_ratio"), t.get("max_ratio")
            bound = (f"≤ {fmt_num(hi_bound)}×" if hi_bound is not None else "") + (
                f"≥ {fmt_num(lo_bound)}×" if lo_bound is not None else ""
            )
            head = [
                Cell(scen),
                Cell(short_label(metric, d, use_label=False)),
                Cell(shown_as, "impl"),
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
            band = _band(controls.get(scen, {}), metric)
            n = _trials(o.rows[metric], base.rows[metric])
            verdict = stats.bound_verdict(r.get("ci95"), lo_bound, hi_bound, band, n)
            shown, cls = _SHOWN[verdict]
            rows.append([*head, Cell(text, "num", sub=sub), Cell(shown, cls)])
    return Table(
        ["scenario", "metric", "implementation", "target", "ratio [95% CI]", "verdict"],
        rows,
        [False, False, False, True, True, False],
        caption="targets declared in workload.toml, checked against this run: met or MISSED "
        "when the ratio's 95% CI, widened by the scenario's A/A noise band, lies wholly on one "
        f"side of the bound, else undecided (also below {stats.MIN_N_FOR_VERDICT} trials); "
        "see Notes for the reasons behind a missed target",
    )


_SHOWN = {"met": ("met", "pass"), "missed": ("MISSED", "fail"), "undecided": ("undecided", "skip")}


def _band(control: dict, metric: str) -> list[float] | None:
    """The scenario's A/A noise band for `metric`, None when the run has none for it."""
    aa_ratio = (control.get("ratio") or {}).get(metric) or {}
    try:
        return stats.aa_band(aa_ratio["ci95"]) if aa_ratio.get("ci95") else None
    except ValueError:
        return None


def _trials(*rows: dict) -> int | None:
    """The fewest trials behind a ratio (None when the rows do not say)."""
    known = [r.get("n") or len(r.get("samples") or []) for r in rows]
    return min(known) if all(known) else None


def _of_language(impls: list | None, language: str, skip: set[str]) -> list[str]:
    """The ids of `language`'s implementations of the lab (its variants; neither the floor nor
    the reference nor an A/A twin, nor what the target names in `except`)."""
    return [i.id for i in impls or [] if i.language == language and not i.role and i.id not in skip]


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
