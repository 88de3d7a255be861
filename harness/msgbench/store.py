"""Run storage: results/<run-id>/results.json and the history in results/msgbench.sqlite,
plus the published runs committed under published/<run-id>/results.json.

The JSON file is the run's complete record; SQLite keeps every run's rows queryable for
history and `compare` without opening files. results/ is a local cache (a fresh clone has
none); published/ holds the runs the README and docs cite, and `run_ids` and `load` read both,
the local copy first.
"""

from __future__ import annotations

import json
import sqlite3
from functools import lru_cache
from pathlib import Path

from . import paths

SCHEMA = """
CREATE TABLE IF NOT EXISTS runs (
    id TEXT PRIMARY KEY, started TEXT, finished TEXT, profile TEXT, command TEXT,
    git_commit TEXT, dirty INTEGER, interrupted INTEGER, document TEXT
);
CREATE TABLE IF NOT EXISTS results (
    run_id TEXT REFERENCES runs(id), workload TEXT, scenario TEXT, impl TEXT, metric TEXT,
    unit TEXT, better TEXT, n INTEGER, median REAL, ci_lo REAL, ci_hi REAL, cv REAL,
    noisy INTEGER, status TEXT, reason TEXT, samples TEXT
);
CREATE INDEX IF NOT EXISTS results_by_key ON results (workload, scenario, impl, metric);
"""


def run_dir(run_id: str) -> Path:
    return paths.RESULTS / run_id


def connect(db: Path | None = None) -> sqlite3.Connection:
    db = db or paths.DATABASE
    db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)
    return con


def save(doc: dict, db: Path | None = None) -> Path:
    """Write results.json and (re)insert the run into SQLite. Returns the JSON path."""
    run = doc["run"]
    out = run_dir(run["id"])
    out.mkdir(parents=True, exist_ok=True)
    json_path = out / "results.json"
    json_path.write_text(json.dumps(doc, indent=1, ensure_ascii=False))
    with connect(db) as con:
        con.execute("DELETE FROM results WHERE run_id = ?", (run["id"],))
        con.execute(
            "INSERT OR REPLACE INTO runs VALUES (?,?,?,?,?,?,?,?,?)",
            (
                run["id"],
                run["started"],
                run.get("finished"),
                run["profile"],
                run["command"],
                run["commit"],
                int(run["dirty"]),
                int(run.get("interrupted", False)),
                json.dumps(doc, ensure_ascii=False),
            ),
        )
        con.executemany(
            "INSERT INTO results VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    run["id"],
                    r["workload"],
                    r["scenario"],
                    r["impl"],
                    r["metric"],
                    r["unit"],
                    r["better"],
                    r["n"],
                    r["median"],
                    *(r["ci95"] or [None, None]),
                    r.get("cv"),
                    int(bool(r.get("noisy"))),
                    r["status"],
                    r.get("reason", ""),
                    json.dumps(r.get("samples", [])),
                )
                for r in doc["results"]
            ],
        )
    return json_path


def published_file(run_id: str) -> Path:
    return paths.PUBLISHED / run_id / "results.json"


@lru_cache(maxsize=64)
def _published_header(path: Path, mtime_ns: int) -> tuple[str, str]:
    run = json.loads(path.read_text(encoding="utf-8"))["run"]
    return run["id"], run.get("started") or ""


def _published() -> dict[str, str]:
    """{run id: started} of the published runs."""
    if not paths.PUBLISHED.is_dir():
        return {}
    found = {}
    for path in sorted(paths.PUBLISHED.glob("*/results.json")):
        run_id, started = _published_header(path, path.stat().st_mtime_ns)
        found[run_id] = started
    return found


def _local(db: Path) -> dict[str, str]:
    if not db.exists():
        return {}
    with connect(db) as con:
        return dict(con.execute("SELECT id, started FROM runs"))


def run_ids(db: Path | None = None) -> list[str]:
    """Every run id of the local store and of published/, oldest first (by start time)."""
    started = {**_published(), **_local(db or paths.DATABASE)}
    return sorted(started, key=lambda i: (started[i] or "", i))


def is_published(run_id: str) -> bool:
    return published_file(run_id).is_file()


def load(run_id: str | None = None, db: Path | None = None) -> dict:
    """A stored run's document (the local store's copy, else the published one): the latest
    when run_id is None. Raises KeyError if unknown."""
    db = db or paths.DATABASE
    ids = run_ids(db)
    if not ids:
        raise KeyError("no stored runs (run `msgbench bench` first)")
    if run_id is None:
        run_id = ids[-1]
    matches = [i for i in ids if i == run_id] or [i for i in ids if i.startswith(run_id)]
    if len(matches) != 1:
        raise KeyError(f"unknown run '{run_id}' (stored: {', '.join(ids[-5:])})")
    if db.exists():
        with connect(db) as con:
            row = con.execute("SELECT document FROM runs WHERE id = ?", (matches[0],)).fetchone()
        if row:
            return json.loads(row[0])
    return json.loads(published_file(matches[0]).read_text(encoding="utf-8"))
