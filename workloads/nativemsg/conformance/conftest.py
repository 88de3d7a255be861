"""How each nativemsg test gets a running host; the rest (--impl, the `impl` parametrisation,
skips, JUnit properties) is the lab's plugin, msgbench.conformance_plugin.

    pytest workloads/nativemsg/conformance                 # every implementation in the registry
    pytest workloads/nativemsg/conformance --impl c --impl rust
    pytest workloads/nativemsg/conformance --impl-argv "python3 path/to/host.py {origin}"
"""

from __future__ import annotations

import pytest
from hostproc import EXIT_TIMEOUT, TIMEOUT, HostProcess

from msgbench import registry

pytest_plugins = ["msgbench.conformance_plugin"]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nativemsg", "nativemsg conformance")
    group.addoption(
        "--reply-timeout",
        type=float,
        default=TIMEOUT,
        metavar="S",
        help=f"bound of each wait for one reply (default {TIMEOUT:g} s)",
    )
    group.addoption(
        "--exit-timeout",
        type=float,
        default=EXIT_TIMEOUT,
        metavar="S",
        help=f"bound of each wait for the host to exit (default {EXIT_TIMEOUT:g} s)",
    )


def pytest_conformance_timeout(config: pytest.Config) -> float:
    """A host answers in milliseconds: a test still running after a minute has hung."""
    return 60


@pytest.fixture(scope="session")
def origin() -> str:
    """The caller's origin Chromium passes as the host's argument (the lab extension's)."""
    return registry.workload("nativemsg").template_values["origin"]


@pytest.fixture
def start_host(impl, pytestconfig: pytest.Config):
    """Factory: start_host() starts the host as Chromium does; argv/cwd may be overridden.
    Every host started here is killed at teardown, whatever the test did."""
    started: list[HostProcess] = []

    def start(argv: list[str] | None = None, cwd: str | None = None) -> HostProcess:
        h = HostProcess(
            list(argv or impl.argv()),
            cwd or impl.cwd(),
            timeout=pytestconfig.getoption("--reply-timeout"),
            exit_timeout=pytestconfig.getoption("--exit-timeout"),
        )
        started.append(h)
        return h

    yield start
    for h in started:
        h.kill()


@pytest.fixture
def host(start_host) -> HostProcess:
    """One host process, started as Chromium's connectNative does."""
    return start_host()
