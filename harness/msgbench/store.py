"""Run storage: results/<run-id>/results.json and the history in results/msgbench.sqlite.

The JSON file is the run's complete record; SQLite keeps every run's rows queryable for
history and `compare` without opening files.
"""

from __future__ import annotations

import json
import sqlite3
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


def connect(db: Path = paths.DATABASE) -> sqlite3.Connection:
    db.parent.mkdir(parents=True, exist_ok=True)
    con = sqlite3.connect(db)
    con.executescript(SCHEMA)
    return con


def save(doc: dict, db: Path = paths.DATABASE) -> Path:
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


def run_ids(db: Path = paths.DATABASE) -> list[str]:
    if not db.exists():
        return []
    with connect(db) as con:
        return [r[0] for r in con.execute("SELECT id FROM runs ORDER BY started")]


def load(run_id: str | None = None, db: Path = paths.DATABASE) -> dict:
    """A stored run's document: the latest when run_id is None. Raises KeyError if unknown."""
    ids = run_ids(db)
    if not ids:
        raise KeyError("no stored runs (run `msgbench bench` first)")
    if run_id is None:
        run_id = ids[-1]
    matches = [i for i in ids if i == run_id] or [i for i in ids if i.startswith(run_id)]
    if len(matches) != 1:
        raise KeyError(f"unknown run '{run_id}' (stored: {', '.join(ids[-5:])})")
    with connect(db) as con:
        (document,) = con.execute(
            "SELECT document FROM runs WHERE id = ?", (matches[0],)
        ).fetchone()
    return json.loads(document)
