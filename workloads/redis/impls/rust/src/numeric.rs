//! Numbers as redis reads and prints them.
//!
//! redis is strict about integers (`string2ll`: no `+`, no leading zeros, no blanks, at most
//! 20 characters), lenient in the C way about floats (`strtod`: `inf`, `1e3`, `.5`), and
//! prints doubles with `%.17g`. Rust has no `%g`, so `format_double` builds it from the
//! correctly rounded 17-digit scientific form that `{:.16e}` gives.

use std::fmt::Write;

/// redis's `string2ll`. `None` for anything that is not a canonical decimal i64.
pub fn parse_i64(s: &[u8]) -> Option<i64> {
    if s.is_empty() || s.len() >= 21 {
        return None;
    }
    if s == b"0" {
        return Some(0);
    }
    let (negative, digits) = match s[0] {
        b'-' => (true, &s[1..]),
        _ => (false, s),
    };
    match digits.first() {
        Some(b'1'..=b'9') => {}
        _ => return None,
    }
    let mut v: u64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v.checked_mul(10)?.checked_add(u64::from(c - b'0'))?;
    }
    if negative {
        if v > i64::MAX as u64 + 1 {
            return None;
        }
        Some((v as i64).wrapping_neg())
    } else {
        i64::try_from(v).ok()
    }
}

/// C's `isspace` in the "C" locale.
pub fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// What `strtod` accepts as a whole string, as a finite or infinite f64; `None` if the
/// string is not entirely a number. Hexadecimal floats (`0x10`, `0x1.8p3`) included.
pub fn strtod(s: &[u8]) -> Option<f64> {
    if let Some(hex) = HexFloat::parse(s) {
        return Some(hex.to_f64());
    }
    let text = std::str::from_utf8(s).ok()?;
    // Rust's parser agrees with strtod on decimal forms, `inf`, `infinity` and `nan` (any
    // case, optional sign); it rejects leading blanks, which strtod would skip.
    if text.is_empty() || is_c_space(s[0]) {
        return None;
    }
    text.parse::<f64>().ok()
}

/// A whole-string C hexadecimal float: `[sign] 0x hexdigits [. hexdigits] [p [sign] digits]`
/// (at least one hex digit), as `(-1)^negative × mantissa × 2^exp`, with `sticky` set when
/// non-zero digits beyond the 128 bits kept were dropped. strtod and strtold accept these.
pub struct HexFloat {
    pub negative: bool,
    pub mantissa: u128,
    pub exp: i64,
    pub sticky: bool,
}

impl HexFloat {
    pub fn parse(s: &[u8]) -> Option<HexFloat> {
        let (negative, body) = match s.first()? {
            b'-' => (true, &s[1..]),
            b'+' => (false, &s[1..]),
            _ => (false, s),
        };
        let body = body
            .strip_prefix(b"0x")
            .or_else(|| body.strip_prefix(b"0X"))?;
        let (mut mantissa, mut exp, mut sticky) = (0u128, 0i64, false);
        let (mut digits, mut point, mut i) = (0, false, 0);
        while i < body.len() {
            let c = body[i];
            if c == b'.' && !point {
                point = true;
            } else if let Some(d) = (c as char).to_digit(16) {
                digits += 1;
                if mantissa >> 124 == 0 {
                    mantissa = mantissa << 4 | u128::from(d);
                    if point {
                        exp -= 4;
                    }
                } else {
                    sticky |= d != 0; // beyond 128 bits: only whether anything was dropped
                    if !point {
                        exp += 4;
                    }
                }
            } else {
                break;
            }
            i += 1;
        }
        if digits == 0 {
            return None; // "0x" alone: strtod reads the 0 and stops at the x
        }
        if i < body.len() {
            let rest = body[i + 1..].as_ref();
            if body[i] != b'p' && body[i] != b'P' {
                return None;
            }
            let (exp_negative, exp_digits) = match rest.first() {
                Some(b'-') => (true, &rest[1..]),
                Some(b'+') => (false, &rest[1..]),
                _ => (false, rest),
            };
            if exp_digits.is_empty() || !exp_digits.iter().all(u8::is_ascii_digit) {
                return None;
            }
            let mut e: i64 = 0;
            for &c in exp_digits {
                e = (e * 10 + i64::from(c - b'0')).min(1 << 40);
            }
            exp += if exp_negative { -e } else { e };
        }
        Some(HexFloat {
            negative,
            mantissa,
            exp,
            sticky,
        })
    }

