"""numeric: strtod as redis checks it (string2d), and long double arithmetic (INCRBYFLOAT)."""

import math

import pytest
from redis_impl.numeric import (
    format_long_double,
    long_double_add,
    parse_double,
    parse_double_loose,
    parse_long_double,
)


@pytest.mark.parametrize(
    "text, value",
    [
        (b"0", 0.0),
        (b"000000000123", 123.0),
        (b"-1.5e3", -1500.0),
        (b".5", 0.5),
        (b"1.", 1.0),
        (b"+5", 5.0),
        (b"0x1p-3", 0.125),
        (b"inf", math.inf),
        (b"-Infinity", -math.inf),
        (b"4e-320", 4e-320),  # subnormal: ERANGE, but not zero, so accepted
        (b"nan", None),
        (b"1e400", None),  # overflow
        (b"1e-400", None),  # underflow to zero
        (b" 1", None),
        (b"1 ", None),
        (b"1e", None),
        (b"1_0", None),
        (b"", None),
        (b"0x", None),
    ],
)
def test_parse_double(text, value):
    assert parse_double(text) == value


def test_range_bounds_parse_loosely():
    assert parse_double_loose(b"") == 0.0  # strtod("") reads nothing and ends at the NUL
    assert parse_double_loose(b" 1") == 1.0
    assert parse_double_loose(b"1e400") == math.inf
    assert parse_double_loose(b"1\x00junk") == 1.0
    assert parse_double_loose(b"x") is None


def ld(text: bytes) -> bytes:
    return format_long_double(parse_long_double(text))


def test_long_double_round_trips_and_sums():
    assert ld(b"10.5") == b"10.5"
    assert ld(b"5.0e3") == b"5000"
    assert ld(b"-0") == b"0"
    assert ld(b"0.1") == b"0.1"  # %.17Lf of the 64-bit-significand value, zeros trimmed
    total = long_double_add(parse_long_double(b"10.5"), parse_long_double(b"0.1"))
    assert format_long_double(total) == b"10.6"  # a double would print 10.59999999999999964
    assert format_long_double(parse_long_double(b"1.0000000000000000001")) == b"1"
    assert ld(b"1e400").startswith(b"10000000000000000000281880")  # beyond double's range


@pytest.mark.parametrize("text", [b"", b" 1", b"1 ", b"nan", b"1e5000", b"1e-5000", b"a"])
def test_long_double_refusals(text):
    assert parse_long_double(text) is None


def test_long_double_infinities():
    inf = parse_long_double(b"inf")
    assert inf == math.inf
    assert long_double_add(inf, parse_long_double(b"1")) == math.inf
    assert math.isnan(long_double_add(inf, parse_long_double(b"-inf")))
