"""The pytest plugin every conformance suite loads, so that its conftest holds only what is
particular to its workload. In workloads/<w>/conformance/conftest.py:

    pytest_plugins = ["msgbench.conformance_plugin"]

The workload is the one whose conformance folder holds the test file (msgbench.registry). The
plugin gives every suite:

- `--impl ID` (repeatable; default: every implementation of the workload), or `--impl-argv CMD`:
  an ad-hoc implementation (id `adhoc`) written like an impl.toml [run] argv ({port}, {origin},
  {python} are filled in), with `--impl-cwd DIR` and `--impl-skip MARKER`;
- the `impl` parametrisation: a test that needs `impl` (itself or through a fixture) runs once per
  selected implementation, with its registry Impl (`impl.argv()`, `impl.cwd()`, ...);
- the `client` parametrisation (interoperability): with `impl`, every implementation's own client
  program against the server under test; alone, the selected implementations' own clients;
- skips: an implementation (or client) that is not built, saying how to build it; a test carrying
  a marker the implementation lists in impl.toml `[conformance] skip_markers` is n/a;
- the `selftest` marker: tests of the suite itself, deselected when implementations are chosen;
- a default per-test timeout (a hung implementation fails, never hangs the run; a suite may set
  its own with the hook `pytest_conformance_timeout`);
- `--case NAME`: only the tests of that case (`test_x[params]` without the implementation) or of
  that test function (the self-tests use it);
- on every test, JUnit properties (conformance_junit.py) that `msgbench verify` reads.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from msgbench import conformance_junit as props
from msgbench import registry

ADHOC = "adhoc"
DEFAULT_TIMEOUT_S = 120
# Placeholders that say where the lab keeps things, not what a caller passes: an ad-hoc argv
# need not use them even when every registered implementation does.
_LAB_PLACEHOLDERS = {
    "root",
    "cmake_bin",
    "cargo_bin",
    "go_bin",
    "venv_python",
    "impl_dir",
    "python",
}


@dataclass
class AdhocImpl:
    """An implementation given on the command line: the same interface as registry.Impl."""

    workload: str
    run_argv: list[str]
    run_cwd: str
    skip_markers: list[str] = field(default_factory=list)
    deviations: dict[str, str] = field(default_factory=dict)
    only_markers: list[str] = field(default_factory=list)
    only_why: str = ""
    id: str = ADHOC
    built: bool = True

    def argv(self, port: int | None = None, host: str = registry.LOOPBACK) -> list[str]:
        return registry.fill(list(self.run_argv), port, host)

    def client_argv(self, port: int | None = None, host: str = registry.LOOPBACK) -> list[str]:
        return []

    def cwd(self) -> str:
        return self.run_cwd


class _Hooks:
    @pytest.hookspec(firstresult=True)
    def pytest_conformance_timeout(self, config: pytest.Config) -> float | None:
        """Seconds a test of this suite may take unless it sets @pytest.mark.timeout."""


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(_Hooks)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("msgbench", "msgbench conformance")
    group.addoption(
        "--impl", action="append", default=[], metavar="ID",
        help="implementation id from the registry (repeatable; default: all of the workload)",
    )  # fmt: skip
    group.addoption(
        "--impl-argv", default=None, metavar="CMD",
        help='an ad-hoc implementation instead, written like impl.toml [run] argv, e.g. '
        '"python3 srv.py --port {port}" or "python3 host.py {origin}"',
    )  # fmt: skip
    group.addoption(
        "--impl-cwd", default=None, metavar="DIR",
        help="working directory of --impl-argv (default: the folder of its last file)",
    )  # fmt: skip
    group.addoption(
        "--impl-skip", action="append", default=[], metavar="MARKER",
        help="skip_markers of the --impl-argv implementation (repeatable)",
    )  # fmt: skip
    group.addoption(
        "--case", action="append", default=[], metavar="NAME",
        help="run only this case (test_x[params] without the implementation) or test function",
    )  # fmt: skip


# ---- which workload, which implementations ------------------------------------------------


def workload_of(path: Path) -> registry.Workload | None:
    """The workload whose conformance folder holds `path` (asked for every test: remembered)."""
    try:
        workloads = registry.load()
    except registry.ManifestError as e:
        raise pytest.UsageError(str(e)) from None
    if _FOUND.get("registry") is not workloads:  # a new registry (tests reload it)
        _FOUND.clear()
        _FOUND["registry"] = workloads
    key = str(path)
    if key not in _FOUND:
        resolved = Path(path).resolve()
        _FOUND[key] = next(
            (
                w
                for w in workloads.values()
                if (suite := w.conformance_dir.resolve()) == resolved or suite in resolved.parents
            ),
            None,
        )
    return _FOUND[key]


_FOUND: dict = {}


_SELECTED = pytest.StashKey[dict[str, list]]()


def selected(config: pytest.Config, w: registry.Workload) -> list:
    """The implementations under test: --impl-argv's, the --impl ones, or all of `w`."""
    cache = config.stash.setdefault(_SELECTED, {})
    if w.name not in cache:
        if config.getoption("--impl-argv"):
            cache[w.name] = [_adhoc(config, w)]
        else:
            present = [i for i, impl in w.impls.items() if not impl.absent]
            # A seed's-build variant is verified where it is measured (its id named), not in
            # "every implementation" (registry.seedbuilds_hidden).
            wanted = config.getoption("--impl") or [
                i for i in present if not w.impls[i].seedbuild_of
            ]
            unknown = [i for i in wanted if i not in w.impls]
            if unknown:
                valid = ", ".join(present) or "none yet"
                raise pytest.UsageError(
                    f"unknown {w.name} implementation {unknown[0]!r} (valid: {valid})"
                )
            absent = [i for i in wanted if w.impls[i].absent]
            if absent:  # nothing to test: impl.toml says why
                raise pytest.UsageError(
                    f"{w.name} implementation {absent[0]!r} is absent: {w.impls[absent[0]].absent}"
                )
            cache[w.name] = [w.impls[i] for i in wanted]
    return cache[w.name]


