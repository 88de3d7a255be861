"""Which hosts the suite runs against, and how each test gets a running host.

    pytest workloads/nativemsg/conformance                 # every implementation in the registry
    pytest workloads/nativemsg/conformance --impl c --impl rust
    pytest workloads/nativemsg/conformance --host-argv "python3 path/to/host.py"   # ad hoc

Every test that takes the `impl` fixture runs once per selected host (ids like `test_x[c]`).
A host that is not built is skipped ("not built: run msgbench build"); a test carrying a marker
listed in the manifest's `[conformance] skip_markers` is skipped as "n/a for <id>".
"""

from __future__ import annotations

import os
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hostproc import EXIT_TIMEOUT, TIMEOUT, HostProcess

WORKLOAD = "nativemsg"
#: Per-test limit unless a test sets its own @pytest.mark.timeout: a hung host fails, never hangs.
DEFAULT_TEST_TIMEOUT = 60
SUITE_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class HostSpec:
    """How to start one host as a browser would."""

    id: str
    argv: tuple[str, ...]  # Chromium's argv: the program, then the caller's origin
    cwd: str
    origin: str
    built: bool = True
    skip_markers: tuple[str, ...] = field(default=())

    def __str__(self) -> str:  # shown in test ids and messages
        return self.id

    def firefox_argv(self, manifest_path: str, extension_id: str) -> list[str]:
        """Firefox passes the host manifest's path and the extension id instead of the origin."""
        argv = list(self.argv)
        if self.origin in argv:
            i = argv.index(self.origin)
            return [*argv[:i], manifest_path, extension_id, *argv[i + 1 :]]
        return [*argv, manifest_path, extension_id]

    def without_origin(self) -> list[str]:
        return [a for a in self.argv if a != self.origin]


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nativemsg", "nativemsg conformance")
    group.addoption(
        "--impl",
        action="append",
        default=[],
        metavar="ID",
        help="implementation id from the registry (repeatable; default: all of them)",
    )
    group.addoption(
        "--host-argv",
        default=None,
        metavar="CMD",
        help='test an ad-hoc host instead of registry implementations, e.g. "python3 h.py"; '
        "the origin is appended as a browser does",
    )
    group.addoption(
        "--host-cwd",
        default=None,
        metavar="DIR",
        help="working directory for --host-argv (default: the folder of its last existing file)",
    )
    group.addoption(
        "--host-skip",
        action="append",
        default=[],
        metavar="MARKER",
        help="skip_markers for the --host-argv host (repeatable, e.g. json for a baseline)",
    )
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


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "selftest: proves the suite itself (runs broken hosts); needs no --impl"
    )
    _specs(config)  # an unknown --impl is a usage error now, not a collection error per file


def _origin() -> str:
    from msgbench import registry

    return registry.workload(WORKLOAD).template_values["origin"]


def _adhoc_spec(config: pytest.Config) -> HostSpec:
    argv = shlex.split(config.getoption("--host-argv"))
    if not argv:
        raise pytest.UsageError("--host-argv is empty")
    # Files named relative to where pytest runs must still be found from the host's cwd.
    argv = [str(Path(a).resolve()) if os.path.isfile(a) else a for a in argv]
    cwd = config.getoption("--host-cwd")
    if cwd is None:
        files = [a for a in argv if os.path.isfile(a)]
        cwd = str(Path(files[-1]).parent) if files else os.getcwd()
    origin = _origin()
    return HostSpec(
        id="adhoc",
        argv=(*argv, origin),
        cwd=cwd,
        origin=origin,
        skip_markers=tuple(config.getoption("--host-skip")),
    )


def _registry_specs(config: pytest.Config) -> list[HostSpec]:
    from msgbench import registry

    try:
        workload = registry.workload(WORKLOAD)
    except registry.ManifestError as e:
        raise pytest.UsageError(str(e)) from None
    wanted = config.getoption("--impl") or list(workload.impls)
    unknown = [i for i in wanted if i not in workload.impls]
    if unknown:
        valid = ", ".join(workload.impls) or "none yet"
        raise pytest.UsageError(f"unknown implementation {unknown[0]!r} (valid: {valid})")
    origin = workload.template_values["origin"]
    specs = []
    for impl_id in wanted:
        impl = workload.impls[impl_id]
        specs.append(
            HostSpec(
                id=impl.id,
                argv=tuple(impl.argv()),
                cwd=impl.cwd(),
                origin=origin,
                built=impl.built,
                skip_markers=tuple(impl.skip_markers),
            )
        )
    return specs


_SPECS = pytest.StashKey[list[HostSpec]]()


def _specs(config: pytest.Config) -> list[HostSpec]:
    if _SPECS not in config.stash:
        if config.getoption("--host-argv"):
            config.stash[_SPECS] = [_adhoc_spec(config)]
        else:
            config.stash[_SPECS] = _registry_specs(config)
    return config.stash[_SPECS]


def _hosts_chosen(config: pytest.Config) -> bool:
    return bool(config.getoption("--impl") or config.getoption("--host-argv"))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "impl" in metafunc.fixturenames:
        specs = _specs(metafunc.config)
        metafunc.parametrize("impl", specs, ids=[s.id for s in specs])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    deselected = []
    kept = []
    for item in items:
        if SUITE_DIR not in item.path.parents:  # a session that also runs other tests
            kept.append(item)
            continue
        # The self-test runs the suite against broken hosts; it is not about the chosen hosts.
        if item.get_closest_marker("selftest") and _hosts_chosen(config):
            deselected.append(item)
            continue
        kept.append(item)
        if item.get_closest_marker("timeout") is None:
            item.add_marker(pytest.mark.timeout(DEFAULT_TEST_TIMEOUT))
        callspec = getattr(item, "callspec", None)
        spec = callspec.params.get("impl") if callspec else None
        if spec is None:
            continue
        if not spec.built:
            item.add_marker(pytest.mark.skip(reason="not built: run msgbench build"))
        elif any(item.get_closest_marker(m) for m in spec.skip_markers):
            item.add_marker(pytest.mark.skip(reason=f"n/a for {spec.id}"))
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


@pytest.fixture
def start_host(impl: HostSpec, pytestconfig: pytest.Config):
    """Factory: start_host() starts the host as Chromium does; argv/cwd may be overridden.
    Every host started here is killed at teardown, whatever the test did."""
    started: list[HostProcess] = []

    def start(argv: list[str] | None = None, cwd: str | None = None) -> HostProcess:
        h = HostProcess(
            list(argv or impl.argv),
            cwd or impl.cwd,
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
