"""The redis driver: redis-benchmark's CSV, test names, request counts, its command line and
the server's CPU clock."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import pytest
from driver import (
    TrialError,
    cpu_list,
    parse_args,
    parse_csv,
    per_test_cpu,
    process_cpu_ns,
    requests_per_test,
    short_test_name,
    stream_lines,
)

CSV = (
    '"test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms",'
    '"p99_latency_ms","max_latency_ms"\n'
    '"PING_INLINE","90909.09","0.291","0.080","0.279","0.415","0.583","1.135"\n'
    '"LPUSH (needed to benchmark LRANGE)","inf","0.300","0.100","0.300","0.400","0.500","0.600"\n'
    '"LRANGE_100 (first 100 elements)","40000.00","0.9","0.2","0.8","1.1","1.5","2.0"\n'
)


def test_csv_rows_become_tests():
    tests = parse_csv(CSV)
    assert list(tests) == ["PING_INLINE", "LPUSH_LRANGE", "LRANGE_100"]
    assert tests["PING_INLINE"]["rps"] == 90909.09
    assert tests["PING_INLINE"]["p50_ms"] == 0.279 and tests["PING_INLINE"]["p99_ms"] == 0.583
    assert tests["LPUSH_LRANGE"]["rps"] is None  # "inf" with a tiny -n is not a rate


def test_each_test_gets_the_server_cpu_since_the_line_before():
    """The CPU clock read as each CSV line arrived, split per test: the header is skipped, the
    first test counts from the start, the rest from the previous test's line."""
    rows = CSV.splitlines()
    lines = [(rows[0], 1_500), (rows[1], 3_000), (rows[2], 7_000), (rows[3], 8_000), ("", 9_000)]
    per_req = per_test_cpu(lines, 1_000, requests=2)
    assert per_req == {"PING_INLINE": 1.0, "LPUSH_LRANGE": 2.0, "LRANGE_100": 0.5}


def test_lines_are_read_as_they_are_printed():
    """A child that prints to its stdout with stdio's default buffering (Python's, like
    redis-benchmark's printf): each line arrives when printed, not at exit, and with no \\r."""
    script = "import time\nprint('a,1')\ntime.sleep(0.3)\nprint('b,2')\nprint('c', end='')"
    lines, err, status = stream_lines([sys.executable, "-c", script], None, 60, time.monotonic)
    assert (status, err) == (0, "")
    assert [ln for ln, _ in lines] == ["a,1", "b,2", "c"]
    assert lines[1][1] - lines[0][1] >= 0.25
    lines, err, status = stream_lines(
        [sys.executable, "-c", "import sys; sys.exit('failed')"], None, 60, time.monotonic
    )
    assert (lines, err, status) == ([], "failed\n", 1)
    with pytest.raises(TrialError, match="did not finish"):
        stream_lines([sys.executable, "-c", "import time; time.sleep(30)"], None, 0.3, int)


def test_csv_without_header_is_an_error():
    with pytest.raises(TrialError):
        parse_csv("Error: Connection refused\n")
    with pytest.raises(TrialError):
        parse_csv(CSV.splitlines()[0] + "\n")


def test_names_and_counts():
    assert short_test_name("LRANGE_600 (first 600 elements)") == "LRANGE_600"
    assert short_test_name("SET") == "SET"
    assert requests_per_test("-c 50 -P 16 -n 2000") == 2000
    assert requests_per_test("-t get") == 100_000


def test_arguments():
    args = parse_args(
        ["--bench", "-n 1", "--port", "7000", "--driver-cpus", "0", "--impl-cpus", "1-2"]
        + ["--impl-stderr", "/dev/null", "--impl-cwd", "/", "--", "srv", "--port", "7000"]
    )
    assert args.server == ["srv", "--port", "7000"] and args.port == 7000
    assert (args.driver_cpus, args.impl_cpus, args.impl_cwd) == ([0], [1, 2], "/")
    for bad in (
        ["--port", "70000", "--", "srv"],
        ["--port", "7000"],
        ["--port", "7000", "--host-cpus", "1", "--", "srv"],
        ["--port", "7000", "--timeout-s", "0", "--", "srv"],
    ):
        with pytest.raises(SystemExit):
            parse_args(["--bench", "-n 1", *bad])


def test_cpu_lists():
    assert cpu_list("1") == [1] and cpu_list("2,0") == [2, 0] and cpu_list("0-2,5") == [0, 1, 2, 5]
    for bad in ("", "a", "3-1", "-1", "1,"):
        with pytest.raises(argparse.ArgumentTypeError):
            cpu_list(bad)


def test_a_bad_command_line_prints_the_error_document():
    done = subprocess.run(
        [sys.executable, "driver.py", "--bench", "-n 1", "--port", "0", "--", "srv"],
        cwd=os.path.dirname(os.path.abspath(__file__)),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert json.loads(done.stdout) == {"error": "bad command line: --port 0 is not a TCP port"}
    assert "--port 0" in done.stderr


def _ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_the_process_cpu_clock_agrees_with_the_kernels_ticks():
    """The clock id computed for a pid reads that process's CPU time: for a busy child it
    agrees with utime + stime of /proc/<pid>/stat to within the ticks' resolution."""
    child = subprocess.Popen(["sh", "-c", "while :; do :; done"])
    try:
        tick_ns = 1e9 / os.sysconf("SC_CLK_TCK")
        # Enough CPU for the ticks to mean something; the bound is generous for a busy machine.
        deadline = time.monotonic() + 60
        while process_cpu_ns(child.pid) < 300e6:
            assert time.monotonic() < deadline, "the child got no CPU"
            time.sleep(0.02)
        before = _ticks(child.pid)
        clock = process_cpu_ns(child.pid)
        after = _ticks(child.pid)
        assert before * tick_ns - 2 * tick_ns <= clock <= after * tick_ns + 2 * tick_ns
        assert process_cpu_ns(child.pid) >= clock
    finally:
        child.kill()
        child.wait()
    with pytest.raises(TrialError):
        process_cpu_ns(child.pid)  # reaped: no such process
