"""How each echonet test gets its node, its peers and its controller; the rest (--impl, the
`impl` and `client` parametrisations, skips, timeouts, JUnit properties) is the lab's plugin,
msgbench.conformance_plugin.

    pytest workloads/echonet/conformance                  # every implementation in the registry
    pytest workloads/echonet/conformance --impl c --impl rust
    pytest workloads/echonet/conformance --impl-argv "python3 node.py" \\
        --impl-client-argv "python3 controller.py"          # ad hoc (the self-test does this)

Implementations are black boxes started from their manifest: the node is `impl.argv()` +
`--bind ADDR --ifaddr ADDR --port 3610` on a fresh loopback address (echonet_procs), the
controller `client.client_argv()` + options + COMMAND. Tests that only read share one node per
module (`node`); tests that change it, count on its counters or stop it get their own
(`fresh_node`).
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

import echonet_procs as P
import pytest

pytest_plugins = ["msgbench.conformance_plugin"]

TEST_TIMEOUT_S = 30


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("msgbench").addoption(
        "--impl-client-argv", default=None, metavar="CMD",
        help="the controller program of the --impl-argv implementation (like impl.toml [run] "
        "client_argv); without it the ad-hoc implementation has no controller",
    )  # fmt: skip


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "semantics: needs a real node (n/a for the floor, which answers only the node profile's "
        "Gets from precomputed bytes and has no controller)",
    )
    config.addinivalue_line(
        "markers", "netns: needs network namespaces (msgbench.topology); skipped with the reason "
        "when they cannot be made",
    )  # fmt: skip
    _adhoc_controller(config)


def _adhoc_controller(config: pytest.Config) -> None:
    """Give the ad-hoc implementation (--impl-argv) the controller of --impl-client-argv: the
    plugin's ad-hoc implementation has none, and the self-test needs one to prove the
    controller tests."""
    argv = config.getoption("--impl-client-argv")
    if not argv:
        return
    if not config.getoption("--impl-argv"):
        raise pytest.UsageError("--impl-client-argv goes with --impl-argv")
    from msgbench import conformance_plugin, registry  # here: the plugin is loaded by now

    w = registry.load().get("echonet")
    if w is None:
        raise pytest.UsageError("the echonet workload is not in the registry")
    # As for --impl-argv: files named relative to where pytest runs are found from any cwd.
    words = [str(Path(a).absolute()) if os.path.isfile(a) else a for a in shlex.split(argv)]
    for impl in conformance_plugin.selected(config, w):
        impl.client_argv = lambda port=None, words=words: list(words)


@pytest.hookimpl
def pytest_conformance_timeout(config: pytest.Config) -> float:
    return TEST_TIMEOUT_S


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    """Keep each implementation's tests module by module, in the order they are written.
    pytest's own reordering (by parameter) interleaves modules, which would start the
    module-scoped node and topology many times and run a module's last test (it stops the
    nodes) before others."""
    here = Path(__file__).parent
    written = {id(item): i for i, item in enumerate(items)}
    yield
    mine = [i for i, item in enumerate(items) if here in item.path.parents]
    owners: dict[str, int] = {}
    modules: dict[Path, int] = {}
    for item in sorted((items[i] for i in mine), key=lambda it: written[id(it)]):
        owners.setdefault(_owner(item), len(owners))
        modules.setdefault(item.path, len(modules))

    def key(item: pytest.Item) -> tuple:
        return owners[_owner(item)], modules[item.path], written[id(item)]

    for slot, item in zip(mine, sorted((items[i] for i in mine), key=key), strict=True):
        items[slot] = item


def _owner(item: pytest.Item) -> str:
    params = getattr(getattr(item, "callspec", None), "params", {})
    owner = params.get("impl") or params.get("client")
    return getattr(owner, "id", "")


# ---- nodes ---------------------------------------------------------------------------------


def start_node(impl, **kw) -> P.Node:
    return P.Node(impl.argv(), impl.cwd(), **kw)


@pytest.fixture(scope="module")
def _module_node(impl):
    holder = {"node": start_node(impl)}
    yield holder
    holder["node"].kill()


@pytest.fixture
def node(impl, _module_node) -> P.Node:
    """The module's shared node (for tests that only read and need no counters)."""
    n = _module_node["node"]
    if not n.alive():
        died = f"the shared node died during an earlier test:\n{n.stderr_tail()}"
        _module_node["node"] = start_node(impl)
        raise AssertionError(died)
    return n


@pytest.fixture
def fresh_node(impl):
    """A node of the test's own (it may change its state, read its counters, or stop it)."""
    started: list[P.Node] = []

    def start(**kw) -> P.Node:
        n = start_node(impl, **kw)
        started.append(n)
        return n

    yield start
    for n in started:
        n.kill()


@pytest.fixture
def peer():
    """The test's UDP socket on a fresh loopback address, from an ephemeral port."""
    with P.Peer(0) as p:
        yield p
