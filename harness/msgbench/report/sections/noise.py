"""Noise of this run: per scenario, the A/A control's ratio with its CI, the trials per
implementation, and the smallest difference the run can resolve; and the verdicts between the
scenario's implementations (stats.pairwise) that its rank tiers are built from.

One question = one scenario's primary metric: its pairs are corrected together (Bonferroni),
never with the rest of the report.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ... import stats
from ..inputs import ImplInfo, Outcome, scenario_metrics
from ..model import Block, Cell, Para, Table


@dataclass
class Assessment:
    """One scenario's question: its primary metric compared between every pair of
    implementations against the run's A/A noise band."""

    scenario: str
    metric: str
    control: dict | None  # the scenario entry's "aa": {"subject", "twin", "chosen_as", ...}
    aa_ratio: dict | None  # {"ratio", "ci95"} of the primary metric: subject ÷ twin
    band: list[float] | None  # stats.aa_band of it; None: no A/A (an old run, a failed twin)
    pairs: dict = field(default_factory=dict)  # stats.pairwise()
    tiers: list[list[str]] = field(default_factory=list)
    resolvable: float | None = None  # stats.resolvable(): 0.06 = 6%
    n: dict[str, int] = field(default_factory=dict)  # trials per implementation (twin too)

    @property
    def comparisons(self) -> int:
        return len(self.pairs)


def assess(
    scen: dict, defs: dict, impls: list[ImplInfo], outcomes: dict, twin: Outcome | None = None
) -> Assessment:
    """The scenario's question, from the rows of its measured implementations."""
    name, primary = scen["name"], scen["primary"]
    better = (defs.get(primary) or {}).get("better", "lower")
    rows = {
        i.id: o.rows[primary]
        for i in impls
        if (o := outcomes.get((name, i.id))) is not None and o.est(primary)
    }
    control = scen.get("aa") or None
    aa_ratio = ((control or {}).get("ratio") or {}).get(primary)
    band = None
    if aa_ratio and aa_ratio.get("ci95"):
        try:
            band = stats.aa_band(aa_ratio["ci95"])
        except ValueError:  # a degenerate interval (a zero median): no band to lean on
            band = None
    # A row kept without its samples counts as one trial: it can only tie.
    samples = {k: r.get("samples") or [r["median"]] for k, r in rows.items()}
    pairs = stats.pairwise(samples, better, band=band)
    medians = {k: r["median"] for k, r in rows.items()}
    n = {k: len(s) for k, s in samples.items()}
    twin_row = twin.rows.get(primary) if twin and twin.status == "ok" else None
    if control and twin_row:
        n[control["twin"]] = len(twin_row.get("samples") or [])
    return Assessment(
        scenario=name,
        metric=primary,
        control=control,
        aa_ratio=aa_ratio,
        band=band,
        pairs=pairs,
        tiers=stats.tiers_from(pairs, medians, better),
        resolvable=stats.resolvable(pairs, band),
        n=n,
    )


METHOD = (
    "Each scenario measures one implementation twice, under its own label and its twin's "
    "(`<subject>-aa`), interleaved with every other trial: the ratio of the two, which should be "
    "1, is this run's noise, and its 95% CI, made symmetric, is the noise band. Two "
    "implementations are called different only when the percentile-bootstrap CI of the ratio "
    "of their medians ({resamples:,} resamples, each set resampled on its own), at the "
    "Bonferroni-corrected level of its scenario (95% shared by the scenario's pairs, never by "
    "the whole report), lies wholly outside that band; otherwise they tie (`=` in the rank "
    "column). The unit is the trial; with fewer than {min_n} trials a side every comparison is "
    "a tie. The smallest resolvable difference is the band's half-width plus the typical "
    "half-width of the scenario's corrected CIs: a difference of that size is called about "
    "half of the time, larger ones more often."
)
NO_CONTROL = (
    "This run has no A/A control (it was made before the lab measured one): differences are "
    "called when the corrected CI of the ratio of medians excludes 1, a weaker rule: at n = 5 "
    "with 6 implementations it calls a false difference in about 12% of scenarios, not 5% "
    "(docs/decisions.md, issue 13)."
)


