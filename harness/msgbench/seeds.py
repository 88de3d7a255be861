"""The seeds as data (seeds/*.toml, seeds/README.md): load them, check them against the
workloads, and say which scenarios rerun them.

A seed file quotes what a published comparison said and names the scenarios that redo its
experiment; the report's Seeds section (report/sections/seeds.py) computes each claim's verdict
from a run. This module only reads and checks: a claim that names a scenario, a metric or an
implementation the lab does not have is a ManifestError, caught by the tests before any run.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path

from . import paths, registry
from .registry import ManifestError

KINDS = ("ratio", "faster", "order", "similar", "bound")
# The fields each claim kind needs besides says/kind/metric and its scenario(s).
_KIND_FIELDS = {
    "ratio": ("impl", "against", "seed"),
    "faster": ("faster", "slower"),
    "order": ("order",),
    "similar": ("impl", "against", "band", "band_from"),
    "bound": ("impl", "against"),
}
_EXPERIMENT_FIELDS = ("key", "title", "question", "workload", "scenarios", "machine", "method",
                      "rerun", "table")  # fmt: skip


@dataclass
class Seed:
    id: str
    data: dict  # the file as written (same_as seeds carry no experiments)
    path: Path

    @property
    def experiments(self) -> list[dict]:
        return self.data.get("experiments", [])


def load(folder: Path | None = None, checked: bool = True) -> list[Seed]:
    """Every seed file of `folder` (default seeds/), in id order, checked against the
    workloads (checked=False only reads them: a run document carries the seeds it measured
    whatever else the registry holds; `msgbench seeds` and the tests check them)."""
    folder = folder or paths.SEEDS
    seeds = []
    for path in sorted(folder.glob("*.toml")):
        try:
            data = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as e:
            raise ManifestError(f"{paths.rel(path)}: {e}") from None
        seeds.append(Seed(str(data.get("id", "")), data, path))
    if checked:
        check(seeds)
    return seeds


def check(seeds: list[Seed]) -> None:
    ids = [s.id for s in seeds]
    for s in seeds:
        where = paths.rel(s.path)
        for key in ("id", "title", "author", "venue", "text"):
            if not s.data.get(key):
                raise ManifestError(f"{where}: `{key}` is missing")
        if ids.count(s.id) > 1:
            raise ManifestError(f"{where}: seed id {s.id} appears twice")
        if "same_as" in s.data:
            if s.data["same_as"] not in ids or s.experiments:
                raise ManifestError(
                    f"{where}: same_as must name another seed file and carry no experiments"
                )
            continue
        if not s.experiments:
            raise ManifestError(f"{where}: no [[experiments]]")
        keys = [e.get("key") for e in s.experiments]
        for e in s.experiments:
            _check_experiment(e, f"{where}: experiment {e.get('key', '?')}")
            if keys.count(e["key"]) > 1:
                raise ManifestError(f"{where}: experiment key {e['key']} appears twice")


def _check_experiment(e: dict, where: str) -> None:
    for key in _EXPERIMENT_FIELDS:
        if not e.get(key):
            raise ManifestError(f"{where}: `{key}` is missing")
    try:
        w = registry.workload(e["workload"])
    except ManifestError as err:
        raise ManifestError(f"{where}: {err}") from None
    unknown = [n for n in e["scenarios"] if n not in w.scenarios]
    if unknown:
        raise ManifestError(f"{where}: {e['workload']} has no scenario {unknown[0]}")

    def scenario(name: str, what: str) -> registry.Scenario:
        if name not in e["scenarios"]:
            raise ManifestError(f"{where}: {what} names {name!r}, not in the experiment")
        return w.scenarios[name]

    def metric(s: registry.Scenario, name: str, what: str) -> None:
        if name not in s.metrics and not registry.family_member(name, s.metrics):
            raise ManifestError(f"{where}: {what}: scenario {s.name} has no metric {name}")

    def impl(name: str, what: str) -> None:
        if name not in w.impls:
            raise ManifestError(f"{where}: {what}: {e['workload']} has no implementation {name}")

    table = e["table"]
    for s_name in [table["scenario"]] if "scenario" in table else table.get("scenarios", []):
        s = scenario(s_name, "the table")
        for m in table.get("metrics") or [table.get("metric", "")]:
            metric(s, m, "the table")
    for i in [table.get("anchor", ""), *table.get("impls", [])]:
        impl(i, "the table")
    for system in e.get("systems", []):
        if (
            not system.get("name")
            or not (system.get("impl") and system.get("ran"))
            and not (system.get("why"))
        ):
            raise ManifestError(f"{where}: a system needs a name and impl + ran, or why")
        if system.get("impl"):
            impl(system["impl"], f"system {system['name']}")
    for f in e.get("figures", []):
        for key in ("what", "value", "unit", "quote", "where"):
            if key not in f:
                raise ManifestError(f"{where}: a figure lacks `{key}`")
    for c in e.get("claims", []):
        what = f"claim {c.get('says', '?')!r}"
        if c.get("kind") not in KINDS:
            raise ManifestError(f"{where}: {what}: kind must be one of {', '.join(KINDS)}")
        for key in ("says", "metric", *_KIND_FIELDS[c["kind"]]):
            if key not in c:
                raise ManifestError(f"{where}: {what}: `{key}` is missing")
        if c["kind"] == "bound" and "min" not in c and "max" not in c:
            raise ManifestError(f"{where}: {what}: a bound needs min or max")
        for s_name in claim_scenarios(c):
            metric(scenario(s_name, what), c["metric"], what)
        for key in ("impl", "against", "faster", "slower"):
            if key in c:
                impl(c[key], what)
        for i in c.get("order", []):
            impl(i, what)
    for r in e.get("reasons", []):
        if not r.get("says"):
            raise ManifestError(f"{where}: a reason lacks `says`")
        for ev in r.get("evidence", []):
            s = scenario(ev.get("scenario", ""), "evidence")
            for m in (ev.get("metric", ""), ev.get("other_metric") or ev.get("metric", "")):
                metric(s, m, "evidence")
            impl(ev.get("impl", ""), "evidence")
            if not ev.get("spread"):
                impl(ev.get("against", ""), "evidence")


def claim_scenarios(c: dict) -> list[str]:
    """The scenarios a claim is judged in: `scenario`, or each of `scenarios`."""
    return [c["scenario"]] if "scenario" in c else list(c.get("scenarios", []))


def needed(seeds: list[Seed]) -> dict[str, list[str]]:
    """{workload: scenarios} that rerun every experiment, in the files' order."""
    out: dict[str, list[str]] = {}
    for s in seeds:
        for e in s.experiments:
            names = out.setdefault(e["workload"], [])
            names += [n for n in e["scenarios"] if n not in names]
    return out


def for_run(seeds: list[Seed], ran: set[tuple[str, str]]) -> list[dict]:
    """The seeds a run document carries (its `seeds`): every seed with an experiment any of
    whose scenarios the run measured, as written, plus the captures that are `same_as` it."""
    out = []
    for s in seeds:
        pairs = {(e.get("workload"), n) for e in s.experiments for n in e.get("scenarios", [])}
        if pairs & ran:
            out.append(s.data)
    kept = {d["id"] for d in out}
    out += [s.data for s in seeds if s.data.get("same_as") in kept]
    return sorted(out, key=lambda d: d["id"])
