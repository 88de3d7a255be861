"""profiles.toml: the one place that holds every language's release flags, and the sanitize
build profile's flags and run-time options (its [sanitize] table)."""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Any

from . import paths

# Tables of profiles.toml that are not a language's release flags.
NOT_RELEASE = ("sanitize", "seedbuild")


@cache
def load() -> dict[str, Any]:
    with open(paths.PROFILES, "rb") as f:
        return tomllib.load(f)


def release() -> dict[str, Any]:
    """The release flags per language (what every run records and the report shows)."""
    return {k: v for k, v in load().items() if k not in NOT_RELEASE}


def sanitize() -> dict[str, Any]:
    """The [sanitize] table: cflags/ldflags (C and C++), go_flags, env (run-time options)."""
    return load()["sanitize"]


def seedbuild() -> dict[str, Any]:
    """The [seedbuild] table: how the seeds built their programs (cflags, ldflags for C and
    C++; Rust's dev profile and Go's plain `go build` need no table entry)."""
    return load()["seedbuild"]


def python_argv() -> list[str]:
    """The interpreter command every Python implementation runs under: venv python + flags."""
    return [str(paths.VENV_PYTHON), *load()["python"].get("flags", [])]
