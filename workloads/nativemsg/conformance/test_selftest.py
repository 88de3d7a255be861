"""The suite's self-test (see msgbench.conformance_selftest): the correct host of selftest/ must
pass the whole suite, and the same host with each classic bug (selftest/impl.py --bug NAME) must
FAIL the tests listed for that bug, with a message that names it.

Runs only when no --impl/--impl-argv is given (the plugin deselects it otherwise). The runs go in
parallel and use short timeouts (a host that hangs costs 2 s, not 10).
"""

from __future__ import annotations

import sys
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

from msgbench.conformance_selftest import list_bugs, not_passed, run_suite, uncaught

SUITE = Path(__file__).resolve().parent
PROGRAM = SUITE / "selftest" / "impl.py"
CORRECT = "correct"

pytestmark = pytest.mark.selftest

# bug -> {case (the test's name without the implementation) that must FAIL against it: a
# fragment its failure message must contain (the suite names the bug), or None}.
CAUGHT: dict[str, dict[str, str | None]] = {
    "eight-byte-length": {
        "test_ping_pong[plain]": "8-byte length",
        "test_reply_length_prefix_is_4_byte_little_endian": "8-byte length",
        "test_stdout_is_only_frames": "8-byte length",
        "test_spawn_mode_one_message_per_process": "8-byte length",
    },
    "big-endian-length": {
        # It reads our little-endian prefixes as huge lengths too, so it quits at once.
        "test_ping_pong[plain]": "host closed",
        "test_reply_length_prefix_is_4_byte_little_endian": None,
        "test_stdout_is_only_frames": None,
        "test_oversized_length_prefix_exits_at_once[64MiB+1]": "still running",
    },
    "char-count-length": {
        "test_reply_length_counts_bytes_not_characters": "counts characters",
        "test_stdout_is_only_frames": "not valid JSON",
        "test_echo_simple": "not valid JSON",
        "test_echo_value[non-ascii-raw]": "not valid JSON",
    },
    "unflushed-stdout": {
        "test_each_reply_flushed_before_next_request": "does not flush",
        "test_spawn_mode_one_message_per_process": "does not flush",
        "test_ping_pong[plain]": "does not flush",
    },
    "no-length-cap": {
        "test_oversized_length_prefix_exits_at_once[64MiB+1]": "still running",
        "test_oversized_length_prefix_exits_at_once[2^31]": None,
        "test_oversized_length_prefix_exits_at_once[2^32-1]": None,
    },
    "signed-length": {
        "test_oversized_length_prefix_exits_at_once[2^31]": None,
        "test_oversized_length_prefix_exits_at_once[2^32-1]": None,
        "test_oversized_length_prefix_exits_at_once[2^31+23]": None,
    },
    "traceback-on-eof": {
        "test_eof_before_any_frame": "Traceback",
        "test_eof_after_frames": "Traceback",
        "test_eof_inside_length_prefix[2]": "Traceback",
        "test_spawn_mode_one_message_per_process": "Traceback",
    },
    "partial-frame-is-clean-eof": {
        "test_eof_inside_length_prefix[1]": "must exit non-zero",
        "test_eof_inside_length_prefix[3]": "must exit non-zero",
        "test_eof_inside_body[no-body]": "must exit non-zero",
        "test_eof_inside_body[50-bytes]": "must exit non-zero",
        "test_eof_inside_frame_after_good_frames": "must exit non-zero",
    },
    "text-on-stdout": {
        "test_eof_before_any_frame": "native host ready",
        "test_stdout_is_only_frames": "writes text",
        "test_ping_pong[plain]": "writes text",
    },
    "no-reply-cap": {
        "test_echo_over_reply_cap_gets_error": "larger than 1 MiB",
        "test_fill_invalid[over-cap]": "larger than 1 MiB",
    },
    "caps-off-by-one": {
        "test_fill_sizes": "must be exactly 1048576",
        "test_request_of_exactly_64_mib_is_answered": None,
    },
    "one-read-one-frame": {
        "test_one_byte_per_write": None,
        "test_split_at_every_offset": "split at byte 1",
        "test_many_frames_in_one_write": None,
        "test_eof_right_after_unanswered_frames": None,
        "test_large_frames_back_to_back": None,
    },
    "quits-after-one-reply": {
        "test_eof_after_frames": "host closed",
        "test_each_reply_flushed_before_next_request": "host closed",
        "test_bad_body_gets_error_reply_and_host_keeps_serving[unknown-op]": "host closed",
        "test_many_frames_in_one_write": "host closed",
    },
    "accepts-nan": {
        "test_bad_body_gets_error_reply_and_host_keeps_serving[nan]": "NaN is not JSON",
        "test_bad_body_gets_error_reply_and_host_keeps_serving[infinity]": "not JSON",
        "test_bad_body_gets_error_reply_and_host_keeps_serving[minus-infinity]": "not JSON",
    },
    "replaces-bad-utf8": {
        f"test_bad_body_gets_error_reply_and_host_keeps_serving[{case}]": "error reply"
        for case in ("utf8-invalid-byte-in-string", "utf8-overlong-2", "utf8-surrogate")
    },
    "crash-on-bad-json": {
        "test_bad_body_gets_error_reply_and_host_keeps_serving[text]": "Traceback",
        "test_bad_body_gets_error_reply_and_host_keeps_serving[utf8-ff-fe]": "Traceback",
        "test_garbage_bodies_keep_the_host_serving": "Traceback",
    },
    "ignores-write-errors": {
        "test_reader_gone_ends_the_host_cleanly": "still running",
    },
    "stack-overflow": {
        "test_deep_nesting_never_crashes[arrays-1e6]": "SIGSEGV",
        "test_deep_nesting_never_crashes[objects-1e6]": "SIGSEGV",
    },
    "strict-argv": {
        "test_browser_argv_accepted[firefox]": "usage",
        "test_browser_argv_accepted[chromium-windows-style]": "usage",
    },
    "c-string-op": {
        "test_bad_body_gets_error_reply_and_host_keeps_serving[op-with-nul]": "error reply",
    },
    "sloppy-fill": {
        f"test_fill_invalid[{case}]": "error reply"
        for case in ("float", "string", "2^32+23", "2^64+23")
    },
}


