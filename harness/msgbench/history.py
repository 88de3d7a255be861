"""A workload's results over runs (`msgbench history`): one chart per scenario, and the steps.

The runs are every run of the local store and of published/ that measured the workload, oldest
first. A chart shows, per implementation, the median of one metric in each run with its 95% CI
as a band; lines join only runs that can be compared (one profile, one machine: another profile
measures other sizes, another machine other hardware).

A step is the change of one implementation's result between a run and the latest earlier run of
the same profile on the same machine. It is flagged when stats.difference calls it better or
worse: the bootstrap CI of the ratio of medians (Bonferroni-corrected over the implementations
stepping between the same two runs) lies wholly outside 1 and outside the wider of the two
runs' A/A noise bands for that scenario (runs without an A/A control have none).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from . import paths, stats, store
from .charts import ChartImpl, fmt_interval, fmt_num, fmt_value, history_chart
from .comparison import band_between
from .report import html
from .report.model import Cell, Charts, Doc, Para, Table


class HistoryError(Exception):
    """Nothing to draw: no run measured the workload (or the scenario, or the metric)."""


@dataclass
class Run:
    doc: dict
    published: bool

    @property
    def header(self) -> dict:
        return self.doc.get("run") or {}

    @property
    def id(self) -> str:
        return self.header.get("id", "")

    @property
    def label(self) -> str:
        commit = (self.header.get("commit") or "?")[:7]
        return f"{commit}{'*' if self.header.get('dirty') else ''}\n{self.header.get('profile')}"


def same_machine(a: dict, b: dict) -> bool:
    """Two runs' machines (run.machine) are one: the fingerprint ids when both runs have one
    (issue 13), else the CPU model, core count and memory (runs stored before fingerprints)."""
    ma, mb = a.get("machine") or {}, b.get("machine") or {}
    if ma.get("fingerprint_id") and mb.get("fingerprint_id"):
        return ma["fingerprint_id"] == mb["fingerprint_id"]
    keys = ("cpu_model", "cores", "memory_gib")
    return all(ma.get(k) is not None and ma.get(k) == mb.get(k) for k in keys)


def comparable(a: dict, b: dict) -> bool:
    """Steps are read only between runs (run headers) of one profile on one machine."""
    return a.get("profile") == b.get("profile") and same_machine(a, b)


@dataclass
class Step:
    scenario: str
    impl: str
    metric: str
    before: str  # run id
    after: str  # run id
    diff: dict  # stats.difference(after, before)

    @property
    def flagged(self) -> bool:
        return self.diff["verdict"] != "tie"


@dataclass
class ScenarioHistory:
    name: str
    metric: str
    label: str
    unit: str
    better: str
    runs: list[Run]  # the runs with a result of this scenario and metric, oldest first
    points: dict[str, list[tuple[int, dict]]]  # impl -> [(index in runs, result row)]
    steps: list[Step] = field(default_factory=list)


@dataclass
class Page:
    workload: str
    runs: list[Run]
    impls: list[ChartImpl]
    scenarios: list[ScenarioHistory]

    @property
    def steps(self) -> list[Step]:
        return [s for h in self.scenarios for s in h.steps]


def stored_runs() -> list[Run]:
    """Every run of the local store and of published/, oldest first."""
    return [Run(store.load(i), store.is_published(i)) for i in store.run_ids()]


def _scenario_entries(run: Run, workload: str) -> dict[str, dict]:
    for w in run.doc.get("workloads", []):
        if w.get("name") == workload:
            return {s["name"]: s for s in w.get("scenarios", [])}
    return {}


def _result_rows(run: Run, workload: str, scenario: str, metric: str) -> dict[str, dict]:
    return {
        r["impl"]: r
        for r in run.doc.get("results", [])
        if (r["workload"], r["scenario"], r["metric"]) == (workload, scenario, metric)
        and r.get("status") == "ok"
        and r.get("median") is not None
        and not r.get("aa_of")  # the A/A twin is a control, not an implementation
    }


def _chart_impls(runs: list[Run], workload: str) -> list[ChartImpl]:
    """Every implementation the runs measured, as the latest run describes it."""
    found: dict[str, ChartImpl] = {}
    for run in reversed(runs):
        entry = next((w for w in run.doc.get("workloads", []) if w["name"] == workload), {})
        roles = {entry.get("baseline"): "baseline", entry.get("reference"): "reference"}
        for i in run.doc.get("impls", []):
            if i.get("workload") == workload and i["impl"] not in found:
                found[i["impl"]] = ChartImpl(
                    i["impl"],
                    i.get("language", ""),
                    roles.get(i["impl"], ""),
                    i.get("variant") or "",
                )
    return sorted(found.values(), key=lambda c: (c.role != "baseline", c.role != "reference"))


def _steps(h: ScenarioHistory, workload: str) -> list[Step]:
    pairs = []  # (impl, before index, after index)
    for impl, pts in h.points.items():
        for k, (i, _) in enumerate(pts):
            after = h.runs[i].header
            earlier = [j for j, _ in pts[:k] if comparable(h.runs[j].header, after)]
            if earlier:
                pairs.append((impl, earlier[-1], i))
    asked: dict[tuple[int, int], int] = {}
    for _, j, i in pairs:
        asked[(j, i)] = asked.get((j, i), 0) + 1
    steps = []
    for impl, j, i in pairs:
        rows = dict(h.points[impl])
        before, after = rows[j], rows[i]
        if not before.get("samples") or not after.get("samples"):
            continue
        a, b = h.runs[j], h.runs[i]
        band = band_between(a.doc, b.doc, workload, h.name, h.metric)
        try:
            diff = stats.difference(
                after["samples"], before["samples"], h.better, comparisons=asked[(j, i)], band=band
            )
        except ValueError:
            continue  # a zero median: no ratio
        steps.append(Step(h.name, impl, h.metric, a.id, b.id, diff))
    return steps


def build(
    workload: str,
    scenario: str | None = None,
    impls: tuple[str, ...] = (),
    metric: str | None = None,
    runs: list[Run] | None = None,
) -> Page:
    """The history of a workload (one scenario when given; some implementations when given;
    another metric than each scenario's primary when given). runs: default stored_runs()."""
    runs = [r for r in (stored_runs() if runs is None else runs) if _scenario_entries(r, workload)]
    if not runs:
        raise HistoryError(f"no stored or published run measured workload '{workload}'")
    names: dict[str, None] = {}
    for run in reversed(runs):  # the latest run's scenario order first
        names.update(dict.fromkeys(_scenario_entries(run, workload)))
    if scenario is not None:
        if scenario not in names:
            raise HistoryError(
                f"no run measured scenario '{scenario}' of {workload} (measured: "
                f"{', '.join(names)})"
            )
        names = {scenario: None}
    histories = []
    for name in names:
        entries = [(r, e) for r in runs if (e := _scenario_entries(r, workload).get(name))]
        latest = entries[-1][1]
        m = metric or latest.get("primary")
        d = next((e["metrics"][m] for _, e in reversed(entries) if m in e.get("metrics", {})), {})
        h = ScenarioHistory(name, m, d.get("label", m), d.get("unit", ""), "", [], {})
        for run, _ in entries:
            rows = _result_rows(run, workload, name, m)
            rows = {i: r for i, r in rows.items() if not impls or i in impls}
            if not rows:
                continue
            h.runs.append(run)
            for impl, row in rows.items():
                h.points.setdefault(impl, []).append((len(h.runs) - 1, row))
                h.unit, h.better = h.unit or row.get("unit", ""), row.get("better", "lower")
        if h.points:
            h.steps = _steps(h, workload)
            histories.append(h)
    if not histories:
        what = f"metric '{metric}'" if metric else "results"
        raise HistoryError(f"no run has {what} for {workload} with these options")
    chosen = [c for c in _chart_impls(runs, workload) if any(c.id in h.points for h in histories)]
    return Page(workload, runs, chosen, histories)


# ------------------------------------------------------------------------------ the page

HOW_TO_READ = (
    "Each chart shows one scenario's metric in every stored or published run that measured it, "
    "oldest first, labelled by commit (`*`: the tree had uncommitted changes) and profile: the "
    "median of the run's trials with its 95% CI as a band. Lines join only runs of one profile "
    "on one machine; profiles measure different sizes, so only those points compare. A "
    "**step** sets a run against the latest earlier run of the same profile on the same "
    "machine (the machine fingerprint, or CPU model, cores and memory for runs stored before "
    "fingerprints): the ratio of medians later/earlier with its bootstrap CI, corrected for "
    "the implementations compared between the two runs. It is flagged (a red ring) only when "
    "the whole CI lies outside 1 and outside the wider of the two runs' A/A noise bands."
)


def _steps_table(h: ScenarioHistory) -> Table:
    rows = []
    for s in h.steps:
        d = s.diff
        band = fmt_interval(*d["band"], 1.0, "") if d.get("band") else "—"
        verdict = d["verdict"]
        rows.append(
            [
                Cell(s.impl, "impl"),
                Cell(s.before, "code"),
                Cell(s.after, "code"),
                Cell(f"{fmt_num(d['ratio'])}×", "num", sub=fmt_interval(*d["ci"], d["ratio"], "")),
                Cell(band, "num muted"),
                Cell(verdict, {"worse": "fail", "better": "pass"}.get(verdict, "")),
            ]
        )
    return Table(
        ["impl", "from run", "to run", "to/from (CI)", "A/A band", "verdict"],
        rows,
        [False, False, False, True, True, False],
        caption=f"steps of {h.label} ({h.better} is better)",
    )


def _chart(page: Page, h: ScenarioHistory) -> str:
    series = {}
    marks = [
        (s.impl, next(i for i, r in enumerate(h.runs) if r.id == s.after))
        for s in h.steps
        if s.flagged
    ]
    for impl, pts in h.points.items():
        seg, out, prev = 0, [], None
        for i, row in pts:
            if prev is not None and not comparable(h.runs[prev].header, h.runs[i].header):
                seg += 1
            lo, hi = row.get("ci95") or (None, None)
            out.append((i, row["median"], lo, hi, seg))
            prev = i
        series[impl] = out
    impls = [c for c in page.impls if c.id in h.points]
    title = f"{page.workload} / {h.name}: {h.label}"
    return history_chart(
        impls, [r.label for r in h.runs], series, h.unit, h.label, h.better, title, marks
    )


def document(page: Page, with_charts: bool = True) -> Doc:
    doc = Doc(
        f"msgbench history — {page.workload}",
        f"{len(page.runs)} runs (local store and published/) · "
        f"{len(page.scenarios)} scenarios · {sum(s.flagged for s in page.steps)} flagged steps",
    )
    doc.blocks.append(Para(f"`./msgbench history {page.workload}`", "command"))
    doc.heading(2, "How to read this page", "how-to-read")
    doc.blocks.append(Para(HOW_TO_READ))
    for h in page.scenarios:
        doc.heading(2, h.name, f"history-{h.name}")
        if with_charts:
            doc.blocks.append(Charts([(f"{h.label} over runs", _chart(page, h))]))
        if h.steps:
            doc.blocks.append(_steps_table(h))
        else:
            doc.blocks.append(Para("No two runs of one profile on one machine: no step.", "muted"))
        latest = {impl: pts[-1][1] for impl, pts in h.points.items()}
        doc.blocks.append(
            Para(
                "Latest: "
                + ", ".join(f"{i} {fmt_value(r['median'], h.unit)}" for i, r in latest.items()),
                "muted",
            )
        )
    doc.heading(2, "Runs", "runs")
    rows = []
    for r in page.runs:
        run = r.header
        machine = run.get("machine") or {}
        where = machine.get("fingerprint_id") or (
            f"{machine.get('cpu_model', '?')}, {machine.get('cores', '?')} cores, "
            f"{machine.get('memory_gib', '?')} GiB"
        )
        rows.append(
            [
                Cell(r.id, "code"),
                Cell(run.get("started", "")),
                Cell((run.get("commit") or "")[:12] + (" (dirty)" if run.get("dirty") else "")),
                Cell(run.get("profile", "")),
                Cell(where),
                Cell("published/" if r.published else "results/ (local)"),
            ]
        )
    doc.blocks.append(
        Table(["run", "started", "commit", "profile", "machine", "stored in"], rows, [False] * 6)
    )
    return doc


def page_path(workload: str) -> Path:
    return paths.RESULTS / "history" / f"{workload}.html"


def write(page: Page, with_charts: bool = True) -> Path:
    """results/history/<workload>.html: one self-contained page (inline CSS and SVG)."""
    path = page_path(page.workload)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(html.render(document(page, with_charts)), encoding="utf-8")
    return path
