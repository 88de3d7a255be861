"""The reference every reply is compared with, and how each test gets a running server; the rest
(--impl, the `impl` parametrisation, skips, JUnit properties) is the lab's plugin,
msgbench.conformance_plugin.

    pytest workloads/redis/conformance                      # every implementation in the registry
    pytest workloads/redis/conformance --impl c --impl rust
    pytest workloads/redis/conformance --impl-argv "python3 my.py --port {port}"   # ad hoc

One server per implementation is shared by the whole session (start-up is not under test except
in test_lifecycle.py); every differential case starts with FLUSHALL on both it and the
reference. The reference is the registry's `redis-server` implementation.
"""

from __future__ import annotations

import shutil

import pytest
import resp

from msgbench import registry
from msgbench.serverproc import Server, ServerSpec

pytest_plugins = ["msgbench.conformance_plugin"]

REFERENCE = "redis-server"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "resp3: needs RESP3 after HELLO 3 (the lab spec's stretch goal)"
    )
    config.addinivalue_line(
        "markers", "semantics: needs a real key-value server (n/a for the floor, which answers +OK)"
    )
    config.addinivalue_line(
        "markers", "lab_cli: the lab's command-line contract (--port, exit 2); not redis-server's"
    )
    config.addinivalue_line(
        "markers",
        "beyond_reference: a promise of the lab's SPEC that redis-server itself does not keep "
        "reliably (its own behaviour varies with its timers)",
    )
    config.addinivalue_line(
        "markers",
        "setget: uses SET and GET only (multibulk requests, no FLUSHALL): the subset a seed's own "
        "server such as mini-redis is held to (impl.toml [conformance] only_markers)",
    )


def _spec(impl) -> ServerSpec:
    """Its argv with `{host}` kept, so that a test may start it on another address."""
    return ServerSpec(id=impl.id, argv=tuple(impl.argv(host="{host}")), cwd=impl.cwd())


_RUNNING: dict[str, Server] = {}


def _running(spec: ServerSpec, exclusive: bool = True) -> Server:
    """The session's shared server for `spec`, restarted if a test killed it. `exclusive`:
    stop the other implementations' servers first (one at a time; the reference stays)."""
    s = _RUNNING.get(spec.id)
    if s is None or not s.alive():
        if exclusive:
            for other_id in [k for k in _RUNNING if k not in (spec.id, REFERENCE)]:
                _RUNNING.pop(other_id).kill()
        if s is not None:
            died = f"{spec.id} died during the previous test:\n{s.log_tail()}"
            s.kill()
            _RUNNING.pop(spec.id)
            raise AssertionError(died)
        _RUNNING[spec.id] = Server(spec)
    return _RUNNING[spec.id]


def pytest_sessionfinish(session: pytest.Session) -> None:
    for s in _RUNNING.values():
        s.kill()
    _RUNNING.clear()


@pytest.fixture
def server(impl) -> Server:
    """The implementation under test, running, with an empty keyspace — except a seed's own
    server that implements a subset without FLUSHALL (impl.toml `only_markers`, mini-redis):
    the tests it is held to (marked setget) write keys of their own instead."""
    s = _running(_spec(impl))
    if not getattr(impl, "only_markers", None):
        resp.flushall(s.port)
    return s


@pytest.fixture
def reference() -> Server:
    """redis-server 7.0.15 started from its manifest, with an empty keyspace."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed (run `make setup`)")
    s = _running(_spec(registry.workload("redis").impls[REFERENCE]), exclusive=False)
    resp.flushall(s.port)
    return s


@pytest.fixture
def fresh_server(impl):
    """A server of its own for tests that stop or overload it."""
    s = Server(_spec(impl))
    yield s
    s.kill()


@pytest.fixture
def start_server(impl):
    """Factory for a server of the test's own on the address `host` (the tests of --host)."""
    started: list[Server] = []

    def start(host: str = "127.0.0.1") -> Server:
        s = Server(_spec(impl), host=host)
        started.append(s)
        return s

    yield start
    for s in started:
        s.kill()
