"""Charts for reports: matplotlib (Agg), returned as SVG text ready to inline in HTML.

Every chart is deterministic (fixed hash salt, no date in the metadata) and self-contained
(text stays text, no fonts or images fetched from anywhere). Colours are fixed per language, so
Rust is the same colour in every chart of every report; the baseline floor and the reference
system have their own. Variants of one language share its colour and differ by line style
(line charts) or hatching (bar charts).

The chart functions take plain data, not results.json: a list of ChartImpl (what to draw, in
order) and estimates (median, lo, hi) in the metric's own unit. Axis ticks and labels are put
in a readable unit (µs or ms, KiB or MiB, k or M ops/s) by the same helpers the report uses
for its tables (`scale`, `fmt_num`, `fmt_value`).
"""

from __future__ import annotations

import hashlib
import io
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import matplotlib

matplotlib.use("Agg")

from matplotlib.figure import Figure  # noqa: E402  (after the backend is chosen)
from matplotlib.ticker import FuncFormatter, LogLocator, MaxNLocator, NullFormatter  # noqa: E402

# One colour per language (Okabe-Ito palette: distinguishable with the common colour-vision
# deficiencies), plus the floor and the reference system.
COLORS: dict[str, str] = {
    "c": "#0072B2",  # blue
    "cpp": "#CC79A7",  # reddish purple
    "rust": "#D55E00",  # vermillion
    "go": "#009E73",  # bluish green
    "python": "#E69F00",  # orange
    "baseline": "#8C8C8C",  # grey: the machine's floor
    "reference": "#222222",  # near black: the real reference system
}
OTHER_COLOR = "#56B4E9"  # sky blue, for a language the palette does not know yet
FAIL_COLOR = "#C62828"
SKIP_COLOR = "#757575"

_LINESTYLES = ["-", "--", ":", "-."]
_HATCHES = ["", "++", "--", "||", "xx"]  # variants (no dots: they bloat the SVG); "////" = noisy
NOISY_HATCH = "////"
_MARKERS = ["o", "s", "^", "D", "v"]

_RC = {
    "svg.fonttype": "none",  # text stays <text>: small, searchable, rendered by the browser
    "svg.hashsalt": "msgbench",  # fixed ids: the same data gives the same bytes
    "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Helvetica Neue", "Helvetica", "Arial"],
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.titleweight": "bold",
    "axes.labelsize": 9,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.edgecolor": "#555555",
    "axes.grid": True,
    "axes.axisbelow": True,
    "grid.color": "#E3E3E3",
    "grid.linewidth": 0.6,
    "xtick.labelsize": 8,
    "ytick.labelsize": 8,
    "legend.fontsize": 8,
    "legend.frameon": False,
}
_METADATA = {"Creator": None, "Date": None, "Format": None, "Type": None}


@dataclass(frozen=True)
class ChartImpl:
    """One implementation as charts see it. role: "" | "baseline" | "reference"."""

    id: str
    language: str
    role: str = ""
    variant: str = ""

    @property
    def color_key(self) -> str:
        return self.role if self.role in ("baseline", "reference") else self.language


Estimate = tuple[float, float | None, float | None]  # (median, ci95 lo, ci95 hi)


def color_for(language: str, role: str = "") -> str:
    """The colour of an implementation: its role's (baseline/reference) or its language's."""
    if role in ("baseline", "reference"):
        return COLORS[role]
    return COLORS.get(language, OTHER_COLOR)


def _style_index(impls: Sequence[ChartImpl]) -> dict[str, int]:
    """0 for the first implementation of each colour, 1 for the next (a variant), ..."""
    seen: dict[str, int] = {}
    out: dict[str, int] = {}
    for imp in impls:
        out[imp.id] = seen.get(imp.color_key, 0)
        seen[imp.color_key] = out[imp.id] + 1
    return out


# --------------------------------------------------------------------------- units and numbers

