"""Run storage: results.json plus the SQLite history, and reading runs back."""

from __future__ import annotations

import json
import sqlite3

import pytest

from msgbench import paths, store


def doc(run_id: str, started: str) -> dict:
    return {
        "run": {
            "id": run_id,
            "started": started,
            "finished": started,
            "profile": "smoke",
            "command": "msgbench bench",
            "commit": "abc",
            "dirty": False,
        },
        "results": [
            {
                "workload": "w",
                "scenario": "s",
                "impl": "c",
                "metric": "p50",
                "unit": "µs",
                "better": "lower",
                "n": 3,
                "median": 10.0,
                "ci95": [9.0, 11.0],
                "cv": 0.05,
                "noisy": False,
                "samples": [9.0, 10.0, 11.0],
                "status": "ok",
                "reason": "",
            },
            {
                "workload": "w",
                "scenario": "s",
                "impl": "go",
                "metric": "p50",
                "unit": "µs",
                "better": "lower",
                "n": 0,
                "median": None,
                "ci95": None,
                "cv": None,
                "noisy": False,
                "samples": [],
                "status": "fail",
                "reason": "conformance",
            },
        ],
    }


@pytest.fixture
def results_dir(tmp_path, monkeypatch):
    monkeypatch.setattr(paths, "RESULTS", tmp_path)
    monkeypatch.setattr(paths, "PUBLISHED", tmp_path / "published")  # not the repository's
    return tmp_path


def test_save_writes_json_and_sqlite_and_load_reads_back(results_dir):
    db = results_dir / "db.sqlite"
    path = store.save(doc("r1", "2026-01-01T00:00:00"), db)
    assert path == results_dir / "r1" / "results.json"
    assert json.loads(path.read_text())["run"]["id"] == "r1"
    rows = sqlite3.connect(db).execute("SELECT impl, median, status FROM results").fetchall()
    assert sorted(rows) == [("c", 10.0, "ok"), ("go", None, "fail")]
    assert store.load("r1", db)["results"][0]["samples"] == [9.0, 10.0, 11.0]


def test_latest_run_and_prefix_lookup(results_dir):
    db = results_dir / "db.sqlite"
    store.save(doc("20260101-a", "2026-01-01T00:00:00"), db)
    store.save(doc("20260102-b", "2026-01-02T00:00:00"), db)
    assert store.load(None, db)["run"]["id"] == "20260102-b"
    assert store.load("20260101", db)["run"]["id"] == "20260101-a"
    with pytest.raises(KeyError, match="unknown run"):
        store.load("2026", db)  # ambiguous prefix


def test_saving_a_run_again_replaces_its_rows(results_dir):
    db = results_dir / "db.sqlite"
    store.save(doc("r1", "2026-01-01T00:00:00"), db)
    store.save(doc("r1", "2026-01-01T00:00:00"), db)
    (count,) = sqlite3.connect(db).execute("SELECT count(*) FROM results").fetchone()
    assert count == 2
