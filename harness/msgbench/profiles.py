"""profiles.toml: the one place that holds every language's release flags."""

from __future__ import annotations

import tomllib
from functools import cache
from typing import Any

from . import paths


@cache
def load() -> dict[str, Any]:
    with open(paths.PROFILES, "rb") as f:
        return tomllib.load(f)


def python_argv() -> list[str]:
    """The interpreter command every Python implementation runs under: venv python + flags."""
    return [str(paths.VENV_PYTHON), *load()["python"].get("flags", [])]
