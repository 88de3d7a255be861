"""Reports: one run's results.json as report.html (self-contained) and report.md (text).

Both renderings come from one document model (headings, paragraphs, tables, charts) built
from the run's results, so the HTML and the Markdown always carry the same numbers. Every
cell is computed from the input: medians, intervals and flags as the run recorded them; ratios
to the baseline floor (and the reference) bootstrapped from the recorded samples; rank tiers
from the recorded intervals.

Public: render_html(results) -> str, render_md(results) -> str, write(run_dir, results).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from . import charts, stats
from .charts import ChartImpl, fmt_interval, fmt_num, fmt_value

LANGUAGE_ORDER = ("c", "cpp", "rust", "go", "python")
LANGUAGE_NAMES = {"c": "C", "cpp": "C++", "rust": "Rust", "go": "Go", "python": "Python"}
# Metrics that get their own columns in a scenario's summary table (when a scenario has them).
CPU_METRICS = ("cpu_per_op", "cpu_per_req")
RSS_METRICS = ("rss",)
THROUGHPUT_METRICS = ("ops_per_s", "mb_per_s", "rps_geomean")
_PERCENTILE = re.compile(r"^p(\d+)$")

_CI, _CV = stats.NOISY_CI_WIDTH, stats.NOISY_CV
HOW_TO_READ = (
    "Every number is the **median of n measured trials** (a discarded warm-up trial precedes "
    "them), shown with its **95% confidence interval** (percentile bootstrap of the median, "
    "10,000 resamples, seeded: the same samples always give the same report). "
    "**× baseline** is an implementation's median divided by the baseline floor's median "
    "(the least work the protocol allows, in C), with its own bootstrap interval: for a "
    "lower-is-better metric (latency, CPU, memory) a ratio below 1 is better, for a "
    "higher-is-better one (throughput) above 1 is better. "
    "**Rank** tiers group implementations whose intervals overlap the tier's best: "
    "`=2` means “shares tier 2”, and results in one tier are not ranked against each other. "
    f"**noisy** flags a result whose interval is wider than {_CI:.0%} of its median or whose "
    f"coefficient of variation exceeds {_CV:.0%}: re-run it before reading much into it. "
    "Implementations are measured only after passing the conformance suite; **FAIL** means a "
    "failed suite or trial (the reason is shown), skipped means not measured."
)


# --------------------------------------------------------------------------- document model


@dataclass
class Cell:
    text: str
    cls: str = ""  # num, fail, skip, pass, na, muted, impl
    sub: str = ""  # a second, smaller line in HTML (an interval); appended in Markdown
    color: str = ""  # a colour swatch before the text (HTML only)
    span: int = 1


@dataclass
class Table:
    headers: list[str]
    rows: list[list[Cell]]
    numeric: list[bool]
    caption: str = ""
    cls: str = ""


@dataclass
class Heading:
    level: int
    text: str
    anchor: str = ""


@dataclass
class Para:
    text: str  # `code` and **bold** are the only markup
    cls: str = ""


@dataclass
class Charts:
    items: list[tuple[str, str]]  # (caption, svg)


@dataclass
class Messages:
    items: list[tuple[str, str]]  # (title, preformatted message)


@dataclass
class Bullets:
    items: list[str]


@dataclass
class Group:
    items: list[tuple[str, Table]]  # (title, table): side by side in HTML


Block = Heading | Para | Table | Charts | Messages | Bullets | Group


@dataclass
class Doc:
    title: str
    subtitle: str
    blocks: list[Block] = field(default_factory=list)
    toc: list[tuple[int, str, str]] = field(default_factory=list)  # (level, text, anchor)

    def heading(self, level: int, text: str, anchor: str, toc: bool = True) -> None:
        self.blocks.append(Heading(level, text, anchor))
        if toc:
            self.toc.append((level, text, anchor))


# --------------------------------------------------------------------------- reading the input


def _slug(*parts: str) -> str:
    text = "-".join(p for p in parts if p)
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


def _short_metric(key: str, label: str = "") -> str:
    m = _PERCENTILE.match(key)
    if m:
        digits = m.group(1)
        return "p" + digits[:2] + ("." + digits[2:] if len(digits) > 2 else "")
    if key in ("max", "min", "mean"):
        return key
    return label or key


@dataclass
class ImplInfo:
    id: str
    language: str
    variant: str
    summary: str
    traits: dict
    role: str

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


def _outcomes(results: dict, workload: str) -> dict[tuple[str, str], Outcome]:
    out: dict[tuple[str, str], Outcome] = {}
    for row in results.get("results", []):
        if row.get("workload") != workload:
            continue
        key = (row["scenario"], row["impl"])
        o = out.setdefault(key, Outcome())
        status = row.get("status", "ok")
        if _STATUS_WEIGHT.get(status, 2) > _STATUS_WEIGHT.get(o.status, 0):
            o.status, o.reason = status, row.get("reason", "")
        if status == "ok" and row.get("median") is not None:
            o.rows[row["metric"]] = row
    return out


def _impl_infos(results: dict, wl: dict) -> list[ImplInfo]:
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
            )
    languages = {m["impl"]: m.get("language", "") for m in results.get("metrics", [])}
    for section in ("results", "verify", "metrics"):
        for row in results.get(section, []):
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


def _scenario_metrics(scen: dict, outcomes: dict, impls: list[ImplInfo]) -> dict[str, dict]:
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


def _metric_label(defs: dict[str, dict], key: str) -> str:
    return (defs.get(key) or {}).get("label") or key


# --------------------------------------------------------------------------- formatting helpers


def _value_cell(row: dict | None, unit: str, show_ci: bool = True) -> Cell:
    if not row or row.get("median") is None:
        return Cell("—", "num muted")
    med = row["median"]
    ci = row.get("ci95") or [None, None]
    sub = fmt_interval(ci[0], ci[1], med, unit) if show_ci else ""
    text = fmt_value(med, unit) + (" ~" if row.get("noisy") else "")
    return Cell(text, "num noisy" if row.get("noisy") else "num", sub=sub)


def _ratio_text(r: dict | None) -> tuple[str, str]:
    if r is None:
        return "—", ""
    text = f"{fmt_num(r['ratio'])}×"
    if not r.get("ci95"):
        return text, ""  # no samples recorded: no interval to show
    lo, hi = r["ci95"]
    return text, fmt_interval(lo, hi, r["ratio"], "")


def _ratio(row: dict | None, ref_row: dict | None) -> dict | None:
    if not row or not ref_row or row.get("median") is None or ref_row.get("median") is None:
        return None
    if not ref_row["median"]:
        return None
    a, b = row.get("samples") or [], ref_row.get("samples") or []
    if a and b:
        try:
            return stats.ratio(a, b)
        except ValueError:
            pass
    # no samples to resample: the ratio of the medians, without an interval
    return {"ratio": row["median"] / ref_row["median"], "ci95": None}


def _ratio_cell(
    impl: str, anchor: str, label: str, row: dict | None, anchor_row: dict | None
) -> Cell:
    """The ratio column against the floor or the reference; the anchor's own row names itself."""
    if impl == anchor:
        return Cell(label, "num muted")
    text, sub = _ratio_text(_ratio(row, anchor_row))
    return Cell(text, "num", sub=sub)


