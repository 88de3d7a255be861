"""The robustness evidence a report shows beside a run's speed: per workload, the committed fuzz
record totalled, and the newest stored hostile-client and soak runs (msgbench.robustness.store).
Taken when a report is written, so that `msgbench report` shows the latest of each."""

from __future__ import annotations

from ..fuzz import campaign
from . import store


def collect(workloads: list[str]) -> dict:
    rows = campaign.summary(campaign.read_record())
    return {
        w: {
            "fuzz": [r for r in rows if r["workload"] == w],
            "hostile": store.latest("hostile", w),
            "soak": store.latest("soak", w),
        }
        for w in workloads
    }
