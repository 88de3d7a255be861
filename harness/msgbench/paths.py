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
CARGO_TARGET = BUILD / "cargo"
# Release binaries are built for an explicit target triple (profiles.toml [rust] target).
CARGO_BIN = CARGO_TARGET / "x86_64-unknown-linux-gnu" / "release"

# Build profiles (docs/decisions.md, "Sanitizer builds"): `release` (what is measured) builds C,
# C++ and Go into build/cmake and build/go; `sanitize` (ASan + UBSan, Go -race) into the same
# shapes under build/sanitize/, so the release trees are never touched. MSGBENCH_BUILD_PROFILE
# chooses the profile for this process and every process it starts (a conformance suite, the
# programs it launches); `msgbench build|verify --profile` sets it. Rust and Python have one
# build whatever the profile (build/cargo, .venv): the sanitize profile does not cover them.
BUILD_PROFILES = ("release", "sanitize")
BUILD_PROFILE_ENV = "MSGBENCH_BUILD_PROFILE"
# Sanitizer and race reports of the sanitize profile's programs, one folder per suite session
# (MSGBENCH_SANITIZER_REPORTS lets tests keep them elsewhere).
SANITIZER_REPORTS = Path(
    os.environ.get("MSGBENCH_SANITIZER_REPORTS", BUILD / "sanitize" / "reports")
)


# The seed's build (issue 15, profiles.toml [seedbuild]): what the seeds measured, "no
# optimisation options", built into build/seedbuild/ beside the release build and measured only
# as the `<impl>-seedbuild` variants a workload's [seed_build] names, in the Seeds section.
SEEDBUILD = "seedbuild"  # not selectable like the two above: each such variant names it
SEEDBUILD_CARGO_TARGET = BUILD / SEEDBUILD / "cargo"
# `cargo build` without --release: the dev profile's folder.
SEEDBUILD_CARGO_BIN = SEEDBUILD_CARGO_TARGET / "x86_64-unknown-linux-gnu" / "debug"


def profile_trees(profile: str) -> dict[str, Path]:
    """The build folders of a build profile: the values of CMAKE_BUILD, CMAKE_BIN, GO_BIN,
    BUILD_LOGS and VERIFY_LOGS while it is selected."""
    if profile not in (*BUILD_PROFILES, SEEDBUILD):
        raise ValueError(
            f"unknown build profile {profile!r} ({BUILD_PROFILE_ENV}; valid: "
            f"{', '.join(BUILD_PROFILES)})"
        )
    tree = BUILD if profile == "release" else BUILD / profile
    return {
        "CMAKE_BUILD": tree / "cmake",
        "CMAKE_BIN": tree / "cmake" / "bin",
        "GO_BIN": tree / "go",
        "BUILD_LOGS": tree / "logs",
        "VERIFY_LOGS": tree / "verify",
    }


def select_build_profile(profile: str) -> None:
    """Make `profile` this process's build profile, and its children's (the environment)."""
    globals().update(profile_trees(profile))
    global BUILD_PROFILE
    BUILD_PROFILE = profile
    os.environ[BUILD_PROFILE_ENV] = profile


BUILD_PROFILE = os.environ.get(BUILD_PROFILE_ENV) or "release"
_trees = profile_trees(BUILD_PROFILE)
CMAKE_BUILD = _trees["CMAKE_BUILD"]
CMAKE_BIN = _trees["CMAKE_BIN"]
GO_BIN = _trees["GO_BIN"]
BUILD_LOGS = _trees["BUILD_LOGS"]
VERIFY_LOGS = _trees["VERIFY_LOGS"]
VENV = ROOT / ".venv"
VENV_PYTHON = VENV / "bin" / "python"
# MSGBENCH_RESULTS lets tests (and users) keep runs elsewhere than results/.
RESULTS = Path(os.environ.get("MSGBENCH_RESULTS", ROOT / "results"))
DATABASE = RESULTS / "msgbench.sqlite"
# Runs the README and docs cite, committed (docs/decisions.md, "Issue 13: published runs"):
# results/ is a local cache that a fresh clone lacks, published/ travels with the repository.
PUBLISHED = Path(os.environ.get("MSGBENCH_PUBLISHED", ROOT / "published"))
PROFILES = ROOT / "profiles.toml"
# The seeds as data (seeds/README.md): what each published comparison said, and its rerun.
SEEDS = ROOT / "seeds"


def rel(path: Path | str) -> str:
    """A path relative to the repo root when it lies inside it (for messages and reports)."""
    p = Path(path)
    try:
        return str(p.resolve().relative_to(ROOT))
    except ValueError:
        return str(p)
