"""The A/A control: in every scenario one implementation is measured twice, under its own label
and under its twin's, in the same shuffled rounds as every other trial. The ratio of the two
(which should be 1) shows how noisy this very run was; stats.aa_band turns its CI into the band
a difference must clear before the report calls it one.

The twin is the subject's own program, argv and folder under another label: it is never built
or verified on its own (the subject was), and it is not an implementation of the workload.
"""

from __future__ import annotations

import dataclasses

from . import stats
from .registry import Impl, Workload

SUFFIX = "-aa"


def subject(w: Workload, chosen: list[Impl]) -> tuple[Impl, str] | None:
    """The implementation a scenario measures twice, and why it: the floor ("baseline") when it
    runs there, else the reference ("reference"), else the first runnable one ("first
    runnable"). None when nothing runs."""
    by_id = {i.id: i for i in chosen}
    if w.baseline and w.baseline in by_id:
        return by_id[w.baseline], "baseline"
    if w.reference and w.reference in by_id:
        return by_id[w.reference], "reference"
    return (chosen[0], "first runnable") if chosen else None


def twin_id(subject_id: str) -> str:
    return subject_id + SUFFIX


def twin(impl: Impl) -> Impl:
    """The subject under the twin's label: only the id differs (the key its trials are filed
    under, and the name of its stderr log), so it runs exactly the subject's command."""
    return dataclasses.replace(impl, id=twin_id(impl.id))


def subject_of(impl_id: str, known: set[str] | dict) -> str | None:
    """The subject whose twin `impl_id` is, when it is one of `known`; else None."""
    if impl_id.endswith(SUFFIX) and impl_id[: -len(SUFFIX)] in known:
        return impl_id[: -len(SUFFIX)]
    return None


def with_twin(w: Workload, chosen: list[Impl]) -> tuple[list[Impl], dict | None]:
    """The scenario's implementations with the subject's twin appended, and the record of the
    pair ({"subject", "twin", "chosen_as"}; None when nothing runs)."""
    picked = subject(w, chosen)
    if picked is None:
        return chosen, None
    impl, why = picked
    record = {"subject": impl.id, "twin": twin_id(impl.id), "chosen_as": why}
    return [*chosen, twin(impl)], record


def summary_line(control: dict | None, metric: str) -> str | None:
    """The A/A control of a scenario entry in one line, for the console:
    "A/A baseline ÷ baseline-aa: 1.004× [0.991, 1.017], noise band [0.983, 1.017]"."""
    if not control:
        return None
    pair = f"A/A {control['subject']} ÷ {control['twin']}"
    r = (control.get("ratio") or {}).get(metric)
    if not r:
        return f"{pair}: not measured"
    lo, hi = r["ci95"]
    try:
        band_lo, band_hi = stats.aa_band([lo, hi])
        band = f", noise band [{band_lo:.3f}, {band_hi:.3f}]"
    except ValueError:
        band = ""
    return f"{pair}: {r['ratio']:.3f}× [{lo:.3f}, {hi:.3f}]{band}"