def _placeholders(argv: list[str]) -> set[str]:
    return set(re.findall(r"\{(\w+)\}", " ".join(argv)))


def _adhoc(config: pytest.Config, w: registry.Workload) -> AdhocImpl:
    template = shlex.split(config.getoption("--impl-argv"))
    if not template:
        raise pytest.UsageError("--impl-argv is empty")
    # What every registered implementation is given (a port, an origin) the ad-hoc one needs too.
    shared = [_placeholders(i.run["argv"]) for i in w.impls.values() if not i.absent]
    needed = set.intersection(*shared) - _LAB_PLACEHOLDERS if shared else set()
    missing = sorted(needed - _placeholders(template))
    if missing:
        raise pytest.UsageError(
            f"--impl-argv must contain {{{missing[0]}}}, as every {w.name} implementation's "
            f"[run] argv does"
        )
    try:
        argv = registry.expand(template, registry.template_vars(w))
    except registry.ManifestError as e:
        raise pytest.UsageError(f"--impl-argv: {e}") from None
    # Files named relative to where pytest runs must still be found from the implementation's cwd.
    argv = [str(Path(a).absolute()) if os.path.isfile(a) else a for a in argv]
    cwd = config.getoption("--impl-cwd")
    if cwd is None:
        files = [a for a in argv if os.path.isfile(a)]
        cwd = str(Path(files[-1]).parent) if files else os.getcwd()
    return AdhocImpl(w.name, argv, cwd, list(config.getoption("--impl-skip")))


def clients(config: pytest.Config, w: registry.Workload) -> list:
    """Every implementation of `w` with its own client program (none for an ad-hoc server)."""
    if config.getoption("--impl-argv"):
        return []
    named = config.getoption("--impl") or []
    return [
        i for i in w.impls.values() if i.client_argv() and (not i.seedbuild_of or i.id in named)
    ]


def is_built(impl) -> bool:
    """Built = its program exists, and its client program too if it has one."""
    client = impl.client_argv()
    return impl.built and (not client or Path(client[0]).exists())


def _chosen(config: pytest.Config) -> bool:
    return bool(config.getoption("--impl") or config.getoption("--impl-argv"))


# ---- pytest hooks ---------------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "selftest: proves the suite itself (bugs injected); runs only without --impl"
    )
    # An unknown --impl or a wrong --impl-argv is a usage error now, not an error per test file.
    for arg in config.args:
        w = workload_of(Path(arg.split("::")[0]))
        if w is not None:
            selected(config, w)


