"""Numbers as redis 7.0 reads and prints them.

* Integers: `string2ll` accepts exactly the canonical decimal spelling of a signed 64-bit
  integer (lives in protocol.py, which needs it for `*N`/`$N` headers).
* Doubles (sorted-set scores): glibc `strtod` plus redis's checks (`string2d`): no leading
  blank, nothing after the number, no NaN, and no overflow or underflow to zero. Hex floats
  and `inf`/`infinity` are valid, as they are for strtod. Python's float() is correctly
  rounded like glibc, so only the grammar needs care.
* Long doubles (INCRBYFLOAT, HINCRBYFLOAT): redis computes in x87 80-bit extended precision
  (64-bit significand) and prints with `%.17Lf`. Python has no such type, so values are kept
  exact as Fractions and rounded to the 80-bit format after every operation, as the FPU does.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

from protocol import INT64_MAX, INT64_MIN, parse_int64

__all__ = [
    "INT64_MAX",
    "INT64_MIN",
    "parse_int64",
    "parse_double",
    "parse_double_loose",
    "parse_long_double",
    "long_double_add",
    "is_finite",
    "format_long_double",
]

# strtod's grammar after optional blanks: sign, then a decimal or hex number, or inf/nan.
_DECIMAL = re.compile(rb"[+-]?(?:(\d+)\.?(\d*)|\.(\d+))(?:[eE]([+-]?\d+))?")
_HEX = re.compile(
    rb"[+-]?0[xX](?:([0-9a-fA-F]+)\.?([0-9a-fA-F]*)|\.([0-9a-fA-F]+))(?:[pP]([+-]?\d+))?"
)
_INF = re.compile(rb"[+-]?inf(?:inity)?", re.IGNORECASE)
_NAN = re.compile(rb"[+-]?nan(?:\([0-9A-Za-z_]*\))?", re.IGNORECASE)
_C_SPACES = b" \t\n\r\x0b\x0c"


def _strtod_prefix(text: bytes) -> tuple[str, re.Match | None, int]:
    """Which kind of number strtod reads at the start of text (after blanks), and where it
    stops: ("dec"|"hex"|"inf"|"nan"|"", match, end)."""
    start = len(text) - len(text.lstrip(_C_SPACES))
    best = ("", None, 0)
    for kind, pattern in (("hex", _HEX), ("dec", _DECIMAL), ("inf", _INF), ("nan", _NAN)):
        m = pattern.match(text, start)
        if m and m.end() > best[2]:
            best = (kind, m, m.end())
    return best


def _strtod(text: bytes) -> tuple[float, int, bool]:
    """glibc strtod: (value, bytes consumed, ERANGE set)."""
    kind, m, end = _strtod_prefix(text)
    if not kind:
        return 0.0, 0, False
    literal = m.group(0)
    negative = literal.lstrip(_C_SPACES)[:1] == b"-"
    if kind == "inf":
        return (-math.inf if negative else math.inf), end, False
    if kind == "nan":
        return math.nan, end, False
    nonzero = any(g and g.strip(b"0") for g in m.groups()[:3])
    if kind == "hex":
        try:
            value = float.fromhex(literal.lstrip(_C_SPACES).decode())
        except OverflowError:
            return (-math.inf if negative else math.inf), end, True
    else:
        value = float(literal)
    if math.isinf(value):
        return value, end, True
    if value == 0.0:
        return (-0.0 if negative else 0.0), end, nonzero
    return value, end, abs(value) < 2.2250738585072014e-308


def _hex_fraction(m: re.Match) -> Fraction:
    whole, frac, only_frac, exp = m.groups()
    digits = (whole or b"") + (frac or b"") + (only_frac or b"")
    scale = len(frac or b"") + len(only_frac or b"")
    mantissa = int(digits, 16)
    e = int(exp) if exp else 0
    e -= 4 * scale
    if mantissa == 0:
        return Fraction(0)
    if e > 100_000:
        e = 100_000
    if e < -100_000:
        e = -100_000
    return Fraction(mantissa) * (Fraction(2) ** e)


def parse_double(text: bytes) -> float | None:
    """redis's string2d (scores, ZADD/ZINCRBY increments): a float or None."""
    if not text:
        return None
    if text.isdigit() and len(text) < 300:  # the common case: 0, 123, 000000000123
        return float(text)
    if text[0] in _C_SPACES:
        return None
    value, end, erange = _strtod(text)
    if end != len(text) or value != value:
        return None
    if erange and (math.isinf(value) or value == 0.0):
        return None
    return value


