"""Table cells the sections share: a median with its interval, a bootstrapped ratio, a status."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from .. import stats
from ..charts import fmt_interval, fmt_num, fmt_value
from .inputs import ImplInfo, Outcome
from .model import Cell


def value_cell(row: dict | None, unit: str, show_ci: bool = True) -> Cell:
    if not row or row.get("median") is None:
        return Cell("—", "num muted")
    med = row["median"]
    ci = row.get("ci95") or [None, None]
    sub = fmt_interval(ci[0], ci[1], med, unit) if show_ci else ""
    text = fmt_value(med, unit) + (" ~" if row.get("noisy") else "")
    return Cell(text, "num noisy" if row.get("noisy") else "num", sub=sub)


def ratio_text(r: dict | None) -> tuple[str, str]:
    if r is None:
        return "—", ""
    text = f"{fmt_num(r['ratio'])}×"
    if not r.get("ci95"):
        return text, ""  # no samples recorded: no interval to show
    lo, hi = r["ci95"]
    return text, fmt_interval(lo, hi, r["ratio"], "")


def ratio(row: dict | None, ref_row: dict | None) -> dict | None:
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


def ratio_cell(
    impl: str, anchor: str, label: str, row: dict | None, anchor_row: dict | None
) -> Cell:
    """The ratio column against the floor or the reference; the anchor's own row names itself."""
    if impl == anchor:
        return Cell(label, "num muted")
    text, sub = ratio_text(ratio(row, anchor_row))
    return Cell(text, "num", sub=sub)


def status_cell(o: Outcome | None, span: int = 1) -> Cell:
    if o is None:
        return Cell("not run", "skip", span=span)
    if o.status == "fail":
        return Cell("FAIL", "fail", sub=o.reason, span=span)
    return Cell(o.status, "skip", sub=o.reason, span=span)


def impl_cell(imp: ImplInfo) -> Cell:
    role = {"baseline": "floor", "reference": "reference"}.get(imp.role, "")
    text = imp.id + (f" ({role})" if role and role != imp.id else "")
    return Cell(text, "impl", color=imp.color)


def plain(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list | tuple):
        return " ".join(plain(v) for v in value) if value else "—"
    if isinstance(value, dict):
        return ", ".join(f"{k}={plain(v)}" for k, v in value.items())
    if value is None or value == "":
        return "—"
    return str(value)


def duration(started: str, finished: str) -> str:
    try:
        secs = (datetime.fromisoformat(finished) - datetime.fromisoformat(started)).total_seconds()
    except (TypeError, ValueError):
        return ""
    if secs < 0:
        return ""
    h, rem = divmod(int(round(secs)), 3600)
    m, s = divmod(rem, 60)
    return f"{h} h {m} min {s} s" if h else f"{m} min {s} s" if m else f"{s} s"
