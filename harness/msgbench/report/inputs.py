"""Reading results.json: implementations in report order, per-scenario outcomes, metric defs."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .. import charts
from ..charts import ChartImpl

LANGUAGE_ORDER = ("c", "cpp", "rust", "go", "python")
LANGUAGE_NAMES = {"c": "C", "cpp": "C++", "rust": "Rust", "go": "Go", "python": "Python"}


def slug(*parts: str) -> str:
    text = "-".join(p for p in parts if p)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


@dataclass
class ImplInfo:
    id: str
    language: str
    variant: str
    summary: str
    traits: dict
    role: str
    absent: str = ""  # impl.toml `absent`: why this language has no implementation to measure

    @property
    def chart(self) -> ChartImpl:
        return ChartImpl(self.id, self.language, self.role, self.variant)

    @property
    def color(self) -> str:
        return charts.color_for(self.language, self.role)

    @property
    def lang_label(self) -> str:
        name = LANGUAGE_NAMES.get(self.language, self.language or "?")
        return f"{name} / {self.variant}" if self.variant else name


@dataclass
class Outcome:
    """One implementation in one scenario: status and its ok metric rows."""

    status: str = "ok"
    reason: str = ""
    rows: dict[str, dict] = field(default_factory=dict)

    def est(self, metric: str) -> tuple[float, float | None, float | None] | None:
        row = self.rows.get(metric)
        if self.status != "ok" or not row or row.get("median") is None:
            return None
        ci = row.get("ci95") or [None, None]
        return (row["median"], ci[0], ci[1])


_STATUS_WEIGHT = {"ok": 0, "skipped": 1, "fail": 2}


def outcomes(results: dict, workload: str, twins: bool = False) -> dict[tuple[str, str], Outcome]:
    """{(scenario, impl): Outcome}; the worst status of an implementation's rows wins. The A/A
    twin's rows are left out (it is not an implementation), or with twins=True they are the
    only ones kept (sections.noise reads them)."""
    out: dict[tuple[str, str], Outcome] = {}
    for row in results.get("results", []):
        if row.get("workload") != workload or bool(row.get("aa_of")) != twins:
            continue
        key = (row["scenario"], row["impl"])
        o = out.setdefault(key, Outcome())
        status = row.get("status", "ok")
        if _STATUS_WEIGHT.get(status, 2) > _STATUS_WEIGHT.get(o.status, 0):
            o.status, o.reason = status, row.get("reason", "")
        if status == "ok" and row.get("median") is not None:
            o.rows[row["metric"]] = row
    return out


def twin_outcomes(results: dict, workload: str) -> dict[str, Outcome]:
    """{scenario: the A/A twin's Outcome} (its rows carry "aa_of": the subject)."""
    return {s: o for (s, _), o in outcomes(results, workload, twins=True).items()}


def impl_infos(results: dict, wl: dict) -> list[ImplInfo]:
    """Every implementation the run mentions for the workload: floor, reference, then by
    language."""
    name = wl["name"]
    baseline, reference = wl.get("baseline") or "", wl.get("reference") or ""
    infos: dict[str, ImplInfo] = {}
    for imp in results.get("impls", []):
        if imp.get("workload") == name:
            infos[imp["impl"]] = ImplInfo(
                imp["impl"],
                imp.get("language", ""),
                imp.get("variant", ""),
                imp.get("summary", ""),
                imp.get("traits") or {},
                "",
                imp.get("absent") or "",
            )
    languages = {m["impl"]: m.get("language", "") for m in results.get("metrics", [])}
    for section in ("results", "verify", "metrics"):
        for row in results.get(section, []):
            if row.get("aa_of"):  # the A/A twin: the subject measured again, not an impl
                continue
            if row.get("workload") == name and row["impl"] not in infos:
                infos[row["impl"]] = ImplInfo(
                    row["impl"], languages.get(row["impl"], ""), "", "", {}, ""
                )
    for info in infos.values():
        info.role = (
            "baseline"
            if info.id == baseline
            else "reference"
            if reference and info.id == reference
            else ""
        )

    def order(i: ImplInfo) -> tuple:
        role = {"baseline": 0, "reference": 1}.get(i.role, 2)
        lang = LANGUAGE_ORDER.index(i.language) if i.language in LANGUAGE_ORDER else 99
        return (role, lang, i.language, i.variant != "", i.id)

    return sorted(infos.values(), key=order)


def scenario_metrics(scen: dict, outcomes: dict, impls: list[ImplInfo]) -> dict[str, dict]:
    """The scenario's metric definitions, in order; completed from the rows where the
    workload does not say (a list of names instead of a table, a missing unit)."""
    declared = scen.get("metrics") or {}
    if not isinstance(declared, dict):
        declared = {k: {} for k in declared}
    defs: dict[str, dict] = {k: dict(v or {}) for k, v in declared.items()}
    for imp in impls:
        o = outcomes.get((scen["name"], imp.id))
        if not o:
            continue
        for key, row in o.rows.items():
            d = defs.setdefault(key, {})
            d.setdefault("unit", row.get("unit", ""))
            d.setdefault("better", row.get("better", "lower"))
    for d in defs.values():
        d.setdefault("unit", "")
        d.setdefault("better", "lower")
    return defs


def metric_label(defs: dict[str, dict], key: str) -> str:
    return (defs.get(key) or {}).get("label") or key
