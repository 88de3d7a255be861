"""The command line as a user meets it: help, bad arguments, list --json."""

from __future__ import annotations

import json
import subprocess

import pytest

from msgbench import paths

LAUNCHER = paths.ROOT / "msgbench"


def msgbench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(LAUNCHER), *args], capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize(
    "command", ["doctor", "list", "build", "verify", "bench", "report", "metrics", "compare"]
)
def test_every_command_has_help(command):
    r = msgbench(command, "--help")
    assert r.returncode == 0, r.stderr
    assert "Usage" in r.stdout


@pytest.mark.parametrize(
    ("args", "names"),
    [
        (["bench", "--profile", "huge"], ["quick", "full"]),
        (["bench", "--placement", "diagonal"], ["split", "same", "none"]),
        (["bench", "nosuchworkload"], ["nativemsg"]),
        (["bench", "nativemsg", "--impl", "cobol"], ["baseline", "python"]),
        (["bench", "nativemsg", "--scenario", "nope"], ["pingpong", "echo-512k"]),
        (["verify", "nativemsg", "--impl", "cobol"], ["baseline"]),
        (["bench", "--frobnicate"], ["--frobnicate"]),
    ],
)
def test_bad_argument_is_one_line_naming_the_choices_with_status_2(args, names):
    r = msgbench(*args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith("msgbench: error:")
    for name in names:
        assert name in lines[0]


def test_list_json_names_every_implementation_with_its_command_line():
    r = msgbench("list", "--json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    ids = {(row["workload"], row["impl"]) for row in rows}
    for impl in ("baseline", "c", "cpp", "rust", "go", "python"):
        assert ("nativemsg", impl) in ids
    for row in rows:
        assert set(row) >= {"workload", "impl", "language", "variant", "built", "run", "absent"}
        if row["absent"]:  # listed with the reason why there is no program (impl.toml `absent`)
            assert row["run"] == [] and not row["built"]
            continue
        assert isinstance(row["run"], list) and row["run"]
        # Lab programs are named by absolute path; a reference system is a program on PATH.
        if row["variant"] == "reference":
            assert "/" not in row["run"][0], row["run"]
        else:
            assert row["run"][0].startswith("/"), "argv[0] is an absolute path"


def test_report_of_unknown_run_is_a_usage_error():
    r = msgbench("report", "no-such-run-id")
    assert r.returncode == 2
    assert "msgbench: error:" in r.stderr


def test_list_shows_an_absent_implementation_with_its_reason():
    r = msgbench("list", "capnp")
    assert r.returncode == 0, r.stderr
    rows = [[c.strip() for c in ln.split("│")[1:-1]] for ln in r.stdout.splitlines()]
    assert ["capnp", "c", "c", "-", "absent"] in [row[:5] for row in rows]
    reason = " ".join(row[5] for row in rows if len(row) == 6)
    assert "no official C library" in reason
