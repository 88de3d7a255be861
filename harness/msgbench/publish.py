"""Publishing a run: a copy in published/<run-id>/ that is committed with the repository.

The local store (results/) is a cache that a fresh clone does not have; a run the README or the
docs cite is published so that its numbers, `msgbench report`, `history` and `compare` work
from any clone. A published run is its run document (results.json, compact JSON: the same
document the store holds) and report.md (the report's text tables). The HTML report with its
charts is not committed: `msgbench report RUN` regenerates it from results.json.

A robustness run (`msgbench hostile`, `msgbench soak`: ids `hostile-...`, `soak-...`) is
published as its one document, published/<run-id>/<kind>.json (paths made relative likewise),
which the reports' Robustness sections read beside the local ones.

Size rule: a published run may take at most MAX_BYTES (both files together), so that the
repository stays small as runs accumulate. Per-trial log files are never published.
"""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from . import paths, report, store
from .report import stored

# 2 MiB per run: the largest single-workload full run so far (capnp, 24 scenarios x 6
# implementations) takes about 0.4 MiB as compact JSON plus report.md, and a `make bench` run
# of all five workloads (1,044 trials, every conformance verdict) 1.5 MiB; the rule leaves room
# for a few more workloads and still keeps a hundred published runs under 200 MiB.
MAX_BYTES = 2 * 1024 * 1024
FILES = ("results.json", "report.md")
ROBUSTNESS_KINDS = ("hostile", "soak")  # published as their one document, <kind>.json


class PublishError(Exception):
    """A run that cannot be published (too large)."""


@dataclass
class Published:
    run_id: str
    folder: Path
    size: int  # bytes of both files


# A soak's scratch folder (tempfile, prefix msgbench-soak-): runs stored before the soak named
# its files relative to it kept the random absolute path (soak.fd_kinds).
_SOAK_SCRATCH = re.compile(re.escape(tempfile.gettempdir()) + r"/msgbench-soak-[^/\s\"]+/")


def relative(value):
    """value with every absolute path into this checkout made relative to the repository root
    (the implementations' argv, log paths in messages), and a soak's scratch folder written
    `<soak>/`: a committed file names no path of the machine that wrote it
    (scripts/check_paths.py), and the paths mean the same in any clone."""
    if isinstance(value, str):
        for root in dict.fromkeys([str(paths.ROOT), str(paths.ROOT.resolve())]):
            value = value.replace(root + "/", "")
        return _SOAK_SCRATCH.sub("<soak>/", value)
    if isinstance(value, list):
        return [relative(v) for v in value]
    if isinstance(value, dict):
        return {relative(k): relative(v) for k, v in value.items()}  # keys too: fd_kinds
    return value


def document_text(doc: dict) -> str:
    """The run document as published: paths made relative, compact JSON, UTF-8."""
    return json.dumps(relative(doc), ensure_ascii=False, separators=(",", ":")) + "\n"


def report_text(doc: dict) -> str:
    """report.md of a published run, headed by where its charts are."""
    run_id = doc["run"]["id"]
    head = (
        f"_Published run (published/{run_id}/). The HTML report with charts: "
        f"`./msgbench report {run_id}` writes results/{run_id}/report.html._\n\n"
    )
    # ready() completes a copy: the published results.json stays the document as measured.
    text = report.render_md(stored.ready(json.loads(document_text(doc))))
    # The report links the history page as seen from results/<run-id>/; from
    # published/<run-id>/ that page is ../../results/history/ (written by `msgbench history`).
    return head + text.replace("](../history/", "](../../results/history/")


def folder_size(folder: Path) -> int:
    """Bytes of every file in a published run's folder."""
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def files_of(run_id: str) -> tuple[str, ...]:
    """The files a published run's folder holds."""
    kind = run_id.split("-", 1)[0]
    return (f"{kind}.json",) if kind in ROBUSTNESS_KINDS else FILES


def _robustness_texts(run: str) -> tuple[str, dict[str, str]]:
    kind = run.split("-", 1)[0]
    path = paths.RESULTS / run / f"{kind}.json"
    if not path.is_file():
        raise KeyError(f"unknown {kind} run '{run}' (no {paths.rel(path)})")
    doc = json.loads(path.read_text(encoding="utf-8"))
    return run, {f"{kind}.json": json.dumps(relative(doc), ensure_ascii=False, indent=1) + "\n"}


def publish(run: str | None) -> Published:
    """Copy a stored run (id or prefix; None: the latest) to published/<run-id>/: a benchmark
    run's document and report.md, or a robustness run's document (full id: `hostile-...`,
    `soak-...`). Raises KeyError for an unknown run, PublishError when it would exceed
    MAX_BYTES."""
    if run and run.split("-", 1)[0] in ROBUSTNESS_KINDS:
        run_id, texts = _robustness_texts(run)
    else:
        doc = store.load(run)
        run_id = doc["run"]["id"]
        texts = {"results.json": document_text(doc), "report.md": report_text(doc)}
    size = sum(len(t.encode("utf-8")) for t in texts.values())
    if size > MAX_BYTES:
        raise PublishError(
            f"run {run_id} would take {size / 1024:.0f} KiB in published/, more than the "
            f"{MAX_BYTES / 1024:.0f} KiB a published run may take (docs/decisions.md)"
        )
    folder = paths.PUBLISHED / run_id
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (folder / name).write_text(text, encoding="utf-8")
    return Published(run_id, folder, folder_size(folder))
