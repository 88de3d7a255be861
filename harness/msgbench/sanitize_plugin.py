"""A pytest plugin for conformance sessions of the sanitize build profile: a sanitizer or race
report fails the test during which it appeared.

`msgbench verify --profile sanitize` loads it (`-p msgbench.sanitize_plugin`); by hand:

    MSGBENCH_BUILD_PROFILE=sanitize .venv/bin/pytest -p msgbench.sanitize_plugin \\
        workloads/redis/conformance --impl c

With another build profile it does nothing. On start it empties the session's report folder
(msgbench.sanitize.report_dir) and puts the sanitizers' options in the environment every program
the suite starts inherits, and skips the tests profiles.toml [sanitize.not_applicable] lists
(with its reason: assertions about the allocator or memory that the instrumentation changes);
after each phase of each test (setup, call, teardown: a server
stopped by a fixture reports its leaks in the teardown) a new report file makes that phase fail
with what the report found and its path. A report that appears after the last test fails the
session (and `msgbench verify` shows it in the implementation's verdict).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from msgbench import conformance_plugin, paths, registry, sanitize


@dataclass
class _Session:
    workload: str
    folder: Path
    seen: set[Path] = field(default_factory=set)

    def new_reports(self) -> list[Path]:
        new = [p for p in sanitize.reports(self.folder) if p not in self.seen]
        self.seen.update(new)
        return new


_STATE = pytest.StashKey[_Session]()


def _workload(config: pytest.Config) -> str:
    """The workload whose conformance folder the session runs (`session` if none)."""
    args = [Path(a.split("::")[0]).resolve() for a in config.args]
    for w in registry.load().values():
        suite = w.conformance_dir.resolve()
        if any(a == suite or suite in a.parents for a in args):
            return w.name
    return "session"


def pytest_configure(config: pytest.Config) -> None:
    if paths.BUILD_PROFILE != "sanitize":
        return
    impls = config.getoption("--impl", default=None) or []
    workload = _workload(config)
    folder = sanitize.report_dir(workload, list(impls))
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    os.environ.update(sanitize.environment(folder))
    config.stash[_STATE] = _Session(workload, folder)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests profiles.toml [sanitize.not_applicable] lists (a function, or one case of it as
    the matrix names it, test_x[params]) are skipped, with the reason."""
    state = config.stash.get(_STATE, None)
    if state is None:
        return
    for item in items:
        callspec = getattr(item, "callspec", None)
        impl = callspec.params.get("impl") if callspec else None
        who = (getattr(impl, "language", None), getattr(impl, "id", None))
        name = getattr(item, "originalname", item.name)
        why = sanitize.not_applicable(state.workload, name, *who)
        if not why and callspec is not None:  # one case of a parametrised test: test_x[params]
            why = sanitize.not_applicable(state.workload, conformance_plugin._case(item), *who)
        if why:
            item.add_marker(pytest.mark.skip(reason=f"n/a in the sanitize profile: {why}"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo):
    outcome = yield
    state = item.config.stash.get(_STATE, None)
    if state is None:
        return
    new = state.new_reports()
    if not new:
        return
    rep = outcome.get_result()
    text = f"sanitizer report during {rep.when}: {sanitize.describe(new)}"
    if rep.failed and rep.longrepr is not None:
        text += f"\n\n{rep.longrepr}"
    rep.outcome = "failed"
    rep.longrepr = text


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = session.config.stash.get(_STATE, None)
    if state is None:
        return
    late = state.new_reports()
    if late:
        reporter = session.config.pluginmanager.get_plugin("terminalreporter")
        if reporter is not None:
            reporter.write_line(f"sanitizer report after the last test:\n{sanitize.describe(late)}")
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
