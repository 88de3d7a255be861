"""Shared fixtures of the browser tests: the nmbrowser package on sys.path, the `browser` marker
(skipped with the reason when Chromium is missing), one headless Chromium per test module,
and the lab's hosts from the registry.

    .venv/bin/pytest workloads/nativemsg/browser/tests     # from the repository's root
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

BROWSER_DIR = Path(__file__).resolve().parent.parent
TESTS_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BROWSER_DIR))

from nmbrowser import chromium  # noqa: E402
from nmbrowser.deadline import Deadline  # noqa: E402
from nmbrowser.session import BrowserSession  # noqa: E402

DRIVER = BROWSER_DIR / "driver.py"
FIXTURE_HOST = TESTS_DIR / "fixture_host.py"
#: One module's browser lives at most this long (every test in it is bounded far below).
SESSION_BUDGET_S = 600.0


def _chromium_missing() -> str | None:
    try:
        chromium.find_binary()
    except chromium.LaunchError as e:
        return f"{e}: apt-get install chromium (or make setup)"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "browser: runs real headless Chromium")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = _chromium_missing()
    for item in items:
        if TESTS_DIR not in item.path.parents:
            continue
        if missing and item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.skip(reason=missing))


def python_argv() -> list[str]:
    """The lab's interpreter as hosts get it ({python} of the manifests)."""
    from msgbench import profiles

    return profiles.python_argv()


def fixture_argv(mode: str, *extra: str) -> list[str]:
    return [*python_argv(), str(FIXTURE_HOST), mode, *extra]


def lab_impls() -> list:
    from msgbench import registry

    return list(registry.workload("nativemsg").impls.values())


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium with the extension's bench page, for a whole test module."""
    with BrowserSession(Deadline(SESSION_BUDGET_S)) as session:
        yield session
