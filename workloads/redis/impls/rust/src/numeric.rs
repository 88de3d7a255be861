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
/// string is not entirely a number. Hexadecimal floats are not supported.
pub fn strtod(s: &[u8]) -> Option<f64> {
    let text = std::str::from_utf8(s).ok()?;
    // Rust's parser agrees with strtod on decimal forms, `inf`, `infinity` and `nan` (any
    // case, optional sign); it rejects leading blanks, which strtod would skip.
    if text.is_empty() || is_c_space(s[0]) {
        return None;
    }
    text.parse::<f64>().ok()
}

/// redis's `getDoubleFromObject`: the whole string is a number, not NaN, and not out of
/// range (a finite literal that overflows to ±inf, or a non-zero literal that underflows
/// to 0, makes strtod report ERANGE, which redis rejects).
pub fn parse_f64(s: &[u8]) -> Option<f64> {
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
