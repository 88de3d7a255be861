"""The redis driver's parsing: redis-benchmark's CSV, test names, request counts."""

from __future__ import annotations

import pytest
from driver import TrialError, parse_args, parse_csv, requests_per_test, short_test_name

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
    args = parse_args(["--bench", "-n 1", "--port", "7000", "--", "srv", "--port", "7000"])
    assert args.server == ["srv", "--port", "7000"] and args.port == 7000
    with pytest.raises(SystemExit):
        parse_args(["--bench", "-n 1", "--port", "70000", "--", "srv"])
    with pytest.raises(SystemExit):
        parse_args(["--bench", "-n 1", "--port", "7000"])
