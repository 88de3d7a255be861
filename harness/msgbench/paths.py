"""Where things live in the repository. Every other module asks here, never hard-codes a path."""

from __future__ import annotations

import os
from pathlib import Path

# harness/msgbench/paths.py -> the repository root is two folders up from this package.
ROOT = Path(__file__).resolve().parent.parent.parent
# MSGBENCH_WORKLOADS points the harness at another workloads folder (a workload developed
# outside the tree, or the tests' throw-away ones); the default is the repository's own.
WORKLOADS = Path(os.environ.get("MSGBENCH_WORKLOADS", ROOT / "workloads"))
DRIVERS = ROOT / "drivers"
BUILD = ROOT / "build"
CMAKE_BUILD = BUILD / "cmake"
CMAKE_BIN = CMAKE_BUILD / "bin"
CARGO_TARGET = BUILD / "cargo"
# Release binaries are built for an explicit target triple (profiles.toml [rust] target).
CARGO_BIN = CARGO_TARGET / "x86_64-unknown-linux-gnu" / "release"
GO_BIN = BUILD / "go"
BUILD_LOGS = BUILD / "logs"
VENV = ROOT / ".venv"
VENV_PYTHON = VENV / "bin" / "python"
# MSGBENCH_RESULTS lets tests (and users) keep runs elsewhere than results/.
RESULTS = Path(os.environ.get("MSGBENCH_RESULTS", ROOT / "results"))
DATABASE = RESULTS / "msgbench.sqlite"
PROFILES = ROOT / "profiles.toml"


def rel(path: Path | str) -> str:
    """A path relative to the repo root when it lies inside it (for messages and reports)."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(ROOT))
    except ValueError:
        return str(p)
