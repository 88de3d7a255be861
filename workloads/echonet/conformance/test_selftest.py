"""The suite's self-test (see msgbench.conformance_selftest): the small correct node and
controller of selftest/impl.py must pass the suite, and the same programs with each classic bug
(`impl.py node --bug NAME`, `impl.py controller --bug NAME`) must FAIL the tests listed for that
bug. The controller comes in through --impl-client-argv (conftest.py)."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest

from msgbench.conformance_selftest import list_bugs, not_passed, run_suite, uncaught

SUITE = Path(__file__).resolve().parent
PROGRAM = SUITE / "selftest" / "impl.py"

# bug -> {test (a function: one of its cases at least; or one case) that must FAIL against it:
# a fragment of its failure message, or None}.
NODE_CAUGHT: dict[str, dict[str, str | None]] = {
    "propmap-trusts-n": {"test_property_map_encoding[ac-9f]": "N is 16, not 18",
                         "test_aircon_property_alone[9f]": None},
    "bitmap-wrong-bit": {"test_property_map_encoding[ac-9f]": "the bitmap holds",
                         "test_aircon_every_property_at_once": None},
    "no-get-sna": {"test_get_sna_keeps_readable_values_in_request_order": "not Get_SNA",
                   "test_get_to_every_epc_value": None},
    "sna-drops-readable": {"test_get_sna_keeps_readable_values_in_request_order[np-mixed]": None,
                           "test_inf_req_is_answered_by_unicast[ac-sna]": None},
    "reply-to-3610": {"test_reply_goes_to_the_source_port[ephemeral]":
                      "not to the request's source port",
                      "test_spec_36_byte_get": "no reply"},
    "tid-byteswap": {"test_tid_is_echoed_verbatim[1234]": "TID 3412 in the reply to TID 1234"},
    "answers-malformed": {"test_hostile_datagram_is_dropped_and_counted[trailing-byte]":
                          "should not have",
                          "test_hostile_datagram_is_dropped_and_counted[opc-past-payload]":
                          "should not have",
                          "test_hostile_datagrams_get_no_reply": "should not have"},
    "format2-answered": {"test_hostile_datagram_is_dropped_and_counted[format2-shaped-like-get]":
                         "should not have",
                         "test_counters_are_exact": None},
    "counts-nothing": {"test_counters_are_exact": None,
                       "test_signal_prints_counters_and_exits_0": None,
                       "test_hostile_datagram_is_dropped_and_counted[empty]": None},
    "seti-replies-on-success": {"test_seti_success_sends_nothing_and_persists": "should not have"},
    "setc-applies-refused": {"test_set_range[b3]": "refused): value",
                             "test_setc_sna_keeps_accepted_sets": None,
                             "test_seti_sna": None},
    "instance-zero-ignored": {"test_instance_zero_means_every_instance": "no reply"},
}  # fmt: skip
CONTROLLER_CAUGHT: dict[str, dict[str, str | None]] = {
    "accepts-any-tid": {"test_reply_with_another_tid_is_ignored": None,
                        "test_bench_ignores_duplicate_replies": None,
                        "test_bench_ignores_a_late_reply": None},
    "accepts-any-source": {"test_reply_from_another_address_is_ignored": None},
    "no-retry": {
        "test_unanswered_request_fails_after_1_plus_retries_attempts[client=adhoc-2]": None,
        "test_retry_that_is_answered_succeeds": None,
    },
    "retries-forever": {
        "test_unanswered_request_fails_after_1_plus_retries_attempts[client=adhoc-0]":
        "did not finish"
    },
    "tid-starts-at-0": {"test_tid_starts_at_1_and_increases": "TIDs 1, 2, 3",
                        "test_get": None},
}  # fmt: skip
CAUGHT = {**NODE_CAUGHT, **CONTROLLER_CAUGHT}

pytestmark = pytest.mark.selftest


def _args(node_bug: str | None = None, controller_bug: str | None = None) -> tuple[list, list]:
    """(--impl-argv as a list, extra pytest arguments giving the controller)."""
    py = sys.executable
    node = [py, str(PROGRAM), "node", *(["--bug", node_bug] if node_bug else [])]
    ctl = [py, str(PROGRAM), "controller", *(["--bug", controller_bug] if controller_bug else [])]
    return node, ["--impl-client-argv", shlex.join(ctl)]


def test_correct_programs_pass(tmp_path):
    """The control: the whole suite, node and controller without a bug."""
    node, extra = _args()
    results = run_suite(SUITE, node, tmp_path, extra=extra)
    assert len(results) > 150, f"only {len(results)} tests ran"
    assert not not_passed(results), not_passed(results)


def test_every_bug_is_checked():
    """Each bug of selftest/impl.py has its entry here, and each entry is a bug there."""
    assert sorted(list_bugs(PROGRAM)) == sorted(CAUGHT)


@pytest.mark.parametrize("bug", sorted(CAUGHT))
def test_suite_catches_bug(tmp_path, bug):
    node, extra = _args(bug, None) if bug in NODE_CAUGHT else _args(None, bug)
    results = run_suite(SUITE, node, tmp_path, list(CAUGHT[bug]), extra=extra)
    problems = uncaught(results, CAUGHT[bug])
    assert not problems, f"{bug}:\n" + "\n".join(problems)
