"""Two runs compared result by result (`msgbench compare A B`), and the regression gate
(`--fail-if-worse PCT`) that `git bisect run` can use.

For every (workload, scenario, implementation, metric) measured in both runs, B is set against A
with stats.difference: the ratio of medians B/A with its bootstrap CI, Bonferroni-corrected over
the implementations compared in that scenario (one question: "did this scenario change?"), and
read against the runs' own noise: the wider of the two runs' A/A bands for the scenario (runs
stored before the A/A control have none; then the CI alone decides).
"""

from __future__ import annotations

from dataclasses import dataclass

from . import stats

# Exit statuses of `compare --fail-if-worse` (docs/decisions.md, "Issue 13: compare"):
OK, REGRESSED, CANNOT_COMPARE = 0, 1, 125  # 125 is `git bisect run`'s "skip this commit"


@dataclass
class Row:
    workload: str
    scenario: str
    impl: str
    metric: str
    unit: str
    better: str
    a: dict  # A's result row
    b: dict  # B's result row
    diff: dict | None  # stats.difference(B, A); None when it cannot be computed
    why: str = ""  # why diff is None

    @property
    def key(self) -> tuple[str, str, str, str]:
        return (self.workload, self.scenario, self.impl, self.metric)

    def worse_by(self) -> float:
        """How much worse B is than A, as a fraction (0.2 = 20% worse; negative = better):
        B/A - 1 for lower-is-better metrics, 1 - B/A for higher-is-better ones."""
        if self.diff is None:
            return 0.0
        r = self.diff["ratio"]
        return r - 1.0 if self.better == "lower" else 1.0 - r


def scenario_entry(doc: dict, workload: str, scenario: str) -> dict:
    for w in doc.get("workloads", []):
        if w.get("name") == workload:
            for s in w.get("scenarios", []):
                if s.get("name") == scenario:
                    return s
    return {}


def aa_band(doc: dict, workload: str, scenario: str, metric: str) -> list[float] | None:
    """The run's A/A noise band of a scenario's metric (None: no A/A control in that run)."""
    aa = scenario_entry(doc, workload, scenario).get("aa") or {}
    r = (aa.get("ratio") or {}).get(metric) or {}
    ci = r.get("ci95")
    return list(stats.aa_band(ci)) if ci else None


def wider(*bands: list[float] | None) -> list[float] | None:
    """The widest of some noise bands (None ones ignored; None when all are)."""
    known = [b for b in bands if b]
    return max(known, key=lambda b: b[1] - b[0]) if known else None


def band_between(a: dict, b: dict, workload: str, scenario: str, metric: str):
    return wider(aa_band(a, workload, scenario, metric), aa_band(b, workload, scenario, metric))


def _usable(r: dict) -> bool:
    return r.get("status") == "ok" and bool(r.get("samples")) and not r.get("aa_of")


def compare(
    a: dict,
    b: dict,
    *,
    metrics: tuple[str, ...] = (),
    workloads: tuple[str, ...] = (),
    scenarios: tuple[str, ...] = (),
    impls: tuple[str, ...] = (),
) -> list[Row]:
    """B against A for every result present (and measured) in both. metrics: names, or
    ("all",); default: each scenario's primary metric. A/A twins are controls, not compared."""
    in_a = {(r["workload"], r["scenario"], r["impl"], r["metric"]): r for r in a["results"]}
    pairs = []
    for r in b["results"]:
        key = (r["workload"], r["scenario"], r["impl"], r["metric"])
        ra = in_a.get(key)
        if ra is None or not (_usable(r) and _usable(ra)):
            continue
        if workloads and r["workload"] not in workloads:
            continue
        if scenarios and r["scenario"] not in scenarios:
            continue
        if impls and r["impl"] not in impls:
            continue
        if "all" not in metrics:
            primary = scenario_entry(b, r["workload"], r["scenario"]).get("primary")
            if r["metric"] not in (metrics or (primary,)):
                continue
        pairs.append((ra, r))
    # One question per scenario and metric: its implementations share the correction.
    asked: dict[tuple[str, str, str], int] = {}
    for _, r in pairs:
        q = (r["workload"], r["scenario"], r["metric"])
        asked[q] = asked.get(q, 0) + 1
    rows = []
    for ra, r in pairs:
        w, s, m = r["workload"], r["scenario"], r["metric"]
        diff, why = None, ""
        try:
            diff = stats.difference(
                r["samples"],
                ra["samples"],
                r["better"],
                comparisons=asked[(w, s, m)],
                band=band_between(a, b, w, s, m),
            )
        except ValueError as e:
            why = str(e)
        rows.append(Row(w, s, r["impl"], m, r.get("unit", ""), r["better"], ra, r, diff, why))
    return rows


def regressions(rows: list[Row], pct: float) -> list[Row]:
    """Results significantly worse in B (verdict 'worse') by more than pct percent."""
    return [r for r in rows if r.diff and r.diff["verdict"] == "worse" and r.worse_by() > pct / 100]
