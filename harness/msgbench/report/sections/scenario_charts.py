"""A scenario's charts, chosen by metric role: the primary metric, the throughput family's
ratios, the latency percentiles (ordered by percentile), then every other throughput and CPU
metric."""

from __future__ import annotations

from ... import charts
from ..inputs import ImplInfo, metric_label
from ..roles import clock_caption, latency_percentiles, short_label, with_role
from . import families


def scenario_charts(
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
        label = metric_label(defs, metric)
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
        clocks = clock_caption(scen, defs, [metric])
        caption = f"{label} per implementation, 95% CI" + (f"; {clocks}" if clocks else "")
        out.append((caption, svg))

    bar(primary)
    out.extend(families.charts_of(wl, scen, defs, present, outcomes, missing))
    lat = latency_percentiles(defs)
    if lat:
        unit = defs[lat[0]].get("unit", "")
        values = {
            i.id: {k: e for k in lat if (e := outcomes[(name, i.id)].est(k)) is not None}
            for i in present
        }
        svg = charts.latency_chart(
            chart_impls,
            values,
            [(k, short_label(k, defs[k])) for k in lat],
            unit,
            title=f"{name}: latency percentiles",
            missing=missing,
        )
        out.append(("latency percentiles (log scale), 95% CI", svg))
    others = set(with_role(defs, "throughput") + with_role(defs, "cpu"))
    for metric in [m for m in defs if m in others and m != primary]:
        bar(metric)
    return out