def _status_cell(o: Outcome | None, span: int = 1) -> Cell:
    if o is None:
        return Cell("not run", "skip", span=span)
    if o.status == "fail":
        return Cell("FAIL", "fail", sub=o.reason, span=span)
    return Cell(o.status, "skip", sub=o.reason, span=span)


def _impl_cell(imp: ImplInfo) -> Cell:
    role = {"baseline": "floor", "reference": "reference"}.get(imp.role, "")
    text = imp.id + (f" ({role})" if role and role != imp.id else "")
    return Cell(text, "impl", color=imp.color)


def _plain(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return " ".join(_plain(v) for v in value) if value else "—"
    if isinstance(value, dict):
        return ", ".join(f"{k}={_plain(v)}" for k, v in value.items())
    if value is None or value == "":
        return "—"
    return str(value)


def _duration(started: str, finished: str) -> str:
    try:
        secs = (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
    except (TypeError, ValueError):
        return ""
    if secs < 0:
        return ""
    h, rem = divmod(int(round(secs)), 3600)
    m, s = divmod(rem, 60)
    return f"{h} h {m} min {s} s" if h else f"{m} min {s} s" if m else f"{s} s"


# --------------------------------------------------------------------------- building the doc


def _summary_table(
    wl: dict, scen: dict, defs: dict, impls: list[ImplInfo], outcomes: dict
) -> Table:
    name, primary = scen["name"], scen["primary"]
    pdef = defs.get(primary, {})
    unit, better = pdef.get("unit", ""), pdef.get("better", "lower")
    baseline, reference = wl.get("baseline") or "", wl.get("reference") or ""
    cpu = next((m for m in CPU_METRICS if m in defs and m != primary), None)
    rss = next((m for m in RSS_METRICS if m in defs and m != primary), None)

    def o_of(imp_id: str) -> Outcome | None:
        return outcomes.get((name, imp_id))

    ok = {i.id: o_of(i.id) for i in impls if o_of(i.id) and o_of(i.id).est(primary)}
    tiers = stats.rank({k: o.rows[primary] for k, o in ok.items()}, better)
    tier_no = stats.tier_of(tiers)
    tier_size = {n: len(t) for t in tiers for n in t}
    base_row = o_of(baseline).rows.get(primary) if baseline and baseline in ok else None
    ref_row = o_of(reference).rows.get(primary) if reference and reference in ok else None

    headers = ["rank", "implementation", "language", f"{_metric_label(defs, primary)}", "n"]
    numeric = [True, False, False, True, True]
    if baseline:
        headers.append("× baseline")
        numeric.append(True)
    if reference:
        headers.append("× reference")
        numeric.append(True)
    if cpu:
        headers.append(_metric_label(defs, cpu))
        numeric.append(True)
    if rss:
        headers.append(_metric_label(defs, rss))
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
            rows.append([Cell("—", "num muted"), _impl_cell(imp), Cell(imp.lang_label)])
            rows[-1].append(_status_cell(o, span=rest))
            continue
        row = o.rows[primary]
        t = tier_no[imp.id]
        cells = [
            Cell(("=" if tier_size[imp.id] > 1 else "") + str(t), "num rank"),
            _impl_cell(imp),
            Cell(imp.lang_label),
            _value_cell(row, unit),
            Cell(str(row.get("n", "")), "num"),
        ]
        if baseline:
            cells.append(_ratio_cell(imp.id, baseline, "floor", row, base_row))
        if reference:
            cells.append(_ratio_cell(imp.id, reference, "reference", row, ref_row))
        if cpu:
            cells.append(_value_cell(o.rows.get(cpu), defs[cpu].get("unit", ""), show_ci=False))
        if rss:
            cells.append(_value_cell(o.rows.get(rss), defs[rss].get("unit", ""), show_ci=False))
        cells.append(Cell("noisy", "noisy") if row.get("noisy") else Cell("", "muted"))
        rows.append(cells)
    arrow = "lower is better" if better == "lower" else "higher is better"
    caption = (
        f"{name}: {_metric_label(defs, primary)} ({unit}, {arrow}), median and 95% CI; "
        "ratios are median ÷ the floor's median, with their 95% CI"
    )
    return Table(headers, rows, numeric, caption=caption, cls="summary")


def _full_table(scen: dict, defs: dict, impls: list[ImplInfo], outcomes: dict) -> Table:
    keys = [k for k in defs if not defs[k].get("family")]  # families: _family_tables
    headers = ["implementation"] + [_short_metric(k, _metric_label(defs, k)) for k in keys]
    rows = []
    for imp in impls:
        o = outcomes.get((scen["name"], imp.id))
        if o is None:
            continue
        cells = [_impl_cell(imp)]
        if o.status != "ok":
            cells.append(_status_cell(o, span=len(keys)))
        else:
            for k in keys:
                cells.append(_value_cell(o.rows.get(k), defs[k].get("unit", "")))
        rows.append(cells)
    caption = f"{scen['name']}: every metric, median and [95% CI] (~ = noisy)"
    return Table(headers, rows, [False] + [True] * len(keys), caption=caption, cls="full")


def _family_tables(
    wl: dict, scen: dict, defs: dict, impls: list[ImplInfo], outcomes: dict
) -> list[Table]:
    """One table per metric family ("rps.*": one metric per redis-benchmark test): a row per
    member, a column per implementation, each value with its ratio to the reference (or, in a
    workload without one, the floor) measured in the same run."""
    families: dict[str, list[str]] = {}
    for k, d in defs.items():
        if d.get("family"):
            families.setdefault(d["family"], []).append(k)
    anchor = wl.get("reference") or wl.get("baseline") or ""
    present = [i for i in impls if (scen["name"], i.id) in outcomes]
    tables = []
    for family, members in families.items():
        prefix = family.partition("*")[0]
        first = defs[members[0]]
        unit = first.get("unit", "")
        rows = []
        for k in members:
            anchor_o = outcomes.get((scen["name"], anchor))
            anchor_row = anchor_o.rows.get(k) if anchor_o and anchor_o.status == "ok" else None
            cells = [Cell(k[len(prefix) :])]
            for imp in present:
                o = outcomes[(scen["name"], imp.id)]
                row = o.rows.get(k) if o.status == "ok" else None
                cell = _value_cell(row, unit, show_ci=False)
                if row and imp.id != anchor:
                    cell.sub = _ratio_text(_ratio(row, anchor_row))[0]
                elif o.status != "ok":
                    cell = Cell(o.status if o.status != "fail" else "FAIL", "skip")
                cells.append(cell)
            rows.append(cells)
        label = first.get("label", family).replace(members[0][len(prefix) :], "").strip()
        arrow = "lower is better" if first.get("better") == "lower" else "higher is better"
        caption = (
            f"{scen['name']}: {label} per test ({unit}, {arrow}), median of the trials; "
            f"under each value its ratio to {anchor or 'nothing'} in the same run"
        )
        tables.append(
            Table(
                ["test"] + [i.id for i in present],
                rows,
                [False] + [True] * len(present),
                caption=caption,
                cls="full",
            )  # fmt: skip
        )
    return tables


def _family_charts(
    wl: dict, scen: dict, defs: dict, present: list[ImplInfo], outcomes: dict, missing: dict
) -> list[tuple[str, str]]:
    """For the first family of the scenario whose metrics are throughputs (requests/s per
    test): every implementation's ratio to the reference per test, with its 95% CI."""
    anchor = wl.get("reference") or wl.get("baseline") or ""
    members = [k for k, d in defs.items() if d.get("family") and d.get("better") == "higher"]
    if not members or not anchor:
        return []
    family = defs[members[0]]["family"]
    members = [k for k in members if defs[k]["family"] == family]
    prefix = family.partition("*")[0]
    name = scen["name"]
    anchor_o = outcomes.get((name, anchor))
    if not anchor_o or anchor_o.status != "ok":
        return []
    values: dict[str, dict] = {}
    for imp in present:
        o = outcomes[(name, imp.id)]
        if imp.id == anchor or o.status != "ok":
            continue
        row: dict = {}
        for k in members:
            r = _ratio(o.rows.get(k), anchor_o.rows.get(k))
            if r is not None:
                ci = r.get("ci95") or [None, None]
                row[k] = (r["ratio"], ci[0], ci[1])
        values[imp.id] = row
    chart_impls = [i.chart for i in present if i.id in values]
    svg = charts.latency_chart(
        chart_impls,
        values,
        [(k, k[len(prefix) :]) for k in members],
        "",
        title=f"{name}: requests/s per test ÷ {anchor}",
        missing={k: v for k, v in missing.items() if k != anchor},
        ylabel=f"× {anchor} (higher is better, log scale)",
        width=8.0,
        rotate_labels=True,
        unit_line=1.0,
    )
    return [(f"per-test ratio to {anchor} in the same run, 95% CI", svg)]


def _scenario_charts(
    wl: dict, scen: dict, defs: dict, impls: list[ImplInfo], outcomes: dict
) -> list[tuple[str, str]]:
    name, primary = scen["name"], scen["primary"]
    present = [i for i in impls if (name, i.id) in outcomes]
    chart_impls = [i.chart for i in present]
    missing = {
        i.id: ("FAIL" if outcomes[(name, i.id)].status == "fail" else outcomes[(name, i.id)].status)
        for i in present
        if outcomes[(name, i.id)].status != "ok"
    }
    out: list[tuple[str, str]] = []

    def bar(metric: str) -> None:
        d = defs[metric]
        values = {i.id: outcomes[(name, i.id)].est(metric) for i in present}
        noisy = [
            i.id for i in present if (outcomes[(name, i.id)].rows.get(metric) or {}).get("noisy")
        ]
        label = _metric_label(defs, metric)
        svg = charts.bar_chart(
            chart_impls,
            values,
            d.get("unit", ""),
            label,
            d.get("better", "lower"),
            title=f"{name}: {label}",
            missing=missing,
            noisy=noisy,
        )
        out.append((f"{label} per implementation, 95% CI", svg))

    bar(primary)
    out.extend(_family_charts(wl, scen, defs, present, outcomes, missing))
    lat = [
        k
        for k in defs
        if (_PERCENTILE.match(k) or k == "max") and charts.is_time_unit(defs[k].get("unit", ""))
    ]
    if lat:
        unit = defs[lat[0]].get("unit", "")
        values = {
            i.id: {k: e for k in lat if (e := outcomes[(name, i.id)].est(k)) is not None}
            for i in present
        }
        svg = charts.latency_chart(
            chart_impls,
            values,
            [(k, _short_metric(k)) for k in lat],
            unit,
            title=f"{name}: latency percentiles",
            missing=missing,
        )
        out.append(("latency percentiles (log scale), 95% CI", svg))
    for metric in [m for m in defs if m in THROUGHPUT_METRICS + CPU_METRICS and m != primary]:
        bar(metric)
    return out


def _conformance(wl: dict, impls: list[ImplInfo], results: dict) -> tuple[Table, list]:
    name = wl["name"]
    verify = {v["impl"]: v for v in results.get("verify", []) if v.get("workload") == name}
    cols = [i for i in impls if i.id in verify]
    tests: list[str] = []
    for imp in cols:
        for t in (verify[imp.id].get("tests") or {}).keys():
            if t not in tests:
                tests.append(t)
        for f in verify[imp.id].get("failures") or []:
            if f.get("test") and f["test"] not in tests:
                tests.append(f["test"])
    headers = ["test"] + [i.id for i in cols]
    rows: list[list[Cell]] = []
    totals = [Cell("passed / failed / n/a", "muted")]
    for imp in cols:
        v = verify[imp.id]
        failed = v.get("failed", 0)
        cls = "num fail" if failed else "num pass"
        totals.append(Cell(f"{v.get('passed', 0)} / {failed} / {v.get('skipped', 0)}", cls))
    rows.append(totals)
    for t in tests:
        cells = [Cell(t, "test")]
        for imp in cols:
            v = verify[imp.id]
            state = (v.get("tests") or {}).get(t)
            if state is None and any(f.get("test") == t for f in v.get("failures") or []):
                state = "fail"
            state = (state or "").lower()
            if state == "pass":
                cells.append(Cell("pass", "pass"))
            elif state in ("fail", "failed", "error"):
                cells.append(Cell("FAIL", "fail"))
            elif state in ("n/a", "na", "skip", "skipped"):
                cells.append(Cell("n/a" if state in ("n/a", "na") else "skip", "na"))
            else:
                cells.append(Cell(state or "—", "muted"))
        rows.append(cells)
    failures = [
        (f"{imp.id}: {f.get('test', '?')}", f.get("message", ""))
        for imp in cols
        for f in verify[imp.id].get("failures") or []
    ]
    table = Table(headers, rows, [False] * len(headers), cls="matrix")
    not_verified = [i.id for i in impls if i.id not in verify]
    if not_verified:
        table.caption = "not verified in this run: " + ", ".join(not_verified)
    return table, failures


_CLIENT_PARAM = re.compile(r"(?:^|[-\[])client=(?P<client>[^\]-]+)")


def _interop_matrix(wl: dict, impls: list[ImplInfo], results: dict) -> Table | None:
    """Conformance tests parametrised with `client=<id>` (an implementation's own client
    against the server under test) folded into a client × server matrix: pass when every such
    test of that pair passed, FAIL when any failed."""
    name = wl["name"]
    verify = {v["impl"]: v for v in results.get("verify", []) if v.get("workload") == name}
    pairs: dict[tuple[str, str], list[str]] = {}
    for server, v in verify.items():
        states = dict(v.get("tests") or {})
        for f in v.get("failures") or []:
            states[f.get("test", "")] = "FAIL"
        for test, state in states.items():
            m = _CLIENT_PARAM.search(test)
            if m:
                pairs.setdefault((m["client"], server), []).append(state)
    if not pairs:
        return None
    servers = [i for i in impls if i.id in verify]
    clients = [i for i in impls if any(c == i.id for c, _ in pairs)]
    rows = []
    for client in clients:
        cells = [Cell(f"{client.id} client", "impl", color=client.color)]
        for server in servers:
            states = pairs.get((client.id, server.id), [])
            if not states:
                cells.append(Cell("—", "muted"))
            elif any(s == "FAIL" for s in states):
                cells.append(Cell("FAIL", "fail"))
            elif all(s == "pass" for s in states):
                cells.append(Cell("pass", "pass", sub=f"{len(states)} tests"))
            else:
                cells.append(Cell("skip", "na"))
        rows.append(cells)
    return Table(
        ["client ↓ / server →"] + [i.id for i in servers],
        rows,
        [False] * (len(servers) + 1),
        caption="interoperability: each implementation's own client program against each "
        "server (every conformance test of that pair)",
        cls="matrix",
    )


def _code_table(wl: dict, impls: list[ImplInfo], results: dict, outcomes: dict) -> Table | None:
    name = wl["name"]
    metrics = {m["impl"]: m for m in results.get("metrics", []) if m.get("workload") == name}
    if not metrics:
        return None
    scens = wl.get("scenarios", [])
    headers = ["implementation", "files", "nloc", "functions", "CCN mean", "CCN max"]
    defs = {s["name"]: _scenario_metrics(s, outcomes, impls) for s in scens}
    for s in scens:
        label = (defs[s["name"]].get(s["primary"]) or {}).get("label", "")
        headers.append(f"{s['name']} {_short_metric(s['primary'], label)}")
    rows = []
    for imp in impls:
        m = metrics.get(imp.id)
        cells = [_impl_cell(imp)]
        for k in ("files", "nloc", "functions", "ccn_mean", "ccn_max"):
            v = (m or {}).get(k)
            cells.append(Cell(f"{v:,}" if isinstance(v, int) else fmt_num(v), "num"))
        for s in scens:
            o = outcomes.get((s["name"], imp.id))
            if o is None:
                cells.append(Cell("—", "num muted"))
            elif o.status != "ok":
                failed = o.status == "fail"
                cells.append(Cell("FAIL" if failed else o.status, "fail" if failed else "skip"))
            else:
                row = o.rows.get(s["primary"])
                unit = (defs[s["name"]].get(s["primary"]) or {}).get("unit", "")
                cells.append(_value_cell(row, unit, show_ci=False))
        rows.append(cells)
    caption = "code size and complexity (lizard) beside each scenario's primary metric (median)"
    return Table(headers, rows, [False] + [True] * (len(headers) - 1), caption=caption, cls="code")


def _side_by_side(
    wl: dict, impls: list[ImplInfo], outcomes: dict, with_charts: bool
) -> list[Block]:
    """workload.toml [[side_by_side]]: the same metric of two scenarios that measure the same
    thing two ways (e.g. the lab's driver vs a real browser), per implementation, same run."""
    blocks: list[Block] = []
    scen_by_name = {sc["name"]: sc for sc in wl.get("scenarios", [])}
    for pair in wl.get("side_by_side") or []:
        a, b = pair["scenarios"]
        metric = pair["metric"]
        if a not in scen_by_name or b not in scen_by_name:
            continue
        unit = scen_by_name[a].get("metrics", {}).get(metric, {}).get("unit", "")
        better = scen_by_name[a].get("metrics", {}).get(metric, {}).get("better", "lower")
        label = _short_metric(metric)
        blocks.append(Heading(4, pair.get("title", f"{a} beside {b}")))
        if pair.get("description"):
            blocks.append(Para(pair["description"], "muted"))
        rows = []
        for imp in impls:
            oa, ob = outcomes.get((a, imp.id)), outcomes.get((b, imp.id))
            if oa is None and ob is None:
                continue
            ra = oa.rows.get(metric) if oa and oa.status == "ok" else None
            rb = ob.rows.get(metric) if ob and ob.status == "ok" else None
            cells = [_impl_cell(imp)]
            cells.append(_value_cell(ra, unit) if ra else _status_cell(oa))
            cells.append(_value_cell(rb, unit) if rb else _status_cell(ob))
            r = _ratio(rb, ra)
            text, sub = _ratio_text(r)
            cells.append(Cell(text, "num", sub=sub))
            diff = (rb["median"] - ra["median"]) if ra and rb else None
            cells.append(Cell(fmt_value(diff, unit) if diff is not None else "—", "num"))
            rows.append(cells)
        blocks.append(
            Table(
                ["implementation", f"{a} {label}", f"{b} {label}", f"{b} ÷ {a}", "difference"],
                rows,
                [False, True, True, True, True],
                caption=f"{label}: median [95% CI] of each scenario in this run; the ratio's CI "
                "by bootstrap over both sets of trials",
            )
        )
        if with_charts:
            items = []
            for scen in (a, b):
                present = [i for i in impls if (scen, i.id) in outcomes]
                values = {i.id: outcomes[(scen, i.id)].est(metric) for i in present}
                missing = {
                    i.id: outcomes[(scen, i.id)].status
                    for i in present
                    if outcomes[(scen, i.id)].status != "ok"
                }
                svg = charts.bar_chart(
                    [i.chart for i in present], values, unit, label, better,
                    title=f"{scen}: {label}", missing=missing,
                )  # fmt: skip
                items.append((f"{scen}: {label} per implementation, 95% CI", svg))
            blocks.append(Charts(items))
    return blocks


def _targets_table(wl: dict, outcomes: dict) -> Table | None:
    """The workload's declared targets (workload.toml [[targets]]): each a bound on the ratio
    implementation ÷ baseline (or ÷ reference, `against = "reference"`) for one metric,
    checked against this run's measurements."""
    targets = wl.get("targets") or []
    if not targets:
        return None
    rows: list[list[Cell]] = []
    for t in targets:
        scen, metric = t["scenario"], t["metric"]
        against = t.get("against", "baseline")
        baseline = wl.get(against) or ""
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
                Cell(_short_metric(metric)),
                Cell(impl, "impl"),
                Cell(f"{bound} {baseline}", "num"),
            ]
            if o is None or (scen, baseline) not in outcomes:
                rows.append([*head, Cell("—", "num muted"), Cell("not measured", "skip")])
                continue
            if o.status != "ok" or base is None or base.status != "ok":
                rows.append([*head, Cell("—", "num muted"), _status_cell(o)])
                continue
            r = _ratio(o.rows.get(metric), base.rows.get(metric))
            if r is None:
                rows.append([*head, Cell("—", "num muted"), Cell("no data", "skip")])
                continue
            text, sub = _ratio_text(r)
            ratio = r["ratio"]
            met = (hi_bound is None or ratio <= hi_bound) and (
                lo_bound is None or ratio >= lo_bound
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


def _traits_table(impls: list[ImplInfo]) -> Table | None:
    keys: list[str] = []
    for imp in impls:
        for k in imp.traits:
            if k not in keys:
                keys.append(k)
    if not keys and not any(i.summary for i in impls):
        return None
    headers = ["implementation", "summary"] + keys
    rows = []
    for imp in impls:
        cells = [_impl_cell(imp), Cell(imp.summary or "—")]
        for k in keys:
            v = imp.traits.get(k)
            cells.append(Cell(", ".join(map(str, v)) if isinstance(v, list) and v else _plain(v)))
        rows.append(cells)
    return Table(headers, rows, [False] * len(headers), cls="traits")


def _environment(doc: Doc, run: dict) -> None:
    doc.heading(2, "Environment", "environment")
    dirty = " (dirty: uncommitted changes)" if run.get("dirty") else ""
    started, finished = run.get("started", ""), run.get("finished", "")
    dur = _duration(started, finished)
    kv = [
        ("run id", run.get("id", "")),
        ("command", run.get("command") or "—"),
        ("profile", run.get("profile", "")),
        ("commit", (run.get("commit") or "—") + dirty),
        ("started", started or "—"),
        ("finished", (finished or "—") + (f" ({dur})" if dur else "")),
        ("interrupted", "yes: results are partial" if run.get("interrupted") else "no"),
    ]
    placement = run.get("placement") or {}
    if placement:
        kv.append(("placement", ", ".join(f"{k}: {_plain(v)}" for k, v in placement.items())))
    group = [("Run", _kv_table(kv, "run"))]
    machine = run.get("machine") or {}
    if machine:
        items = [(_MACHINE_KEYS.get(k, k.replace("_", " ")), _plain(v)) for k, v in machine.items()]
        group.append(("Machine", _kv_table(items, "machine")))
    tools = run.get("toolchains") or {}
    if tools:
        group.append(("Toolchains", _kv_table([(k, _plain(v)) for k, v in tools.items()], "tools")))
    doc.blocks.append(Group(group))
    flags = run.get("flags") or {}
    if flags:
        doc.heading(3, "Release flags", "flags", toc=False)
        rows = []
        for lang, table in flags.items():
            text = (
                " · ".join(f"{k}={_plain(v)}" for k, v in table.items())
                if isinstance(table, dict)
                else _plain(table)
            )
            rows.append([Cell(LANGUAGE_NAMES.get(lang, lang)), Cell(text, "code")])
        doc.blocks.append(
            Table(["language", "release flags (profiles.toml)"], rows, [False, False])
        )


_MACHINE_KEYS = {"cpu_model": "CPU", "memory_gib": "memory (GiB)", "os": "OS"}


def _kv_table(items: Iterable[tuple[str, str]], cls: str) -> Table:
    rows = [[Cell(k, "key"), Cell(str(v), "code" if k == "command" else "")] for k, v in items]
    return Table(["", ""], rows, [False, False], cls="kv " + cls)


def build(results: dict, with_charts: bool = True) -> Doc:
    """The report as a document model (what render_html and render_md both print).
    with_charts=False leaves the charts out (Markdown shows none; they cost most of the time)."""
    run = results.get("run") or {}
    commit = (run.get("commit") or "")[:12]
    machine = run.get("machine") or {}
    bits = [
        f"profile {run['profile']}" if run.get("profile") else "",
        f"commit {commit}" + (" (dirty)" if run.get("dirty") else "") if commit else "",
        f"{machine.get('cpu_model', '')}, {machine.get('cores', '?')} cores" if machine else "",
        run.get("started", ""),
    ]
    doc = Doc(f"msgbench report — {run.get('id', 'run')}", " · ".join(b for b in bits if b))
    if run.get("interrupted"):
        doc.blocks.append(
            Para("**This run was interrupted**: it holds only what was measured before.", "warn")
        )
    if run.get("command"):
        doc.blocks.append(Para(f"`{run['command']}`", "command"))
    doc.heading(2, "How to read this report", "how-to-read")
    doc.blocks.append(Para(HOW_TO_READ))

    for wl in results.get("workloads", []):
        name = wl["name"]
        impls = _impl_infos(results, wl)
        outcomes = _outcomes(results, name)
        doc.heading(2, f"{name}" + (f" — {wl['title']}" if wl.get("title") else ""), _slug(name))
        ref = wl.get("reference") or ""
        doc.blocks.append(
            Para(
                f"Floor: `{wl.get('baseline') or '—'}`"
                + (f" · reference: `{ref}`" if ref else " · no reference system")
                + f" · {len(impls)} implementations · "
                + f"{len(wl.get('scenarios', []))} scenarios",
                "muted",
            )
        )
        for scen in wl.get("scenarios", []):
            sname = scen["name"]
            defs = _scenario_metrics(scen, outcomes, impls)
            doc.heading(3, f"{sname}", _slug(name, sname))
            if scen.get("description"):
                doc.blocks.append(Para(scen["description"], "muted"))
            if scen.get("primary") not in defs:
                doc.blocks.append(Para(f"primary metric `{scen.get('primary')}` has no results"))
                continue
            doc.blocks.append(_summary_table(wl, scen, defs, impls, outcomes))
            if with_charts:
                doc.blocks.append(Charts(_scenario_charts(wl, scen, defs, impls, outcomes)))
            doc.blocks.append(_full_table(scen, defs, impls, outcomes))
            doc.blocks.extend(_family_tables(wl, scen, defs, impls, outcomes))

        beside = _side_by_side(wl, impls, outcomes, with_charts)
        if beside:
            doc.heading(3, "Side by side", _slug(name, "side-by-side"))
            doc.blocks.extend(beside)

        targets = _targets_table(wl, outcomes)
        if targets:
            doc.heading(3, "Targets", _slug(name, "targets"))
            doc.blocks.append(targets)

        doc.heading(3, "Conformance", _slug(name, "conformance"))
        matrix, failures = _conformance(wl, impls, results)
        interop = _interop_matrix(wl, impls, results)
        if interop:
            doc.blocks.append(interop)
        if len(matrix.headers) > 1:
            doc.blocks.append(matrix)
            if failures:
                doc.blocks.append(Para("**Failing tests**"))
                doc.blocks.append(Messages(failures))
        else:
            doc.blocks.append(Para("No conformance results in this run.", "muted"))

        code = _code_table(wl, impls, results, outcomes)
        doc.heading(3, "Code size beside speed", _slug(name, "code"))
        doc.blocks.append(code or Para("No code metrics in this run.", "muted"))

        traits = _traits_table(impls)
        if traits:
            doc.heading(3, "Implementations", _slug(name, "impls"))
            doc.blocks.append(traits)

        notes = [n for n in results.get("notes", []) if n.get("workload") == name]
        if notes:
            doc.heading(3, "Notes", _slug(name, "notes"))
            items = []
            for n in notes:
                where = " · ".join(x for x in (n.get("scenario"), n.get("impl")) if x)
                items.append((f"**{where}**: " if where else "") + n.get("text", ""))
            doc.blocks.append(Bullets(items))

    orphans = [
        n
        for n in results.get("notes", [])
        if n.get("workload") not in {w["name"] for w in results.get("workloads", [])}
    ]
    if orphans:
        doc.heading(2, "Notes", "notes")
        doc.blocks.append(Bullets([n.get("text", "") for n in orphans]))
    _environment(doc, run)
    return doc


# --------------------------------------------------------------------------- HTML

CSS = """
:root { color-scheme: light; --fg:#1d1f23; --muted:#6a7079; --line:#e3e6ea; --bg:#fff;
  --soft:#f6f7f9; --fail:#c62828; --pass:#2e7d32; --warn:#a15c00; --accent:#0b5cad; }
* { box-sizing: border-box; }
body { margin:0; background:var(--bg); color:var(--fg);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; }
main { max-width: 1320px; margin: 0 auto; padding: 28px 32px 64px; }
h1 { font-size: 26px; margin: 0 0 4px; letter-spacing: -0.01em; }
h2 { font-size: 21px; margin: 44px 0 10px; padding-bottom: 6px;
  border-bottom: 2px solid var(--fg); }
h3 { font-size: 17px; margin: 32px 0 6px; }
h4 { font-size: 15px; margin: 22px 0 4px; }
h2 a.anchor, h3 a.anchor, h4 a.anchor { color: inherit; text-decoration: none; }
p { margin: 6px 0 12px; max-width: 980px; }
.subtitle { color: var(--muted); margin: 0 0 14px; }
.muted { color: var(--muted); }
.warn { background:#fff4e0; border-left: 4px solid var(--warn); padding: 8px 12px; }
.command code { font-size: 13px; }
code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; font-size: 12.5px;
  background: var(--soft); padding: 1px 4px; border-radius: 3px; }
nav.toc { background: var(--soft); border: 1px solid var(--line); border-radius: 6px;
  padding: 10px 16px; margin: 16px 0; font-size: 13px; columns: 3; column-gap: 28px; }
nav.toc a { color: var(--accent); text-decoration: none; display: block; break-inside: avoid; }
nav.toc a.l3 { padding-left: 14px; }
nav.toc a:hover { text-decoration: underline; }
.tablewrap { overflow-x: auto; margin: 8px 0 18px; }
table { border-collapse: collapse; font-size: 13px; }
caption { caption-side: bottom; text-align: left; color: var(--muted); font-size: 12px;
  padding-top: 6px; }
th, td { padding: 5px 10px; border-bottom: 1px solid var(--line); vertical-align: top;
  text-align: left; }
thead th { border-bottom: 2px solid #c9ced6; font-weight: 600; white-space: nowrap;
  background: var(--soft); position: sticky; top: 0; }
tbody tr:hover { background: #fafbfc; }
th.num, td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td .sub { display: block; color: var(--muted); font-size: 11.5px; white-space: nowrap; }
td.fail, td.fail .sub { color: var(--fail); }
td.fail { font-weight: 700; }
td.fail .sub { font-weight: 400; white-space: normal; }
td.skip { color: var(--muted); font-style: italic; }
td.pass { color: var(--pass); }
td.na { color: #9aa0a8; }
td.noisy { color: var(--warn); }
td.rank { font-weight: 700; }
td.impl { white-space: nowrap; font-weight: 600; }
td.test, td.code { font-family: ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace;
  font-size: 12px; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px;
  margin-right: 7px; vertical-align: baseline; }
table.summary td.noisy:not(.num) { font-size: 11px; font-weight: 600; text-transform: uppercase; }
table.matrix td { text-align: center; padding: 3px 10px; }
table.matrix td.test { text-align: left; }
table.matrix thead th { text-align: center; }
table.matrix tbody tr:first-child td { border-bottom: 2px solid #c9ced6; font-weight: 600; }
table.kv thead { display: none; }
table.kv td.key { color: var(--muted); padding-right: 24px; white-space: nowrap; }
table.kv td { border-bottom: 1px solid var(--soft); }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(560px, 1fr));
  gap: 14px; margin: 10px 0 18px; }
figure { margin: 0; border: 1px solid var(--line); border-radius: 6px; padding: 8px;
  background: #fff; }
figure svg { width: 100%; height: auto; display: block; }
figcaption { color: var(--muted); font-size: 12px; padding: 2px 4px 0; }
pre { background: #fdf3f3; border-left: 3px solid var(--fail); padding: 8px 12px;
  overflow-x: auto; font-size: 12px; white-space: pre-wrap; margin: 4px 0 12px; }
.msgtitle { font-weight: 600; color: var(--fail); margin-top: 8px; }
ul.notes { padding-left: 20px; } ul.notes li { margin: 4px 0; }
.group { display: flex; flex-wrap: wrap; gap: 12px 40px; align-items: flex-start; }
.group h4 { margin: 8px 0 2px; font-size: 14px; }
.group .tablewrap { margin-top: 0; }
@media print { nav.toc { display: none; } .charts { display: block; }
  figure { break-inside: avoid; margin-bottom: 10px; } thead th { position: static; } }
"""


def _inline_html(text: str) -> str:
    """Escape, then turn `code` and **bold** into tags (the only markup paragraphs use)."""
    out = html.escape(text, quote=False)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)


def _html_cell(c: Cell, numeric: bool, tag: str = "td") -> str:
    classes = " ".join(x for x in (c.cls, "num" if numeric and "num" not in c.cls else "") if x)
    if c.cls and ("fail" in c.cls or "skip" in c.cls) and c.span > 1:
        classes = c.cls  # a status spanning numeric columns reads left-aligned
    attrs = f' class="{classes}"' if classes else ""
    if c.span > 1:
        attrs += f' colspan="{c.span}"'
    swatch = f'<span class="swatch" style="background:{c.color}"></span>' if c.color else ""
    body = swatch + html.escape(c.text)
    if c.sub:
        body += f'<span class="sub">{html.escape(c.sub)}</span>'
    return f"<{tag}{attrs}>{body}</{tag}>"


def _html_table(t: Table) -> str:
    cls = f' class="{t.cls}"' if t.cls else ""
    head = "".join(
        f"<th{' class=num' if num else ''}>{html.escape(h)}</th>"
        for h, num in zip(t.headers, t.numeric, strict=True)
    ).replace("<th class=num>", '<th class="num">')
    body = []
    for row in t.rows:
        cells, col = [], 0
        for c in row:
            num = t.numeric[col] if col < len(t.numeric) else False
            cells.append(_html_cell(c, num and c.span == 1))
            col += c.span
        body.append("<tr>" + "".join(cells) + "</tr>")
    caption = f"<caption>{html.escape(t.caption)}</caption>" if t.caption else ""
    return (
        f'<div class="tablewrap"><table{cls}>{caption}<thead><tr>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table></div>"
    )


def render_html(results: dict) -> str:
    """The whole report as one self-contained HTML page (inline CSS and SVG, no scripts)."""
    doc = build(results)
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{html.escape(doc.title)}</title>",
        f"<style>{CSS}</style></head><body><main>",
        f"<h1>{html.escape(doc.title)}</h1>",
        f'<p class="subtitle">{html.escape(doc.subtitle)}</p>',
    ]
    toc = "".join(
        f'<a class="l{lvl}" href="#{a}">{html.escape(text)}</a>' for lvl, text, a in doc.toc
    )
    parts.append(f'<nav class="toc">{toc}</nav>')
    for b in doc.blocks:
        if isinstance(b, Heading):
            aid = f' id="{b.anchor}"' if b.anchor else ""
            parts.append(
                f'<h{b.level}{aid}><a class="anchor" href="#{b.anchor}">'
                f"{html.escape(b.text)}</a></h{b.level}>"
            )
        elif isinstance(b, Para):
            cls = f' class="{b.cls}"' if b.cls else ""
            parts.append(f"<p{cls}>{_inline_html(b.text)}</p>")
        elif isinstance(b, Table):
            parts.append(_html_table(b))
        elif isinstance(b, Charts):
            figs = "".join(
                f"<figure>{svg}<figcaption>{html.escape(cap)}</figcaption></figure>"
                for cap, svg in b.items
            )
            parts.append(f'<div class="charts">{figs}</div>')
        elif isinstance(b, Messages):
            for title, msg in b.items:
                parts.append(f'<div class="msgtitle">{html.escape(title)}</div>')
                parts.append(f"<pre>{html.escape(msg)}</pre>")
        elif isinstance(b, Bullets):
            items = "".join(f"<li>{_inline_html(i)}</li>" for i in b.items)
            parts.append(f'<ul class="notes">{items}</ul>')
        elif isinstance(b, Group):
            cards = "".join(
                f"<section><h4>{html.escape(title)}</h4>{_html_table(t)}</section>"
                for title, t in b.items
            )
            parts.append(f'<div class="group">{cards}</div>')
    parts.append("</main></body></html>")
    return "\n".join(parts) + "\n"