def parse_double_loose(text: bytes) -> float | None:
    """strtod as zslParseRange calls it: blanks first, overflow and an empty string allowed;
    only trailing bytes (C-string end: a NUL ends the text) and NaN are refused."""
    nul = text.find(b"\0")
    if nul >= 0:
        text = text[:nul]
    if not text:
        return 0.0  # strtod("") converts nothing, and its end pointer is at the NUL
    value, end, _ = _strtod(text)
    if end != len(text) or value != value:
        return None
    return value


# --- long double (x87 80-bit extended) ---------------------------------------------------

_LD_MANT = 64  # significand bits, explicit integer bit included
_LD_EMIN = -16382  # smallest normal exponent
_LD_EMAX = 16383
_LD_MAX_CHARS = 5 * 1024  # MAX_LONG_DOUBLE_CHARS

LD_INF = math.inf


def _ld_round(x: Fraction) -> Fraction | float:
    """Round an exact value to the nearest 80-bit long double (ties to even), or ±inf."""
    if x == 0:
        return Fraction(0)
    negative = x < 0
    a = -x if negative else x
    e = a.numerator.bit_length() - a.denominator.bit_length()
    if Fraction(2) ** e > a:  # bit-length difference may overshoot by one
        e -= 1
    e = max(e, _LD_EMIN)
    shift = _LD_MANT - 1 - e
    scaled = a * (Fraction(2) ** shift)
    m = round(scaled)  # Fraction.__round__ rounds half to even
    if m >= 1 << _LD_MANT:
        m >>= 1
        shift -= 1
        e += 1
    if e > _LD_EMAX:
        return -LD_INF if negative else LD_INF
    value = Fraction(m) / (Fraction(2) ** shift)
    return -value if negative else value


def parse_long_double(text: bytes) -> Fraction | float | None:
    """redis's string2ld: an exact long double value (or ±inf), or None when redis refuses
    the text: empty, too long, leading blank, trailing bytes, NaN, overflow, underflow to 0."""
    if not text or len(text) >= _LD_MAX_CHARS or text[0] in _C_SPACES:
        return None
    nul = text.find(b"\0")
    if nul >= 0:  # strtold sees a C string; the bytes after NUL are "left over"
        return None
    kind, m, end = _strtod_prefix(text)
    if not kind or end != len(text) or kind == "nan":
        return None
    negative = text[:1] == b"-"
    if kind == "inf":
        return -LD_INF if negative else LD_INF
    exact = _hex_fraction(m) if kind == "hex" else _decimal_fraction(m)
    if exact is None:  # exponent far out of range
        return None
    if exact == 0:
        return Fraction(0)
    value = _ld_round(exact)
    if isinstance(value, float) or value == 0:
        return None  # ERANGE: overflow to HUGE_VALL or underflow to zero
    return -value if negative else value


def _decimal_fraction(m: re.Match) -> Fraction | None:
    whole, frac, only_frac, exp = m.groups()
    digits = ((whole or b"") + (frac or b"") + (only_frac or b"")).lstrip(b"0")
    if not digits:
        return Fraction(0)
    scale = len(frac or b"") + len(only_frac or b"")
    e = int(exp) if exp else 0
    magnitude = len(digits) - scale + e  # the value is below 10**magnitude
    if magnitude > 4940 or magnitude < -4970:
        return None  # certainly overflows or underflows an 80-bit long double
    return Fraction(int(digits)) * (Fraction(10) ** (e - scale))


def long_double_add(a: Fraction | float, b: Fraction | float) -> Fraction | float:
    """a + b in long double arithmetic; either may be ±inf, and inf - inf is NaN."""
    if isinstance(a, float) or isinstance(b, float):
        if isinstance(a, float) and isinstance(b, float):
            return a + b
        return a if isinstance(a, float) else b
    return _ld_round(a + b)


def is_finite(value: Fraction | float) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def format_long_double(value: Fraction) -> bytes:
    """`%.17Lf` with trailing zeros (and a bare point) removed, and `-0` printed as `0`."""
    negative = value < 0
    a = -value if negative else value
    q = round(a * 10**17)  # glibc printf rounds exactly, ties to even
    whole, frac = divmod(q, 10**17)
    text = b"%d.%017d" % (whole, frac)
    text = text.rstrip(b"0").rstrip(b".")
    if negative and text != b"0":
        text = b"-" + text
    return text