    /// The nearest f64 (round to nearest, ties to even; ±inf past the largest finite value).
    pub fn to_f64(&self) -> f64 {
        let sign = if self.negative { -1.0 } else { 1.0 };
        if self.mantissa == 0 {
            return sign * 0.0;
        }
        let bits = 128 - i64::from(self.mantissa.leading_zeros());
        // Keep 53 significant bits, fewer where the result is subnormal (its last bit is
        // worth 2^-1074).
        let mut shift = bits - 53;
        if self.exp + shift < -1074 {
            shift = -1074 - self.exp;
        }
        if shift >= 128 {
            return sign * 0.0; // far below the smallest subnormal
        }
        let mut sig = if shift > 0 {
            let kept = self.mantissa >> shift;
            let half = 1u128 << (shift - 1);
            let rest = self.mantissa & ((1u128 << shift) - 1);
            let round_up = rest > half || (rest == half && (self.sticky || kept & 1 == 1));
            kept + u128::from(round_up)
        } else {
            self.mantissa << -shift
        };
        let mut e = self.exp + shift;
        if sig >> 53 != 0 && shift > 0 {
            sig >>= 1; // rounding carried into a 54th bit (exact: the low bit is 0)
            e += 1;
        }
        sign * scale2(sig as f64, e)
    }
}

/// `x × 2^e`, exact while the result is representable (x has at most 53 bits).
fn scale2(mut x: f64, mut e: i64) -> f64 {
    let step = |k: i64| f64::from_bits(((k + 1023) as u64) << 52);
    while e > 1000 {
        x *= step(1000);
        e -= 1000;
        if x.is_infinite() {
            return x;
        }
    }
    while e < -1000 && x != 0.0 {
        x *= step(-1000);
        e += 1000;
    }
    x * step(e)
}

/// redis's `getDoubleFromObject`: the whole string is a number, not NaN, and not out of
/// range (a finite literal that overflows to ±inf, or a non-zero literal that underflows
/// to 0, makes strtod report ERANGE, which redis rejects).
pub fn parse_f64(s: &[u8]) -> Option<f64> {
    if let Some(hex) = HexFloat::parse(s) {
        let v = hex.to_f64();
        return (v.is_finite() && (v != 0.0 || hex.mantissa == 0)).then_some(v);
    }
    let v = strtod(s)?;
    if v.is_nan() {
        return None;
    }
    if v.is_infinite() && !is_inf_literal(s) {
        return None;
    }
    if v == 0.0 && has_nonzero_mantissa(s) {
        return None;
    }
    Some(v)
}

fn is_inf_literal(s: &[u8]) -> bool {
    let t = s
        .strip_prefix(b"+")
        .or_else(|| s.strip_prefix(b"-"))
        .unwrap_or(s);
    t.eq_ignore_ascii_case(b"inf") || t.eq_ignore_ascii_case(b"infinity")
}

fn has_nonzero_mantissa(s: &[u8]) -> bool {
    s.iter()
        .take_while(|&&c| c != b'e' && c != b'E')
        .any(|&c| (b'1'..=b'9').contains(&c))
}

/// A fixed-size `fmt::Write` target, so formatting a float allocates nothing.
struct StackBuf<const N: usize> {
    buf: [u8; N],
    len: usize,
}

