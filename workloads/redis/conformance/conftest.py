"""Which servers the suite runs against, and the reference every reply is compared with.

    pytest workloads/redis/conformance                      # every implementation in the registry
    pytest workloads/redis/conformance --impl c --impl rust
    pytest workloads/redis/conformance --server-argv "python3 my.py --port {port}"   # ad hoc

Every test taking the `server` fixture runs once per selected implementation (ids `test_x[c]`,
`test_x[c-<case>]`). One server per implementation is shared by the whole session (start-up is
not under test except in test_lifecycle.py); every differential case starts with FLUSHALL on
both it and the reference. The reference is the registry's `redis-server` implementation.
"""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
import resp

from msgbench.serverproc import Server, ServerSpec

WORKLOAD = "redis"
REFERENCE = "redis-server"
DEFAULT_TEST_TIMEOUT = 120
SUITE_DIR = Path(__file__).resolve().parent


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("redis", "redis conformance")
    group.addoption(
        "--impl",
        action="append",
        default=[],
        metavar="ID",
        help="implementation id from the registry (repeatable; default: all)",
    )
    group.addoption(
        "--server-argv",
        default=None,
        metavar="CMD",
        help='an ad-hoc server instead, its argv with {port}, e.g. "./srv --port {port}"',
    )


def _registry():
    from msgbench import registry

    try:
        return registry.workload(WORKLOAD)
    except registry.ManifestError as e:
        raise pytest.UsageError(str(e)) from None


def _spec_of(impl) -> ServerSpec:
    return ServerSpec(
        id=impl.id,
        argv=tuple(impl.argv()),
        cwd=impl.cwd(),
        built=impl.built,
        skip_markers=tuple(impl.skip_markers),
    )


_SPECS = pytest.StashKey[list[ServerSpec]]()


def _specs(config: pytest.Config) -> list[ServerSpec]:
    if _SPECS in config.stash:
        return config.stash[_SPECS]
    adhoc = config.getoption("--server-argv")
    if adhoc:
        argv = shlex.split(adhoc)
        if not argv or not any("{port}" in a for a in argv):
            raise pytest.UsageError("--server-argv must contain {port}")
        specs = [ServerSpec(id="adhoc", argv=tuple(argv), cwd=str(Path.cwd()))]
    else:
        w = _registry()
        wanted = config.getoption("--impl") or list(w.impls)
        unknown = [i for i in wanted if i not in w.impls]
        if unknown:
            raise pytest.UsageError(
                f"unknown implementation {unknown[0]!r} (valid: {', '.join(w.impls)})"
            )
        specs = [_spec_of(w.impls[i]) for i in wanted]
    config.stash[_SPECS] = specs
    return specs


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "selftest: proves the suite itself (broken servers); runs only without --impl"
    )
    config.addinivalue_line(
        "markers", "resp3: needs RESP3 after HELLO 3 (the lab spec's stretch goal)"
    )
    config.addinivalue_line(
        "markers", "semantics: needs a real key-value server (n/a for the floor, which answers +OK)"
    )
    config.addinivalue_line(
        "markers", "lab_cli: the lab's command-line contract (--port, exit 2); not redis-server's"
    )
    _specs(config)  # an unknown --impl is a usage error now


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "spec" in metafunc.fixturenames:
        specs = _specs(metafunc.config)
        metafunc.parametrize("spec", specs, ids=[s.id for s in specs], scope="session")


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
        callspec = getattr(item, "callspec", None)
        spec = callspec.params.get("spec") if callspec else None
        if spec is None:
            continue
        if not spec.built:
            item.add_marker(pytest.mark.skip(reason="not built: run msgbench build"))
        elif any(item.get_closest_marker(m) for m in spec.skip_markers):
            item.add_marker(pytest.mark.skip(reason=f"n/a for {spec.id}"))
    # Keep each server's tests together so one server per implementation is alive at a time.
    items.sort(
        key=lambda i: getattr(getattr(i, "callspec", None), "params", {}).get("spec", "").__str__()
    )


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
def server(spec: ServerSpec) -> Server:
    """The implementation under test, running, with an empty keyspace."""
    s = _running(spec)
    resp.flushall(s.port)
    return s


@pytest.fixture
def reference() -> Server:
    """redis-server 7.0.15 started from its manifest, with an empty keyspace."""
    if shutil.which("redis-server") is None:
        pytest.skip("redis-server not installed (run `make setup`)")
    w = _registry()
    s = _running(_spec_of(w.impls[REFERENCE]), exclusive=False)
    resp.flushall(s.port)
    return s


@pytest.fixture
def fresh_server(spec: ServerSpec):
    """A server of its own for tests that stop or overload it."""
    s = Server(spec)
    yield s
    s.kill()
