"""The suite's self-test (see msgbench.conformance_selftest): the small correct program of
selftest/impl.py must pass the suite, and the same program with each classic bug (`impl.py
--bug NAME ...`) must FAIL the tests listed for that bug."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from msgbench.conformance_selftest import list_bugs, not_passed, run_suite, uncaught

SUITE = Path(__file__).resolve().parent
PROGRAM = SUITE / "selftest" / "impl.py"

# bug -> {test (a function: one of its cases at least; or one case) that must FAIL against
# it: a fragment of its failure message, or None}.
CAUGHT: dict[str, dict[str, str | None]] = {
    "wrong-seed": {"test_client_sends_the_spec_requests[carsales-none]": "differ from SPEC",
                   "test_client_sends_the_spec_requests[eval-packed]": "differ from SPEC"},
    "skips-warmup": {"test_client_sends_the_spec_requests[carsales-none]": None,
                     "test_mode_runs_and_reports": None},
    "amount-off-by-one": {"test_generated_requests_get_exact_answers[carsales-none]": "request 0",
                          "test_carsales_hand_made[empty-lot]": None},
    "div-zero-zero": {"test_eval_hand_made[divide-by-zero]": "expected 2147483647"},
    "trusting-client": {"test_client_rejects_a_wrong_answer": "must fail the client"},
    "answers-truncated": {"test_hostile_capnp_message_is_refused[truncated-carsales]": "accepted"},
    "crash-on-unknown-op": {"test_hostile_capnp_message_is_refused[unknown-op]": "signal"},
    "cat-without-spaces": {"test_catrank_hand_made[cat-needs-spaces]": "request 0"},
    "bad-args-exit-1": {"test_bad_command_line_exits_2_with_usage": "exit status 1"},
    "no-served-line": {"test_generated_requests_get_exact_answers[eval-none]": None},
    "no-response-cap": {"test_hostile_capnp_message_is_refused[amplified-response]": "accepted"},
}  # fmt: skip

pytestmark = pytest.mark.selftest


def _argv(bug: str | None = None) -> list[str]:
    return [sys.executable, str(PROGRAM), *(["--bug", bug] if bug else [])]


def test_correct_program_passes(tmp_path):
    """The control: the whole suite against the program without a bug."""
    results = run_suite(SUITE, _argv(), tmp_path)
    assert len(results) > 90, f"only {len(results)} tests ran"
    # The floor's CCE cases skip with "n/a:" for a Cap'n Proto program; nothing else may.
    problems = {k: v for k, v in not_passed(results).items() if "n/a: only the floor" not in v}
    assert not problems, problems


def test_every_bug_is_checked():
    """Each bug of selftest/impl.py has its entry here, and each entry is a bug there."""
    assert sorted(list_bugs(PROGRAM)) == sorted(CAUGHT)


@pytest.mark.parametrize("bug", sorted(CAUGHT))
def test_suite_catches_bug(tmp_path, bug):
    results = run_suite(SUITE, _argv(bug), tmp_path, list(CAUGHT[bug]))
    problems = uncaught(results, CAUGHT[bug])
    assert not problems, f"{bug}:\n" + "\n".join(problems)
