"""Where robustness runs are kept: results/<kind>-<run-id>/<kind>.json, beside the benchmark
runs, with the machine, the commit and the command (`msgbench publish` copies one the docs cite
to published/); `latest` finds the newest of a workload in either place."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from .. import machine, paths, results


def save(kind: str, doc: dict) -> Path:
    commit, dirty = machine.git_state()
    run_id = f"{kind}-" + results.new_run_id(commit)
    doc = {"run": {"id": run_id, "kind": kind, "finished": results.now(), "commit": commit,
                   "dirty": dirty, "command": " ".join(["msgbench", *sys.argv[1:]]),
                   "machine": machine.fingerprint()}, **doc}  # fmt: skip
    out = paths.RESULTS / run_id / f"{kind}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=1, ensure_ascii=False))
    return out


def latest(kind: str, workload: str) -> dict | None:
    """The newest run of `kind` that covers `workload`, stored here or published (committed:
    published/<run-id>/<kind>.json, what a fresh clone has), or None."""
    found = sorted(
        [
            *paths.RESULTS.glob(f"{kind}-*/{kind}.json"),
            *paths.PUBLISHED.glob(f"{kind}-*/{kind}.json"),
        ],
        key=lambda p: p.parent.name,
        reverse=True,
    )
    for path in found:
        doc = json.loads(path.read_text())
        if doc.get("workload") == workload:
            return doc
    return None
