"""How each comm test gets a running server; the rest (--impl, the `impl` and `client`
parametrisations, skips, JUnit properties) is the lab's plugin, msgbench.conformance_plugin.

    pytest workloads/comm/conformance                      # every implementation in the registry
    pytest workloads/comm/conformance --impl c --impl rust
    pytest workloads/comm/conformance --impl-argv "./srv --port {port}"   # ad hoc

One server per implementation is shared by the session; tests that stop or reconfigure a server
start their own (`start_server`). The interoperability tests run every implementation's own
client program against the server under test (ids `test_x[c-client=rust]`).
"""

from __future__ import annotations

import pytest

from msgbench.serverproc import Server, ServerSpec

pytest_plugins = ["msgbench.conformance_plugin"]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "lab_cli: the lab's command-line contract (--port, exit status 2)"
    )


def _spec(impl) -> ServerSpec:
    """Its argv with `{host}` kept, so that a test may start it on another address."""
    return ServerSpec(id=impl.id, argv=tuple(impl.argv(host="{host}")), cwd=impl.cwd())


_RUNNING: dict[str, Server] = {}


@pytest.fixture
def server(impl) -> Server:
    """The implementation's server, shared by the session (restarted if a test killed it)."""
    spec = _spec(impl)
    s = _RUNNING.get(spec.id)
    if s is None or not s.alive():
        for other in [k for k in _RUNNING if k != spec.id]:
            _RUNNING.pop(other).kill()
        if s is not None:
            died = f"{spec.id} died during an earlier test:\n{s.log_tail()}"
            s.kill()
            _RUNNING.pop(spec.id)
            raise AssertionError(died)
        _RUNNING[spec.id] = Server(spec)
    return _RUNNING[spec.id]


@pytest.fixture
def start_server(impl):
    """Factory for a server of the test's own, with extra arguments (e.g. --max-body 1000), on
    127.0.0.1 or the address `host`."""
    started: list[Server] = []

    def start(*extra: str, host: str = "127.0.0.1") -> Server:
        s = Server(_spec(impl), tuple(extra), host=host)
        started.append(s)
        return s

    yield start
    for s in started:
        s.kill()


def pytest_sessionfinish(session: pytest.Session) -> None:
    for s in _RUNNING.values():
        s.kill()
    _RUNNING.clear()