@pytest.hookimpl(tryfirst=True)  # first, so the implementation leads every test id: test_x[c-…]
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    names = metafunc.fixturenames
    if "impl" not in names and "client" not in names:
        return
    w = workload_of(metafunc.definition.path)
    if w is None:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid} asks for impl/client but is not in a workload's "
            "conformance folder"
        )
    impls = selected(metafunc.config, w)
    if "impl" in names:
        # Session scope: one implementation's tests run together (one server alive at a time).
        metafunc.parametrize("impl", impls, ids=[i.id for i in impls], scope="session")
        if "client" in names:
            cs = clients(metafunc.config, w)
            metafunc.parametrize("client", cs, ids=[f"client={c.id}" for c in cs])
    else:  # a test of a client program alone tests the selected implementations' clients
        cs = [i for i in impls if i.client_argv()]
        metafunc.parametrize("client", cs, ids=[f"client={c.id}" for c in cs])


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    cases = set(config.getoption("--case"))
    kept, deselected = [], []
    for item in items:
        w = workload_of(item.path)
        if w is None:  # a session that also runs other tests
            kept.append(item)
            continue
        case = _case(item)
        if (item.get_closest_marker("selftest") and _chosen(config)) or (
            cases and case not in cases and getattr(item, "originalname", "") not in cases
        ):
            deselected.append(item)
            continue
        kept.append(item)
        if item.get_closest_marker("timeout") is None:
            timeout = item.ihook.pytest_conformance_timeout(config=config) or DEFAULT_TIMEOUT_S
            item.add_marker(pytest.mark.timeout(timeout))
        _label(item, w, case)
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = kept


def _params(item: pytest.Item) -> dict:
    return getattr(getattr(item, "callspec", None), "params", {})


def _case(item: pytest.Item) -> str:
    """The test's name without the implementation (it leads the id: see pytest_generate_tests)."""
    callspec = getattr(item, "callspec", None)
    name = getattr(item, "originalname", item.name)
    if callspec is None:
        return name
    rest = callspec.id
    impl = callspec.params.get("impl")
    if isinstance(impl, registry.Impl | AdhocImpl):
        if rest != impl.id and not rest.startswith(impl.id + "-"):
            raise pytest.UsageError(f"{item.nodeid}: the implementation does not lead its id")
        rest = rest[len(impl.id) + 1 :]
    return f"{name}[{rest}]" if rest else name


def _label(item: pytest.Item, w: registry.Workload, case: str) -> None:
    """Record the test's properties, and skip it where it cannot or need not run."""
    params = _params(item)
    # An empty parametrisation (no implementation has a client) holds no implementation.
    impl, client = (p if isinstance(p, registry.Impl | AdhocImpl) else None
                    for p in (params.get("impl"), params.get("client")))  # fmt: skip
    owner = impl if impl is not None else client  # what the verdict of this test belongs to
    item.user_properties.append((props.CASE, case))
    if owner is None:
        return
    item.user_properties.append((props.IMPL, owner.id))
    if client is not None:
        item.user_properties.append((props.CLIENT, client.id))
    marker = next((m for m in owner.skip_markers if item.get_closest_marker(m)), None)
    na_reason = ""
    if client is None and "client" in getattr(item, "fixturenames", ()):
        # pytest skips it (an empty parametrisation): no client to run, e.g. for --impl-argv.
        na_reason = f"n/a for {owner.id}: no implementation's client program to run against it"
    elif marker is not None:
        where = (
            "--impl-skip" if owner.id == ADHOC else "[conformance] skip_markers of its impl.toml"
        )
        na_reason = f"n/a for {owner.id}: the test is marked {marker!r}, listed in {where}"
    elif owner.only_markers and not any(item.get_closest_marker(m) for m in owner.only_markers):
        na_reason = (
            f"n/a for {owner.id}: it implements a subset ({owner.only_why}); only tests marked "
            f"{', '.join(owner.only_markers)} apply"
        )
    if na_reason:
        item.user_properties += [(props.APPLICABLE, props.NA), (props.NA_REASON, na_reason)]
    else:
        item.user_properties.append((props.APPLICABLE, props.YES))
    for part, whose in ((owner, ""), (client, "the client of ")):
        if part is not None and not is_built(part):
            build = f"./msgbench build {w.name} --impl {part.id}"
            item.add_marker(
                pytest.mark.skip(reason=f"{whose}{part.id} is not built: run `{build}`")
            )
            return
    if na_reason:
        item.add_marker(pytest.mark.skip(reason=na_reason))
        return
    deviation = owner.deviations.get(case) or owner.deviations.get(
        getattr(item, "originalname", item.name)
    )
    if deviation:
        # Known not to hold for this (reference) implementation: it must fail, and a pass fails
        # the test (strict), so the deviation list never outlives the deviation.
        item.user_properties.append((props.DEVIATION, deviation))
        item.add_marker(
            pytest.mark.xfail(reason=f"known deviation of {owner.id}: {deviation}", strict=True)
        )
