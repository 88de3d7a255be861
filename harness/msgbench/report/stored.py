"""A stored run made ready to render again (`msgbench report`, `msgbench publish`).

Presentation-only declarations (no measurements) that a run stored before they existed lacks
are taken from the current manifests, so old runs render with new report sections; the
robustness evidence is the newest the store holds when the report is written.
"""

from __future__ import annotations

from .. import registry, seeds
from ..registry import ManifestError


def ready(doc: dict) -> dict:
    """doc, completed in place (and returned) for report.write / render_md."""
    for entry in doc.get("workloads", []):
        try:
            w = registry.workload(entry["name"])
        except ManifestError:
            continue
        names = {s["name"] for s in entry.get("scenarios", [])}
        entry.setdefault("targets", [t for t in w.targets if t["scenario"] in names])
        entry.setdefault(
            "side_by_side", [p for p in w.side_by_side if set(p["scenarios"]) <= names]
        )
        entry.setdefault("sweeps", [t for t in w.sweeps if {p[0] for p in t["points"]} & names])
        entry.setdefault("ratio_charts", [t for t in w.ratio_charts if set(t["scenarios"]) & names])
        entry.setdefault("matrices", [t for t in w.matrices if set(t["scenarios"]) & names])
    ran = {(w["name"], s["name"]) for w in doc.get("workloads", []) for s in w.get("scenarios", [])}
    doc.setdefault("seeds", seeds.for_run(seeds.load(checked=False), ran))
    from ..robustness import evidence

    doc["robustness"] = evidence.collect([w["name"] for w in doc.get("workloads", [])])
    return doc
