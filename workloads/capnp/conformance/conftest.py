"""How each capnp test gets its programs; the rest (--impl, the `impl` and `client`
parametrisations, skips, timeouts, JUnit properties) is the lab's plugin,
msgbench.conformance_plugin.

    pytest workloads/capnp/conformance                  # every implementation in the registry
    pytest workloads/capnp/conformance --impl cpp --impl rust
    pytest workloads/capnp/conformance --impl-argv "python3 selftest/impl.py"   # ad hoc

Implementations are black boxes started from their manifest: `impl.argv()` + the five words of
SPEC §5. The floor (the workload's `baseline`) speaks the canonical content encoding (SPEC §7),
every other implementation Cap'n Proto: the `dialect` fixture says which, so one test body
checks both, and tests of one dialect only skip the other with the reason.
"""

from __future__ import annotations

import pytest

pytest_plugins = ["msgbench.conformance_plugin"]

TEST_TIMEOUT_S = 120

CASES = ["carsales", "catrank", "eval"]


@pytest.hookimpl
def pytest_conformance_timeout(config: pytest.Config) -> float:
    return TEST_TIMEOUT_S


def dialect_of(impl) -> str:
    from msgbench import registry

    return "cce" if impl.id == registry.workload("capnp").baseline else "capnp"


@pytest.fixture
def dialect(impl) -> str:
    return dialect_of(impl)


@pytest.fixture
def capnp_only(dialect) -> None:
    if dialect != "capnp":
        pytest.skip("n/a: the floor speaks CCE, not Cap'n Proto (SPEC §7)")


@pytest.fixture
def cce_only(dialect) -> None:
    if dialect != "cce":
        pytest.skip("n/a: only the floor speaks CCE (SPEC §7)")