def percent(fraction: float) -> str:
    return f"{fraction * 100:.1f}%"


def band_text(band: list[float] | None) -> str:
    """[1/m, m] with three decimals: symmetric on a log scale, so not a ± of one percentage."""
    return f"[{band[0]:.3f}, {band[1]:.3f}]" if band else "—"


def trials_text(n: dict[str, int]) -> str:
    counts = sorted(set(n.values()))
    if not counts:
        return "—"
    return str(counts[0]) if len(counts) == 1 else f"{counts[0]}–{counts[-1]}"


def resolvable_text(a: Assessment) -> str:
    if a.resolvable is not None:
        return f"≈ {percent(a.resolvable)}"
    if not a.pairs:
        return "— (nothing to compare)"
    return f"— (fewer than {stats.MIN_N_FOR_VERDICT} trials)"


def aa_line(a: Assessment) -> str:
    """The A/A control in a phrase: "baseline ÷ baseline-aa 1.004× [0.991, 1.017]", with why
    the subject was chosen when it is not the floor."""
    if not a.control:
        return "no A/A control"
    pair = f"{a.control['subject']} ÷ {a.control['twin']}"
    if a.control.get("chosen_as") not in (None, "baseline"):
        pair += f" ({a.control['chosen_as']})"
    if not a.aa_ratio:
        return f"{pair}: not measured (a failed trial)"
    # Three decimals: the A/A ratio sits near 1, where the report's 3 significant digits
    # would hide the noise it is there to show.
    r = a.aa_ratio
    ci = r.get("ci95")
    interval = f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else ""
    return f"{pair} {r['ratio']:.3f}×{interval}"


def noise_section(assessed: list[Assessment]) -> list[Block]:
    """The workload's "Noise of this run": the method in one paragraph, then one row per
    scenario."""
    if not assessed:
        return []
    controlled = any(a.control for a in assessed)
    text = METHOD.format(resamples=stats.BOOTSTRAP_RESAMPLES, min_n=stats.MIN_N_FOR_VERDICT)
    blocks: list[Block] = [Para(text if controlled else NO_CONTROL)]
    rows = []
    for a in assessed:
        rows.append(
            [
                Cell(a.scenario),
                Cell(aa_line(a), "num" if a.aa_ratio else "muted"),
                Cell(band_text(a.band), "num"),
                Cell(trials_text(a.n), "num"),
                Cell(str(a.comparisons), "num"),
                Cell(resolvable_text(a), "num"),
            ]
        )
    blocks.append(
        Table(
            [
                "scenario",
                "A/A ratio [95% CI]",
                "noise band",
                "n (trials per implementation)",
                "pairs compared",
                "smallest resolvable difference",
            ],
            rows,
            [False, True, True, True, True, True],
            caption="the primary metric of each scenario; the A/A subject is the floor when it "
            "runs in the scenario, else the reference, else the first runnable implementation",
            cls="noise",
        )
    )
    return blocks


def caption_note(a: Assessment) -> str:
    """A few words for a summary table's caption: how its ranks were decided."""
    if a.band:
        rule = f"a tie within this run's noise (A/A band {band_text(a.band)})"
    else:
        why = "the A/A control has no figure here" if a.control else "no A/A control in this run"
        rule = f"a tie: the corrected CI of the ratio contains 1 ({why})"
    return f"= means {rule}; smallest resolvable difference {resolvable_text(a)}"


def assess_workload(
    wl: dict, impls: list[ImplInfo], outcomes: dict, twins: dict[str, Outcome]
) -> dict[str, Assessment]:
    """{scenario: Assessment} for every scenario whose primary metric has results."""
    out = {}
    for scen in wl.get("scenarios", []):
        defs = scenario_metrics(scen, outcomes, impls)
        if scen.get("primary") in defs:
            out[scen["name"]] = assess(scen, defs, impls, outcomes, twins.get(scen["name"]))
    return out
