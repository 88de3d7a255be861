"""Latency summary in the native driver's shape (docs/decisions.md, "Drivers").

Percentiles are nearest-rank (the smallest sample with at least q of the samples at or below
it), which is what HdrHistogram's value_at_quantile gives the native driver, without its 0.1%
bucket rounding: the page's samples are whole microseconds on a 5 µs grid already.
"""

from __future__ import annotations

import math

QUANTILES = {"p50": 0.50, "p90": 0.90, "p99": 0.99, "p999": 0.999}


def nearest_rank(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        raise ValueError("no samples")
    rank = max(1, math.ceil(q * len(sorted_values)))
    return sorted_values[rank - 1]


def summarize(samples_us: list[float]) -> dict:
    """{min, mean, stdev, p50, p90, p99, p999, max} in µs; stdev is the population's, as
    HdrHistogram computes it."""
    values = sorted(float(v) for v in samples_us)
    if not values:
        raise ValueError("no samples")
    n = len(values)
    mean = math.fsum(values) / n
    stdev = math.sqrt(math.fsum((v - mean) ** 2 for v in values) / n)
    out = {"min": values[0], "mean": round(mean, 3), "stdev": round(stdev, 3)}
    for name, q in QUANTILES.items():
        out[name] = nearest_rank(values, q)
    out["max"] = values[-1]
    return out