# --------------------------------------------------------------------------- Markdown


def _md_escape(text: str) -> str:
    """Table-cell safe: pipes escaped, one line, and `<` escaped so that text such as
    BufWriter<StdoutLock> is not taken for an HTML tag by GitHub."""
    for a, b in (("\\", "\\\\"), ("|", "\\|"), ("<", "\\<"), ("\n", " ")):
        text = text.replace(a, b)
    return text


def _md_cell(c: Cell) -> str:
    text = c.text
    if c.cls and "fail" in c.cls.split() and text == "FAIL":
        text = "**FAIL**"
    if c.sub:
        text = f"{text} {c.sub}" if c.sub.startswith("[") else f"{text}: {c.sub}"
    return _md_escape(text)


def _md_table(t: Table) -> str:
    width = len(t.headers)
    lines = []
    headers = t.headers if any(t.headers) else [" "] * width
    lines.append("| " + " | ".join(_md_escape(h) or " " for h in headers) + " |")
    lines.append("|" + "|".join("---:" if n else "---" for n in t.numeric) + "|")
    for row in t.rows:
        cells: list[str] = []
        for c in row:
            cells.append(_md_cell(c))
            cells.extend([""] * (c.span - 1))
        cells += [""] * (width - len(cells))
        lines.append("| " + " | ".join(cells) + " |")
    out = "\n".join(lines)
    if t.caption:
        out += f"\n\n_{_md_escape(t.caption)}_"
    return out