impl<const N: usize> Write for StackBuf<N> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let end = self.len + s.len();
        if end > N {
            return Err(std::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

/// Writes `d` as redis 7.0's `addReplyDouble` does (`inf`, `-inf`, else `%.17g`) into `out`
/// and returns the length (at most 24 bytes).
pub fn format_double(d: f64, out: &mut [u8; 32]) -> usize {
    let mut w = StackBuf::<32> {
        buf: [0; 32],
        len: 0,
    };
    if d.is_infinite() {
        let _ = w.write_str(if d > 0.0 { "inf" } else { "-inf" });
    } else if d.is_nan() {
        let _ = w.write_str("nan");
    } else if d == d.trunc() && d.abs() < 1e17 {
        // An integral value below 10^17 prints exactly as the integer (including -0).
        if d == 0.0 && d.is_sign_negative() {
            let _ = w.write_str("-0");
        } else {
            let _ = write!(w, "{}", d as i64);
        }
    } else {
        format_g17(d, &mut w);
    }
    out[..w.len].copy_from_slice(&w.buf[..w.len]);
    w.len
}

/// `%.17g` for a finite non-zero double.
fn format_g17(d: f64, w: &mut StackBuf<32>) {
    let mut sci = StackBuf::<40> {
        buf: [0; 40],
        len: 0,
    };
    // d.ddddddddddddddddde±X: 17 significant digits, correctly rounded.
    let _ = write!(sci, "{d:.16e}");
    let s = &sci.buf[..sci.len];
    let (negative, s) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let e_pos = s.iter().position(|&c| c == b'e').unwrap_or(s.len());
    let exp: i32 = std::str::from_utf8(&s[e_pos + 1..])
        .ok()
        .and_then(|t| t.parse().ok())
        .unwrap_or(0);
    let mut digits = [0u8; 17];
    let mut n = 0;
    for &c in &s[..e_pos] {
        if c.is_ascii_digit() && n < 17 {
            digits[n] = c;
            n += 1;
        }
    }
    // %g drops trailing zeros of the significand.
    while n > 1 && digits[n - 1] == b'0' {
        n -= 1;
    }
    let digits = &digits[..n];
    let mut push = |bytes: &[u8]| {
        let _ = w.write_str(std::str::from_utf8(bytes).unwrap_or(""));
    };
    if negative {
        push(b"-");
    }
    if (-4..17).contains(&exp) {
        if exp >= 0 {
            let int_len = exp as usize + 1;
            if digits.len() <= int_len {
                push(digits);
                for _ in digits.len()..int_len {
                    push(b"0");
                }
            } else {
                push(&digits[..int_len]);
                push(b".");
                push(&digits[int_len..]);
            }
        } else {
            push(b"0.");
            for _ in 0..(-exp - 1) {
                push(b"0");
            }
            push(digits);
        }
    } else {
        push(&digits[..1]);
        if digits.len() > 1 {
            push(b".");
            push(&digits[1..]);
        }
        let mut e = itoa::Buffer::new();
        push(if exp < 0 { b"e-" } else { b"e+" });
        if exp.abs() < 10 {
            push(b"0");
        }
        push(e.format(exp.abs()).as_bytes());
    }
}

#[cfg(test)]
mod tests {
    //! Tests of `numeric`: redis's integer strictness, strtod acceptance and `%.17g`.

    use super::{format_double, parse_f64, parse_i64};

    fn g17(d: f64) -> String {
        let mut buf = [0u8; 32];
        let n = format_double(d, &mut buf);
        String::from_utf8_lossy(&buf[..n]).into_owned()
    }

    #[test]
    fn strict_integers() {
        assert_eq!(parse_i64(b"0"), Some(0));
        assert_eq!(parse_i64(b"-9223372036854775808"), Some(i64::MIN));
        assert_eq!(parse_i64(b"9223372036854775807"), Some(i64::MAX));
        for bad in [
            &b""[..],
            b"9223372036854775808",
            b"+1",
            b"01",
            b"-0",
            b" 1",
            b"1 ",
            b"-",
            b"1e3",
        ] {
            assert_eq!(parse_i64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn floats_as_strtod() {
        assert_eq!(parse_f64(b"1e3"), Some(1000.0));
        assert_eq!(parse_f64(b".5"), Some(0.5));
        assert_eq!(parse_f64(b"-inf"), Some(f64::NEG_INFINITY));
        assert_eq!(parse_f64(b"+Infinity"), Some(f64::INFINITY));
        for bad in [&b"nan"[..], b"1e400", b"1e-400", b" 1", b"1 ", b"", b"abc"] {
            assert_eq!(parse_f64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(parse_f64(b"0e-400"), Some(0.0));
    }

    /// Found by difffuzz.py (cases.py fuzz-hex-floats): glibc's strtod reads C hex floats.
    #[test]
    fn hex_floats_as_strtod() {
        assert_eq!(parse_f64(b"0x10"), Some(16.0));
        assert_eq!(parse_f64(b"0X1.8p1"), Some(3.0));
        assert_eq!(parse_f64(b"-0x1p-3"), Some(-0.125));
        assert_eq!(parse_f64(b"0x.8"), Some(0.5));
        assert_eq!(parse_f64(b"0x1p-1074"), Some(f64::from_bits(1)));
        assert_eq!(parse_f64(b"0x1.fffffffffffff8p0"), Some(2.0)); // a tie: to even
        assert_eq!(parse_f64(b"0x1.fffffffffffff7p0"), Some(2.0 - f64::EPSILON));
        assert_eq!(parse_f64(b"0x0p99999"), Some(0.0));
        assert!(parse_f64(b"-0x0").is_some_and(|v| v == 0.0 && v.is_sign_negative()));
        for bad in [
            &b"0x"[..],
            b"0xg",
            b"0x1p",
            b"0x1p+",
            b"0x1.2.3",
            b"0x1p99999",
            b"0x1p-99999",
            b" 0x1",
        ] {
            assert_eq!(parse_f64(bad), None, "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn percent_17g() {
        assert_eq!(g17(0.1), "0.10000000000000001");
        assert_eq!(g17(1.0), "1");
        assert_eq!(g17(-0.0), "-0");
        assert_eq!(g17(1e-5), "1.0000000000000001e-05");
        assert_eq!(g17(1.234_567_890_123_456_8e17), "1.2345678901234568e+17");
        assert_eq!(g17(2.5e-300), "2.5e-300");
        assert_eq!(g17(1e16), "10000000000000000");
        assert_eq!(g17(1e17), "1e+17");
        assert_eq!(g17(12345.678), "12345.678");
        assert_eq!(g17(f64::INFINITY), "inf");
        // An exact tie at the 18th digit rounds half to even, as glibc's printf.
        assert_eq!(g17(1_000_000_000_000_001.0 / 8.0), "125000000000000.12");
    }
}