_TIME = {"ns": 1e-9, "µs": 1e-6, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_TIME_STEPS = [("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)]
_BYTES = {"B": 1, "KiB": 1024, "MiB": 1024**2, "GiB": 1024**3}
_BYTE_STEPS = [("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024), ("B", 1)]
_DEC_BYTES = {"B/s": 1, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9}
_DEC_BYTE_STEPS = [("GB/s", 1e9), ("MB/s", 1e6), ("KB/s", 1e3), ("B/s", 1)]
_SI_STEPS = [("G", 1e9), ("M", 1e6), ("k", 1e3), ("", 1.0)]


def scale(value: float | None, unit: str) -> tuple[float, str]:
    """(factor, unit) that shows `value` in a readable unit: 48.1 µs stays µs, 1234 µs is
    1.23 ms, 2048 KiB is 2 MiB, 1.2e6 ops/s is 1.2 M ops/s. Display value = value * factor.
    Units it does not know are left alone (factor 1)."""
    if value is None or not math.isfinite(value) or value == 0:
        return 1.0, unit
    mag = abs(value)
    if unit in _TIME:
        base = mag * _TIME[unit]
        for name, size in _TIME_STEPS:
            if base >= size * 0.9995:
                return _TIME[unit] / size, name
        return _TIME[unit] / 1e-9, "ns"
    if unit in _BYTES:
        base = mag * _BYTES[unit]
        for name, size in _BYTE_STEPS:
            if base >= size * 0.9995:
                return _BYTES[unit] / size, name
        return float(_BYTES[unit]), "B"
    if unit in _DEC_BYTES:
        base = mag * _DEC_BYTES[unit]
        for name, size in _DEC_BYTE_STEPS:
            if base >= size * 0.9995:
                return _DEC_BYTES[unit] / size, name
        return float(_DEC_BYTES[unit]), "B/s"
    if unit.endswith("/s") and not unit[0].isupper():  # ops/s, msg/s, req/s: SI prefixes
        for prefix, size in _SI_STEPS:
            if mag >= size * 0.9995:
                return 1.0 / size, f"{prefix} {unit}".strip()
    return 1.0, unit


def is_time_unit(unit: str) -> bool:
    return unit in _TIME


def decimals_for(value: float, digits: int = 3) -> int:
    """Decimals that show `value` with `digits` significant digits (0 from 100 up, for 3)."""
    if value == 0 or not math.isfinite(value):
        return 0
    return max(0, digits - 1 - math.floor(math.log10(abs(value))))


def fmt_num(value: float | None, digits: int = 3, decimals: int | None = None) -> str:
    """3 significant digits, never scientific notation: 0.0481, 48.1, 481, 4,810."""
    if value is None:
        return "—"
    if not math.isfinite(value):
        return str(value)
    if decimals is None:
        decimals = decimals_for(value, digits)
        # rounding can add a digit (99.96 -> 100.0): recompute from the rounded value
        rounded = round(value, decimals)
        if rounded != 0:
            decimals = decimals_for(rounded, digits)
    text = f"{value:,.{decimals}f}"
    return "0" if text in ("-0", "-0.0") else text


def fmt_value(value: float | None, unit: str) -> str:
    """A value with its readable unit: '48.1 µs', '1.23 ms', '9.6 MiB'."""
    if value is None:
        return "—"
    factor, shown = scale(value, unit)
    return f"{fmt_num(value * factor)} {shown}".rstrip()


def fmt_interval(lo: float | None, hi: float | None, like: float | None, unit: str) -> str:
    """'[47.2, 49.0]': an interval in the unit and with the decimals used to show `like`."""
    if lo is None or hi is None:
        return "—"
    ref = like if like is not None else hi
    factor, _ = scale(ref, unit)
    dec = decimals_for(round(ref * factor, decimals_for(ref * factor)))
    return f"[{fmt_num(lo * factor, decimals=dec)}, {fmt_num(hi * factor, decimals=dec)}]"


def _trim(number: str) -> str:
    """'30.0' -> '30', '1.50' -> '1.5': tick labels need no trailing zeros."""
    return number.rstrip("0").rstrip(".") if "." in number else number


def _tick_formatter(unit: str) -> FuncFormatter:
    def fmt(v: float, _pos: int) -> str:
        if v <= 0:
            return "0" if v == 0 else ""
        factor, shown = scale(v, unit)
        return f"{_trim(fmt_num(v * factor))} {shown}".rstrip()

    return FuncFormatter(fmt)


# --------------------------------------------------------------------------- svg output


def _svg(fig: Figure) -> str:
    """The figure as an inline-able <svg> element with ids unique to this chart."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata=_METADATA)
    text = buf.getvalue()
    start = text.find("<svg")
    text = text[start:] if start >= 0 else text
    # Several charts live in one HTML document: prefix every id (and every reference to one)
    # with a digest of the chart, so charts never pick up each other's clip paths or markers.
    prefix = "c" + hashlib.sha1(text.encode()).hexdigest()[:8] + "-"
    text = re.sub(r'\bid="([^"]+)"', lambda m: f'id="{prefix}{m.group(1)}"', text)
    text = re.sub(r'href="#([^"]+)"', lambda m: f'href="#{prefix}{m.group(1)}"', text)
    text = re.sub(r"url\(#([^)]+)\)", lambda m: f"url(#{prefix}{m.group(1)})", text)
    return text.strip() + "\n"


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


def _note(fig: Figure, lines: list[str]) -> None:
    """A small grey line under the chart (inside the layout, so it never overlaps the axes)."""
    if lines:
        fig.supxlabel("   ".join(lines), x=0.01, ha="left", fontsize=7.5, color="#555555")


def _missing_note(missing: Mapping[str, str]) -> list[str]:
    if not missing:
        return []
    return ["not shown: " + ", ".join(f"{k} ({v})" for k, v in missing.items())]


def _better_label(label: str, unit: str, better: str) -> str:
    arrow = "lower is better" if better == "lower" else "higher is better"
    return f"{label} ({arrow})"


# --------------------------------------------------------------------------- charts


def latency_chart(
    impls: Sequence[ChartImpl],
    values: Mapping[str, Mapping[str, Estimate]],
    percentiles: Sequence[tuple[str, str]],
    unit: str,
    title: str = "",
    missing: Mapping[str, str] | None = None,
    ylabel: str = "latency (lower is better, log scale)",
    width: float = 6.4,
    rotate_labels: bool = False,
    unit_line: float | None = None,
) -> str:
    """Latency percentiles of one scenario: x = percentile (p50 … max), log y, one line per
    implementation with its 95% CI as error bars. values[impl][metric] = (median, lo, hi);
    percentiles = [(metric, label)], e.g. [("p50", "p50"), ("p999", "p99.9")]. `missing`
    lists implementations with no numbers ({"go": "FAIL"}), named under the chart."""
    missing = dict(missing or {})
    with matplotlib.rc_context(_RC):
        fig = _figure(width, 3.8 if rotate_labels else 3.5)
        ax = fig.add_subplot()
        styles = _style_index(impls)
        xs = list(range(len(percentiles)))
        if unit_line is not None:  # e.g. 1.0 on a ratio chart: "same as the reference"
            ax.axhline(unit_line, color="#888888", linewidth=0.9, linestyle=":")
        drawn = 0
        for imp in impls:
            row = values.get(imp.id)
            if not row:
                continue
            pts = [(x, row.get(key)) for x, (key, _) in zip(xs, percentiles, strict=True)]
            pts = [(x, e) for x, e in pts if e is not None and e[0] is not None and e[0] > 0]
            if not pts:
                continue
            k = styles[imp.id]
            x = [p[0] for p in pts]
            y = [p[1][0] for p in pts]
            lo = [max(0.0, p[1][0] - (p[1][1] if p[1][1] is not None else p[1][0])) for p in pts]
            hi = [max(0.0, (p[1][2] if p[1][2] is not None else p[1][0]) - p[1][0]) for p in pts]
            ax.errorbar(
                x,
                y,
                yerr=[lo, hi],
                color=color_for(imp.language, imp.role),
                linestyle=_LINESTYLES[k % len(_LINESTYLES)],
                marker=_MARKERS[k % len(_MARKERS)],
                markersize=4,
                linewidth=1.6,
                capsize=2.5,
                elinewidth=0.9,
                label=imp.id,
            )
            drawn += 1
        ax.set_xticks(xs, [label for _, label in percentiles])
        if rotate_labels:
            ax.tick_params(axis="x", labelrotation=60, labelsize=7.5)
        ax.set_xlim(-0.3, len(xs) - 0.7)
        if drawn:
            ax.set_yscale("log")
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_minor_formatter(NullFormatter())
            ax.yaxis.set_major_formatter(_tick_formatter(unit))
            fig.legend(loc="outside right upper")
        else:
            ax.set_yticks([])
            ax.text(0.5, 0.5, "no results", transform=ax.transAxes, ha="center", color="#777")
        ax.grid(axis="x", visible=False)
        ax.set_ylabel(ylabel)
        if title:
            ax.set_title(title, loc="left")
        _note(fig, _missing_note(missing))
        return _svg(fig)


def bar_chart(
    impls: Sequence[ChartImpl],
    values: Mapping[str, Estimate | None],
    unit: str,
    label: str,
    better: str,
    title: str = "",
    missing: Mapping[str, str] | None = None,
    noisy: Sequence[str] = (),
    log: bool | None = None,
) -> str:
    """One metric per implementation: bars at the median with 95% CI error bars, in the order
    of `impls`. The baseline (role "baseline") is drawn in its grey and as a dashed line across
    the chart; the reference as a dotted one. Implementations in `missing` ({"go": "FAIL"} or
    "skipped") keep their slot, empty, labelled in red (FAIL) or grey. Noisy ones are hatched.
    log=None picks a log axis when the medians span more than 30x."""
    missing = dict(missing or {})
    noisy_set = set(noisy)
    with matplotlib.rc_context(_RC):
        fig = _figure(6.4, 3.3)
        ax = fig.add_subplot()
        styles = _style_index(impls)
        meds = [
            e[0]
            for i in impls
            if (e := values.get(i.id)) is not None and e[0] is not None and e[0] > 0
        ]
        if log is None:
            log = bool(meds) and max(meds) / min(meds) > 30
        top = max(
            [
                (e[2] if e[2] is not None else e[0])
                for i in impls
                if (e := values.get(i.id)) is not None and e[0] is not None
            ]
            or [1.0]
        )
        floor_y = min(meds) / 3 if (log and meds) else 0.0
        xs = list(range(len(impls)))
        for x, imp in zip(xs, impls, strict=True):
            est = values.get(imp.id)
            if imp.id in missing or est is None or est[0] is None:
                status = missing.get(imp.id, "no data")
                failed = status.upper() == "FAIL"
                ax.axvspan(x - 0.4, x + 0.4, color=FAIL_COLOR if failed else SKIP_COLOR, alpha=0.06)
                ax.text(
                    x,
                    0.04,
                    status.upper() if failed else status,
                    transform=ax.get_xaxis_transform(),
                    ha="center",
                    va="bottom",
                    rotation=90,
                    fontsize=9,
                    fontweight="bold" if failed else "normal",
                    color=FAIL_COLOR if failed else SKIP_COLOR,
                )
                continue
            med, lo, hi = est
            k = styles[imp.id]
            color = color_for(imp.language, imp.role)
            hatch = NOISY_HATCH if imp.id in noisy_set else _HATCHES[k % len(_HATCHES)]
            ax.bar(
                x,
                med - floor_y,
                bottom=floor_y,
                width=0.7,
                color=color,
                alpha=0.9,
                hatch=hatch or None,
                edgecolor="white" if hatch else color,
                linewidth=0,
            )
            if lo is not None and hi is not None:
                ax.errorbar(
                    x,
                    med,
                    yerr=[[max(0.0, med - lo)], [max(0.0, hi - med)]],
                    color="#333333",
                    capsize=3,
                    elinewidth=1,
                    linewidth=0,
                )
            y_text = hi if hi is not None else med
            ax.annotate(
                fmt_value(med, unit) + (" ~" if imp.id in noisy_set else ""),
                (x, y_text),
                xytext=(0, 3),
                textcoords="offset points",
                ha="center",
                va="bottom",
                fontsize=7.5,
                color="#333333",
            )
        for imp in impls:
            est = values.get(imp.id)
            if imp.role not in ("baseline", "reference") or imp.id in missing:
                continue
            if est is None or est[0] is None:
                continue
            ax.axhline(
                est[0],
                color=color_for(imp.language, imp.role),
                linestyle="--" if imp.role == "baseline" else ":",
                linewidth=1.0,
                zorder=0.5,
            )
            ax.annotate(
                imp.role,
                (1.0, est[0]),
                xycoords=("axes fraction", "data"),
                xytext=(2, 0),
                textcoords="offset points",
                va="center",
                ha="left",
                fontsize=7.5,
                color=color_for(imp.language, imp.role),
            )
        ax.set_xticks(xs, [i.id for i in impls])
        ax.set_xlim(-0.6, len(impls) - 0.4)
        ax.grid(axis="x", visible=False)
        if log:
            ax.set_yscale("log")
            ax.set_ylim(floor_y, top * 3)
            ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.yaxis.set_minor_formatter(NullFormatter())
        else:
            ax.set_ylim(0, top * 1.15)
            ax.yaxis.set_major_locator(MaxNLocator(nbins=6))
        ax.yaxis.set_major_formatter(_tick_formatter(unit))
        ax.set_ylabel(_better_label(label, unit, better) + (", log scale" if log else ""))
        if title:
            ax.set_title(title, loc="left")
        notes = []
        if noisy_set & {i.id for i in impls}:
            notes.append("diagonal hatching, ~: noisy (wide CI or high CV)")
        notes.append("error bars: 95% CI of the median")
        _note(fig, notes)
        return _svg(fig)


def _value_axis(ax, unit: str, logy: bool, drawn: int) -> None:
    """The y axis of a chart of medians: log scale with plain ticks, or linear from zero when
    anything was drawn (a ratio read off a cut axis misleads), ticks in the metric's unit."""
    if logy:
        ax.set_yscale("log")
        ax.yaxis.set_minor_formatter(NullFormatter())
    elif drawn:
        ax.set_ylim(bottom=0)
    ax.yaxis.set_major_formatter(_tick_formatter(unit))


def _line_with_band(ax, pts: list[tuple], color: str, k: int, label: str | None) -> None:
    """One implementation's line through (x, median, ci_lo, ci_hi, ...) points, its 95% CI as a
    shaded band, or as a whisker where only one point has an interval (a band needs two)."""
    ax.plot(
        [p[0] for p in pts],
        [p[1] for p in pts],
        color=color,
        linestyle=_LINESTYLES[k % len(_LINESTYLES)],
        marker=_MARKERS[k % len(_MARKERS)],
        markersize=3.5,
        linewidth=1.6,
        label=label,
    )
    band = [p for p in pts if p[2] is not None and p[3] is not None]
    if len(band) > 1:
        ax.fill_between(
            [p[0] for p in band],
            [p[2] for p in band],
            [p[3] for p in band],
            color=color,
            alpha=0.15,
            linewidth=0,
        )
    elif band:
        p = band[0]
        ax.errorbar(p[0], p[1], yerr=[[p[1] - p[2]], [p[3] - p[1]]], color=color, capsize=3)


def sweep_chart(
    impls: Sequence[ChartImpl],
    series: Mapping[str, Sequence[tuple[float, float, float | None, float | None]]],
    xlabel: str,
    unit: str,
    label: str,
    better: str,
    title: str = "",
    logx: bool = False,
    logy: bool = False,
    missing: Mapping[str, str] | None = None,
) -> str:
    """A metric over a swept parameter (message size, clients, rate): x = parameter, y = the
    metric's median with its 95% CI as a band, one line per implementation.
    series[impl] = [(x, median, lo, hi), ...]."""
    missing = dict(missing or {})
    with matplotlib.rc_context(_RC):
        fig = _figure(6.4, 3.5)
        ax = fig.add_subplot()
        styles = _style_index(impls)
        drawn = 0
        for imp in impls:
            pts = sorted(p for p in series.get(imp.id, ()) if p[1] is not None)
            if not pts:
                continue
            k = styles[imp.id]
            color = color_for(imp.language, imp.role)
            _line_with_band(ax, pts, color, k, imp.id)
            drawn += 1
        if logx:
            ax.set_xscale("log")
            # The swept values themselves as ticks (1, 8, 32), not powers of ten.
            xs = sorted({p[0] for pts in series.values() for p in pts if p[1] is not None})
            if xs:
                ax.set_xticks(xs)
                ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{v:g}"))
                ax.xaxis.set_minor_formatter(NullFormatter())
        _value_axis(ax, unit, logy, drawn)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(_better_label(label, unit, better))
        if drawn:
            fig.legend(loc="outside right upper")
        if title:
            ax.set_title(title, loc="left")
        notes = _missing_note(missing)
        notes.append("bands: 95% CI of the median")
        _note(fig, notes)
        return _svg(fig)


def ratio_chart(
    labels: Sequence[str],
    values: Mapping[str, Estimate | None],
    xlabel: str,
    color: str,
    title: str = "",
    missing: Mapping[str, str] | None = None,
    log: bool | None = None,
) -> str:
    """One ratio per row (a scenario), top to bottom in the order of `labels`: a point at the
    ratio with its 95% CI as a horizontal whisker, and a dotted line at 1 (both the same).
    values[label] = (ratio, lo, hi). Rows in `missing` ({"eval-pipe": "FAIL"}) keep their place,
    labelled. log=None picks a log axis when the ratios span more than 4x (on it, 0.5 and 2
    lie equally far from 1)."""
    missing = dict(missing or {})
    with matplotlib.rc_context(_RC):
        fig = _figure(6.4, 1.3 + 0.3 * max(1, len(labels)))
        ax = fig.add_subplot()
        ys = list(range(len(labels)))
        ends = [
            v
            for label in labels
            if (e := values.get(label)) is not None and e[0] is not None
            for v in (e[0], e[1] if e[1] is not None else e[0], e[2] if e[2] is not None else e[0])
            if v > 0
        ]
        lo_x, hi_x = min([*ends, 1.0]), max([*ends, 1.0])
        if log is None:
            log = hi_x / lo_x > 4
        ax.axvline(1.0, color="#555555", linewidth=1.1, linestyle=":", zorder=0.5)
        for y, label in zip(ys, labels, strict=True):
            est = values.get(label)
            if label in missing or est is None or est[0] is None:
                status = missing.get(label, "no data")
                failed = status.upper() == "FAIL"
                ax.text(
                    0.01,
                    y,
                    status.upper() if failed else status,
                    transform=ax.get_yaxis_transform(),
                    va="center",
                    fontsize=8,
                    fontweight="bold" if failed else "normal",
                    color=FAIL_COLOR if failed else SKIP_COLOR,
                )
                continue
            r, lo, hi = est
            if lo is not None and hi is not None:
                ax.errorbar(
                    r,
                    y,
                    xerr=[[max(0.0, r - lo)], [max(0.0, hi - r)]],
                    color=color,
                    capsize=3,
                    elinewidth=1.2,
                    linewidth=0,
                )
            ax.plot([r], [y], marker="o", markersize=5, color=color, linestyle="none")
            ax.annotate(
                f"{fmt_num(r)}×",
                (hi if hi is not None else r, y),
                xytext=(4, 0),
                textcoords="offset points",
                va="center",
                fontsize=7.5,
                color="#333333",
            )
        ax.set_yticks(ys, list(labels))
        ax.set_ylim(len(labels) - 0.5, -0.5)  # the first label on top
        ax.grid(axis="y", visible=False)
        if log:
            ax.set_xscale("log")
            ax.set_xlim(lo_x / 1.25, hi_x * 1.6)
            ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            ax.xaxis.set_minor_formatter(NullFormatter())
        else:
            pad = (hi_x - lo_x) * 0.08 or 0.05
            ax.set_xlim(max(0.0, lo_x - pad), hi_x + pad * 2.5)
            ax.xaxis.set_major_locator(MaxNLocator(nbins=6))
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: f"{_trim(fmt_num(v))}×"))
        ax.set_xlabel(xlabel + (", log scale" if log else ""))
        if title:
            ax.set_title(title, loc="left")
        _note(fig, ["whiskers: 95% CI of the ratio (bootstrap)", "dotted line: 1 (equal)"])
        return _svg(fig)


def history_chart(
    impls: Sequence[ChartImpl],
    labels: Sequence[str],
    series: Mapping[str, Sequence[tuple[int, float, float | None, float | None, object]]],
    unit: str,
    label: str,
    better: str,
    title: str = "",
    marks: Sequence[tuple[str, int]] = (),
) -> str:
    """A metric over runs (`msgbench history`): x = the runs in time order (`labels`, e.g.
    short commit and profile), y = the median with its 95% CI as a band, one line per
    implementation. series[impl] = [(x, median, lo, hi, segment)]: a line joins consecutive
    points of one segment only (runs of one profile on one machine: other runs measured other
    sizes or another machine). marks = [(impl, x)]: the run after a flagged step, ringed."""
    with matplotlib.rc_context(_RC):
        fig = _figure(6.4, 3.6)
        ax = fig.add_subplot()
        styles = _style_index(impls)
        values = [p[1] for pts in series.values() for p in pts if p[1] and p[1] > 0]
        logy = bool(values) and max(values) / min(values) > 20
        drawn = 0
        for imp in impls:
            pts = sorted(series.get(imp.id, ()), key=lambda p: p[0])
            if not pts:
                continue
            k = styles[imp.id]
            color = color_for(imp.language, imp.role)
            runs: list[list[tuple]] = []
            for p in pts:
                if runs and runs[-1][-1][4] == p[4]:
                    runs[-1].append(p)
                else:
                    runs.append([p])
            for i, seg in enumerate(runs):
                _line_with_band(ax, seg, color, k, imp.id if i == 0 else None)
            drawn += 1
        by_x = {(imp, x) for imp, x in marks}
        for imp_id, x in sorted(by_x):
            y = next((p[1] for p in series.get(imp_id, ()) if p[0] == x), None)
            if y is not None:
                ring = {"markerfacecolor": "none", "markeredgecolor": FAIL_COLOR}
                ax.plot([x], [y], "o", markersize=11, markeredgewidth=1.6, **ring)
        ax.set_xticks(range(len(labels)), list(labels), fontsize=7)
        ax.set_xlim(-0.5, max(len(labels) - 0.5, 0.5))
        ax.grid(axis="x", visible=False)
        _value_axis(ax, unit, logy, drawn)
        ax.set_xlabel("run (commit, profile; * = uncommitted changes), oldest first")
        ax.set_ylabel(_better_label(label, unit, better) + (", log scale" if logy else ""))
        if drawn:
            fig.legend(loc="outside right upper")
        if title:
            ax.set_title(title, loc="left")
        notes = ["bands: 95% CI of the median", "lines join runs of one profile on one machine"]
        if by_x:
            notes.append("red ring: a step from the run before")
        _note(fig, notes)
        return _svg(fig)
