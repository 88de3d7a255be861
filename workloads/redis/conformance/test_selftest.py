"""The suite's self-test (see msgbench.conformance_selftest): redis-server behind the faithful
proxy of selftest/impl.py must pass the chosen differential cases, and behind the proxy with
each bug (--bug NAME) must FAIL the cases listed for that bug."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from msgbench.conformance_selftest import list_bugs, not_passed, run_suite, uncaught

SUITE = Path(__file__).resolve().parent
PROGRAM = SUITE / "selftest" / "impl.py"

# bug -> {case that must FAIL against it: a fragment of its failure message, or None}.
CAUGHT: dict[str, dict[str, str | None]] = {
    "lowercase-errors": {"test_same_bytes_as_redis[arity-get-too-few]": None},
    "keep-open": {"test_same_bytes_as_redis[proto-invalid-mbulk-len]": None},
    "nil-as-empty": {"test_same_bytes_as_redis[set-get]": None},
    "int-as-bulk": {"test_same_bytes_as_redis[incr]": None},
    "bind-any": {"test_listens_on_the_given_host_and_only_there": None},
}
# The control: every case above, and one the bugs leave alone.
CONTROL = sorted(
    {c for cases in CAUGHT.values() for c in cases} | {"test_same_bytes_as_redis[lpop-count]"}
)

pytestmark = [
    pytest.mark.selftest,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="redis-server not installed"),
]


def _argv(bug: str | None) -> list[str]:
    return [sys.executable, str(PROGRAM), "--port", "{port}", "--host", "{host}",
            *(["--bug", bug] if bug else [])]  # fmt: skip


def test_faithful_proxy_passes(tmp_path):
    results = run_suite(SUITE, _argv(None), tmp_path, CONTROL)
    assert sorted(results) == CONTROL
    assert not not_passed(results), not_passed(results)


def test_every_bug_is_checked():
    """Each bug of selftest/impl.py has its entry in CAUGHT, and each entry is a bug there."""
    assert sorted(list_bugs(PROGRAM)) == sorted(CAUGHT)


@pytest.mark.parametrize("bug", sorted(CAUGHT))
def test_suite_catches_bug(tmp_path, bug):
    problems = uncaught(run_suite(SUITE, _argv(bug), tmp_path, list(CAUGHT[bug])), CAUGHT[bug])
    assert not problems, f"{bug}:\n" + "\n".join(problems)
