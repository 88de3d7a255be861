"""The suite's self-test (see msgbench.conformance_selftest): the small correct server of
selftest/impl.py must pass the suite, and the same server with each classic bug (--bug NAME)
must FAIL the tests listed for that bug."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from msgbench.conformance_selftest import list_bugs, not_passed, run_suite, uncaught

SUITE = Path(__file__).resolve().parent
PROGRAM = SUITE / "selftest" / "impl.py"

# bug -> {test (a function: one of its cases at least) that must FAIL against it: a fragment
# of its failure message, or None}.
CAUGHT: dict[str, dict[str, str | None]] = {
    "echo-type": {"test_every_type_is_echoed_as_reply": None},
    "little-endian": {"test_echo_sizes": None},
    "end-before-drain": {"test_end_and_quit_drain_then_end_then_close": None},
    "no-close-after-end": {"test_end_and_quit_drain_then_end_then_close": None},
    "ignore-cap": {"test_cap_is_configurable_and_exact": None},
    "drop-split-header": {"test_split_at_every_offset": None},
    "bind-any": {"test_listens_on_the_given_host_and_only_there": None},
}

pytestmark = pytest.mark.selftest


def _argv(bug: str | None) -> list[str]:
    return [sys.executable, str(PROGRAM), "--port", "{port}", "--host", "{host}",
            *(["--bug", bug] if bug else [])]  # fmt: skip


def test_correct_server_passes(tmp_path):
    """The control: the whole suite but its 16 MiB echo (minutes in this small Python server)."""
    results = run_suite(SUITE, _argv(None), tmp_path, extra=["-k", "not 16_mib"])
    assert len(results) > 40, f"only {len(results)} tests ran"
    assert not not_passed(results), not_passed(results)


def test_every_bug_is_checked():
    """Each bug of selftest/impl.py has its entry in CAUGHT, and each entry is a bug there."""
    assert sorted(list_bugs(PROGRAM)) == sorted(CAUGHT)


@pytest.mark.parametrize("bug", sorted(CAUGHT))
def test_suite_catches_bug(tmp_path, bug):
    problems = uncaught(run_suite(SUITE, _argv(bug), tmp_path, list(CAUGHT[bug])), CAUGHT[bug])
    assert not problems, f"{bug}:\n" + "\n".join(problems)
