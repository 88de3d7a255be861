"""The suite's own test: it must pass a correct host and FAIL each classic broken host.

A conformance test that passes everything proves nothing. Each host in broken_hosts/ is the
correct reference host with ONE classic mistake; this runs the conformance tests that target
that mistake against it (pytest in a subprocess, `--host-argv`) and asserts that exactly those
tests fail. The reference host itself must pass the whole suite, so the failures come from
the bugs, not from the suite.

Runs only when no --impl/--host-argv is given (conftest deselects it otherwise). The runs go in
parallel and use short timeouts (a broken host that hangs costs 2 s, not 10).
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest

SUITE = Path(__file__).resolve().parent
BROKEN = SUITE / "broken_hosts"
ROOT = SUITE.parents[2]

# broken host → {conformance test (with the ad-hoc host's id) that must FAIL against it: a
# fragment its failure message must contain (the suite names the bug), or None}.
MUST_FAIL: dict[str, dict[str, str | None]] = {
    "eight_byte_length": {
        "test_ping_pong[adhoc-plain]": "8-byte length",
        "test_reply_length_prefix_is_4_byte_little_endian[adhoc]": "8-byte length",
        "test_stdout_is_only_frames[adhoc]": "8-byte length",
        "test_spawn_mode_one_message_per_process[adhoc]": "8-byte length",
    },
    "big_endian_length": {
        # It reads our little-endian prefixes as huge lengths too, so it quits at once.
        "test_ping_pong[adhoc-plain]": "host closed",
        "test_reply_length_prefix_is_4_byte_little_endian[adhoc]": None,
        "test_stdout_is_only_frames[adhoc]": None,
        "test_oversized_length_prefix_exits_at_once[adhoc-64MiB+1]": "still running",
    },
    "char_count_length": {
        "test_reply_length_counts_bytes_not_characters[adhoc]": "counts characters",
        "test_stdout_is_only_frames[adhoc]": "not valid JSON",
        "test_echo_simple[adhoc]": "not valid JSON",
        "test_echo_value[adhoc-non-ascii-raw]": "not valid JSON",
    },
    "unflushed_stdout": {
        "test_each_reply_flushed_before_next_request[adhoc]": "does not flush",
        "test_spawn_mode_one_message_per_process[adhoc]": "does not flush",
        "test_ping_pong[adhoc-plain]": "does not flush",
    },
    "no_length_cap": {
        "test_oversized_length_prefix_exits_at_once[adhoc-64MiB+1]": "still running",
        "test_oversized_length_prefix_exits_at_once[adhoc-2^31]": None,
        "test_oversized_length_prefix_exits_at_once[adhoc-2^32-1]": None,
    },
    "signed_length": {
        "test_oversized_length_prefix_exits_at_once[adhoc-2^31]": None,
        "test_oversized_length_prefix_exits_at_once[adhoc-2^32-1]": None,
        "test_oversized_length_prefix_exits_at_once[adhoc-2^31+23]": None,
    },
    "traceback_on_eof": {
        "test_eof_before_any_frame[adhoc]": "Traceback",
        "test_eof_after_frames[adhoc]": "Traceback",
        "test_eof_inside_length_prefix[adhoc-2]": "Traceback",
        "test_spawn_mode_one_message_per_process[adhoc]": "Traceback",
    },
    "partial_frame_is_clean_eof": {
        "test_eof_inside_length_prefix[adhoc-1]": "must exit non-zero",
        "test_eof_inside_length_prefix[adhoc-3]": "must exit non-zero",
        "test_eof_inside_body[adhoc-no-body]": "must exit non-zero",
        "test_eof_inside_body[adhoc-50-bytes]": "must exit non-zero",
        "test_eof_inside_frame_after_good_frames[adhoc]": "must exit non-zero",
    },
    "text_on_stdout": {
        "test_eof_before_any_frame[adhoc]": "native host ready",
        "test_stdout_is_only_frames[adhoc]": "writes text",
        "test_ping_pong[adhoc-plain]": "writes text",
    },
    "no_reply_cap": {
        "test_echo_over_reply_cap_gets_error[adhoc]": "larger than 1 MiB",
        "test_fill_invalid[adhoc-over-cap]": "larger than 1 MiB",
    },
    "caps_off_by_one": {
        "test_fill_sizes[adhoc]": "must be exactly 1048576",
        "test_request_of_exactly_64_mib_is_answered[adhoc]": None,
    },
    "one_read_one_frame": {
        "test_one_byte_per_write[adhoc]": None,
        "test_split_at_every_offset[adhoc]": "split at byte 1",
        "test_many_frames_in_one_write[adhoc]": None,
        "test_eof_right_after_unanswered_frames[adhoc]": None,
        "test_large_frames_back_to_back[adhoc]": None,
    },
    "quits_after_one_reply": {
        "test_eof_after_frames[adhoc]": "host closed",
        "test_each_reply_flushed_before_next_request[adhoc]": "host closed",
        "test_bad_body_gets_error_reply_and_host_keeps_serving[adhoc-unknown-op]": "host closed",
        "test_many_frames_in_one_write[adhoc]": "host closed",
    },
    "accepts_nan": {
        "test_bad_body_gets_error_reply_and_host_keeps_serving[adhoc-nan]": "NaN is not JSON",
        "test_bad_body_gets_error_reply_and_host_keeps_serving[adhoc-infinity]": "not JSON",
        "test_bad_body_gets_error_reply_and_host_keeps_serving[adhoc-minus-infinity]": "not JSON",
    },
    "replaces_bad_utf8": {
        f"test_bad_body_gets_error_reply_and_host_keeps_serving[adhoc-{case}]": "error reply"
        for case in ("utf8-invalid-byte-in-string", "utf8-overlong-2", "utf8-surrogate")
    },
    "crash_on_bad_json": {
        "test_bad_body_gets_error_reply_and_host_keeps_serving[adhoc-text]": "Traceback",
        "test_bad_body_gets_error_reply_and_host_keeps_serving[adhoc-utf8-ff-fe]": "Traceback",
        "test_garbage_bodies_keep_the_host_serving[adhoc]": "Traceback",
    },
    "ignores_write_errors": {
        "test_reader_gone_ends_the_host_cleanly[adhoc]": "still running",
    },
    "stack_overflow": {
        "test_deep_nesting_never_crashes[adhoc-arrays-1e6]": "SIGSEGV",
        "test_deep_nesting_never_crashes[adhoc-objects-1e6]": "SIGSEGV",
    },
    "strict_argv": {
        "test_browser_argv_accepted[adhoc-firefox]": "usage",
        "test_browser_argv_accepted[adhoc-chromium-windows-style]": "usage",
    },
    "c_string_op": {
        "test_bad_body_gets_error_reply_and_host_keeps_serving[adhoc-op-with-nul]": "error reply",
    },
    "sloppy_fill": {
        f"test_fill_invalid[adhoc-{case}]": "error reply"
        for case in ("float", "string", "2^32+23", "2^64+23")
    },
}

REFERENCE = "reference_host"


def _node_ids(names: list[str]) -> list[str]:
    """pytest node ids (file::name[params]) of test names, found by their `def` in the suite."""
    where = {}
    for path in SUITE.glob("test_*.py"):
        for m in re.finditer(r"^def (test_\w+)\(", path.read_text(), re.M):
            where[m.group(1)] = path
    ids = []
    for name in names:
        func = name.split("[")[0]
        if func not in where:
            raise AssertionError(f"no test function {func} in the suite (renamed?)")
        ids.append(f"{where[func]}::{name}")
    return ids


def _run_suite(host: str, tests: list[str] | None, workdir: Path) -> dict[str, tuple[str, str]]:
    """Run the conformance suite (or the named tests) against broken_hosts/<host>.py.
    Returns test name → (outcome, failure message)."""
    junit = workdir / f"{host}.xml"
    host_argv = shlex.join([sys.executable, "-E", "-S", str(BROKEN / f"{host}.py")])
    cmd = [sys.executable, "-m", "pytest", "--host-argv", host_argv]
    cmd += ["--junitxml", str(junit), "-q", "-p", "no:cacheprovider", "-o", "addopts="]
    if tests is None:
        cmd.append(str(SUITE))
    else:
        # Short waits: a host that hangs shows it within 2 s.
        cmd += ["--reply-timeout", "2", "--exit-timeout", "2", *_node_ids(tests)]
    proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=240)
    if not junit.exists():
        raise AssertionError(f"pytest did not run ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    outcomes = {}
    for case in ET.parse(junit).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error"):
                outcome, message = "failed", child.get("message", "")
            elif child.tag == "skipped":
                outcome = "skipped"
        outcomes[case.get("name")] = (outcome, message)
    return outcomes


@pytest.fixture(scope="module")
def suite_runs(tmp_path_factory) -> dict[str, Future]:
    """Start every run at once (a few in parallel); each test waits for its own."""
    workdir = tmp_path_factory.mktemp("selftest")
    pool = ThreadPoolExecutor(max_workers=4)
    runs = {REFERENCE: pool.submit(_run_suite, REFERENCE, None, workdir)}
    for host, names in MUST_FAIL.items():
        runs[host] = pool.submit(_run_suite, host, list(names), workdir)
    yield runs
    pool.shutdown(wait=True, cancel_futures=True)


@pytest.mark.selftest
@pytest.mark.timeout(300)
def test_reference_host_passes_everything(suite_runs):
    """The control: a correct host passes every test (no test fails for a wrong reason)."""
    outcomes = suite_runs[REFERENCE].result()
    failed = {n: m for n, (o, m) in outcomes.items() if o != "passed"}
    assert len(outcomes) > 100, f"only {len(outcomes)} tests ran"
    assert not failed, f"the correct reference host does not pass: {failed}"


@pytest.mark.selftest
def test_every_broken_host_exists():
    """Each entry of MUST_FAIL names a file in broken_hosts/ and vice versa."""
    files = {p.stem for p in BROKEN.glob("*.py")} - {REFERENCE}
    assert files == set(MUST_FAIL), f"files {sorted(files)} vs MUST_FAIL {sorted(MUST_FAIL)}"


@pytest.mark.selftest
@pytest.mark.timeout(300)
@pytest.mark.parametrize("broken", sorted(MUST_FAIL))
def test_suite_fails_broken_host(suite_runs, broken):
    """Every test listed for this broken host must FAIL against it, for the listed reason."""
    outcomes = suite_runs[broken].result()
    problems = []
    for name, fragment in MUST_FAIL[broken].items():
        outcome, message = outcomes.get(name, ("not run", ""))
        if outcome != "failed":
            problems.append(f"{name} {outcome}: it does not catch the bug")
        elif fragment is not None and fragment not in message:
            problems.append(f"{name} failed without naming the bug ({fragment!r}): {message}")
    assert not problems, f"{broken}:\n" + "\n".join(problems)