def _argv(bug: str | None) -> list[str]:
    """Started as a browser starts a host: the program, then the caller's origin."""
    return [sys.executable, "-E", "-S", str(PROGRAM), *(["--bug", bug] if bug else []), "{origin}"]


@pytest.fixture(scope="module")
def suite_runs(tmp_path_factory) -> dict[str, Future]:
    """Start every run at once (a few in parallel); each test waits for its own."""
    workdir = tmp_path_factory.mktemp("selftest")
    short = ["--reply-timeout", "2", "--exit-timeout", "2"]  # a host that hangs shows it in 2 s
    pool = ThreadPoolExecutor(max_workers=4)
    runs = {CORRECT: pool.submit(run_suite, SUITE, _argv(None), workdir)}
    for bug, cases in CAUGHT.items():
        runs[bug] = pool.submit(run_suite, SUITE, _argv(bug), workdir, list(cases), short, 240)
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.timeout(300)
def test_correct_host_passes_everything(suite_runs):
    """The control: the host without a bug passes every test (none fails for a wrong reason)."""
    results = suite_runs[CORRECT].result()
    assert len(results) > 100, f"only {len(results)} tests ran"
    assert not not_passed(results), f"the correct host does not pass: {not_passed(results)}"


def test_every_bug_is_checked():
    """Each bug of selftest/impl.py has its entry in CAUGHT, and each entry is a bug there."""
    assert sorted(list_bugs(PROGRAM)) == sorted(CAUGHT)


@pytest.mark.timeout(300)
@pytest.mark.parametrize("bug", sorted(CAUGHT))
def test_suite_catches_bug(suite_runs, bug):
    """Every test listed for this bug must FAIL against it, for the listed reason."""
    problems = uncaught(suite_runs[bug].result(), CAUGHT[bug])
    assert not problems, f"{bug}:\n" + "\n".join(problems)
