"""Which servers the suite runs against.

    pytest workloads/comm/conformance                      # every implementation in the registry
    pytest workloads/comm/conformance --impl c --impl rust
    pytest workloads/comm/conformance --server-argv "./srv --port {port}"   # ad hoc

Every test taking the `server` fixture runs once per selected implementation (ids `test_x[c]`).
One server per implementation is shared by the session; tests that stop or reconfigure a server
start their own (`start_server`). The interoperability tests run every implementation's own
client program against the server under test (ids `test_x[c-client=rust]`).
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from msgbench.serverproc import Server, ServerSpec

WORKLOAD = "comm"
DEFAULT_TEST_TIMEOUT = 120
SUITE_DIR = Path(__file__).resolve().parent


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("comm", "comm conformance")
    group.addoption(
        "--impl", action="append", default=[], metavar="ID",
        help="implementation id from the registry (repeatable; default: all)",
    )  # fmt: skip
    group.addoption(
        "--server-argv", default=None, metavar="CMD",
        help='an ad-hoc server, its argv with {port}, e.g. "./srv --port {port}"',
    )  # fmt: skip


def _registry():
    from msgbench import registry

    try:
        return registry.workload(WORKLOAD)
    except registry.ManifestError as e:
        raise pytest.UsageError(str(e)) from None


def _spec_of(impl) -> ServerSpec:
    client = impl.client_argv()
    return ServerSpec(
        id=impl.id,
        argv=tuple(impl.argv()),
        cwd=impl.cwd(),
        client_argv=tuple(client),
        built=impl.built and (not client or Path(client[0]).exists()),
        skip_markers=tuple(impl.skip_markers),
    )


_SPECS = pytest.StashKey[list[ServerSpec]]()


def _specs(config: pytest.Config) -> list[ServerSpec]:
    if _SPECS in config.stash:
        return config.stash[_SPECS]
    adhoc = config.getoption("--server-argv")
    if adhoc:
        argv = shlex.split(adhoc)
        if not any("{port}" in a for a in argv):
            raise pytest.UsageError("--server-argv must contain {port}")
        specs = [ServerSpec(id="adhoc", argv=tuple(argv), cwd=str(Path.cwd()))]
    else:
        w = _registry()
        wanted = config.getoption("--impl") or list(w.impls)
        unknown = [i for i in wanted if i not in w.impls]
        if unknown:
            raise pytest.UsageError(
                f"unknown implementation {unknown[0]!r} (valid: {', '.join(w.impls) or 'none'})"
            )
        specs = [_spec_of(w.impls[i]) for i in wanted]
    config.stash[_SPECS] = specs
    return specs


def client_specs(config: pytest.Config) -> list[ServerSpec]:
    """Every registry implementation that brings its own client program (built or not)."""
    if config.getoption("--server-argv"):
        return []
    w = _registry()
    return [_spec_of(i) for i in w.impls.values() if i.client_argv()]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "selftest: proves the suite itself (broken servers); runs only without --impl"
    )
    config.addinivalue_line(
        "markers", "lab_cli: the lab's command-line contract (--port, exit status 2)"
    )
    _specs(config)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "spec" in metafunc.fixturenames:
        specs = _specs(metafunc.config)
        metafunc.parametrize("spec", specs, ids=[s.id for s in specs], scope="session")
    if "client" in metafunc.fixturenames:
        clients = client_specs(metafunc.config)
        # "client=<id>": never "<id>-…" or "…-<id>", so reports find the server's id.
        metafunc.parametrize("client", clients, ids=[f"client={c.id}" for c in clients])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    chosen = bool(config.getoption("--impl") or config.getoption("--server-argv"))
    deselected = [i for i in items if chosen and i.get_closest_marker("selftest")]
    if deselected:  # the self-test is about the suite, not about the chosen servers
        config.hook.pytest_deselected(items=deselected)
        items[:] = [i for i in items if i not in deselected]
    for item in items:
        if SUITE_DIR not in item.path.parents:
            continue
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(DEFAULT_TEST_TIMEOUT))
        params = getattr(getattr(item, "callspec", None), "params", {})
        spec, client = params.get("spec"), params.get("client")
        spec = spec if isinstance(spec, ServerSpec) else None  # empty parametrisations
        client = client if isinstance(client, ServerSpec) else None
        if spec is not None and not spec.built:
            item.add_marker(pytest.mark.skip(reason="not built: run msgbench build"))
        elif client is not None and not client.built:
            item.add_marker(pytest.mark.skip(reason=f"client of {client.id} not built"))
        elif spec is not None and any(item.get_closest_marker(m) for m in spec.skip_markers):
            item.add_marker(pytest.mark.skip(reason=f"n/a for {spec.id}"))
    items.sort(
        key=lambda i: str(getattr(getattr(i, "callspec", None), "params", {}).get("spec", ""))
    )


_RUNNING: dict[str, Server] = {}


@pytest.fixture
def server(spec: ServerSpec) -> Server:
    """The implementation's server, shared by the session (restarted if a test killed it)."""
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
def start_server(spec: ServerSpec):
    """Factory for a server of the test's own, with extra arguments (e.g. --max-body 1000)."""
    started: list[Server] = []

    def start(*extra: str) -> Server:
        s = Server(spec, tuple(extra))
        started.append(s)
        return s

    yield start
    for s in started:
        s.kill()


def pytest_sessionfinish(session: pytest.Session) -> None:
    for s in _RUNNING.values():
        s.kill()
    _RUNNING.clear()