def render_md(results: dict) -> str:
    """The same report as Markdown text tables (charts are in report.html)."""
    doc = build(results, with_charts=False)
    parts = [f"# {doc.title}", "", doc.subtitle, "", "_Charts: see report.html._", ""]
    for b in doc.blocks:
        if isinstance(b, Heading):
            parts += ["#" * b.level + " " + b.text, ""]
        elif isinstance(b, Para):
            parts += [b.text, ""]
        elif isinstance(b, Table):
            parts += [_md_table(b), ""]
        elif isinstance(b, Messages):
            for title, msg in b.items:
                parts += [f"**{title}**", "", "```", msg, "```", ""]
        elif isinstance(b, Bullets):
            parts += [f"- {i}" for i in b.items] + [""]
        elif isinstance(b, Group):
            for title, t in b.items:
                parts += [f"**{title}**", "", _md_table(t), ""]
    return "\n".join(parts).rstrip() + "\n"


def write(run_dir: Path, results: dict) -> tuple[Path, Path]:
    """Write report.html and report.md into run_dir; returns their paths."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    html_path, md_path = run_dir / "report.html", run_dir / "report.md"
    html_path.write_text(render_html(results), encoding="utf-8")
    md_path.write_text(render_md(results), encoding="utf-8")
    return html_path, md_path
