//! Just enough of C's x87 `long double` for INCRBYFLOAT and HINCRBYFLOAT.
//!
//! redis parses both operands with `strtold`, adds them in 80-bit extended precision (a
//! 64-bit significand), and prints the sum with `%.17Lf` before trimming trailing zeros.
//! Doing the sum in f64 gives visibly different strings (`0.1` added three times is
//! `0.30000000000000004` in f64 but `0.3` in long double), so this module reproduces each
//! step exactly: correctly rounded decimal → binary conversion, round-to-nearest-even
//! addition, and exact binary → decimal printing, with a small arbitrary-precision integer.

use crate::numeric::{is_c_space, HexFloat};
use std::cmp::Ordering;

/// Significand bits of the x87 extended format.
const PRECISION: u32 = 64;
/// Largest binary exponent of a finite value (2^16384 overflows).
const MAX_EXP: i64 = 16384;
/// Below 2^-16445 even the smallest denormal rounds to zero.
const MIN_EXP: i64 = -16445;
/// redis's `MAX_LONG_DOUBLE_CHARS`: longer inputs are refused, longer outputs come out empty.
const MAX_CHARS: usize = 5 * 1024;

/// A finite value `(-1)^negative × mantissa × 2^exp`, or an infinity. The mantissa is
/// normalised (top bit set) unless it is zero.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LongDouble {
    negative: bool,
    mantissa: u64,
    exp: i64,
    infinite: bool,
}

impl LongDouble {
    pub const ZERO: LongDouble = LongDouble {
        negative: false,
        mantissa: 0,
        exp: 0,
        infinite: false,
    };

    fn infinity(negative: bool) -> LongDouble {
        LongDouble {
            negative,
            mantissa: 0,
            exp: 0,
            infinite: true,
        }
    }

    pub fn is_finite(&self) -> bool {
        !self.infinite
    }

    /// Rounds `(-1)^negative × m × 2^exp` (m up to 128 bits, plus a sticky flag for
    /// non-zero bits already dropped below it) to 64 bits, nearest-even.
    fn round(negative: bool, m: u128, exp: i64, sticky: bool) -> LongDouble {
        if m == 0 {
            return LongDouble {
                negative,
                ..LongDouble::ZERO
            };
        }
        let bits = 128 - m.leading_zeros();
        let (mut mant, mut exp) = if bits > PRECISION {
            let drop = bits - PRECISION;
            let kept = m >> drop;
            let rest = m & ((1u128 << drop) - 1);
            let half = 1u128 << (drop - 1);
            let round_up = rest > half || (rest == half && (sticky || kept & 1 == 1));
            (kept + u128::from(round_up), exp + i64::from(drop))
        } else {
            (m << (PRECISION - bits), exp - i64::from(PRECISION - bits))
        };
        if mant >> PRECISION != 0 {
            mant >>= 1;
            exp += 1;
        }
        if exp + i64::from(PRECISION) > MAX_EXP {
            return LongDouble::infinity(negative);
        }
        if exp < MIN_EXP {
            return LongDouble {
                negative,
                ..LongDouble::ZERO
            };
        }
        LongDouble {
            negative,
            mantissa: mant as u64,
            exp,
            infinite: false,
        }
    }

    /// `self + other`, rounded as the x87 FPU does (nearest-even).
    pub fn add(self, other: LongDouble) -> LongDouble {
        if self.infinite || other.infinite {
            return match (self.infinite, other.infinite) {
                (true, true) if self.negative != other.negative => LongDouble {
                    // inf - inf: NaN, reported as "not finite" like infinities.
                    infinite: true,
                    ..LongDouble::ZERO
                },
                (true, _) => self,
                _ => other,
            };
        }
        if other.mantissa == 0 {
            return if self.mantissa == 0 {
                LongDouble {
                    negative: self.negative && other.negative,
                    ..LongDouble::ZERO
                }
            } else {
                self
            };
        }
        if self.mantissa == 0 {
            return other;
        }
        // `a` has the larger exponent. Both are placed in a u128 with 62 guard bits.
        let (a, b) = if self.exp >= other.exp {
            (self, other)
        } else {
            (other, self)
        };
        const GUARD: u32 = 62;
        let ma = u128::from(a.mantissa) << GUARD;
        let shift = a.exp - b.exp;
        let (mb, sticky) = if shift >= 126 {
            (0u128, true)
        } else {
            let full = u128::from(b.mantissa) << GUARD;
            let s = shift as u32;
            (full >> s, full & ((1u128 << s) - 1) != 0)
        };
        // The sticky bit stands for "a little more than mb": fold it into the lowest bit so
        // that both addition and subtraction round correctly.
        let mb = mb | u128::from(sticky);
        let exp = a.exp - i64::from(GUARD);
        if a.negative == b.negative {
            LongDouble::round(a.negative, ma + mb, exp, false)
        } else if ma >= mb {
            LongDouble::round(a.negative, ma - mb, exp, false)
        } else {
            LongDouble::round(b.negative, mb - ma, exp, false)
        }
    }

    /// `%.17Lf` with trailing zeros (and a bare point) removed, `-0` printed as `0`: redis's
    /// `ld2string(…, LD_STR_HUMAN)`.
    pub fn to_human_string(self) -> Vec<u8> {
        // value × 10^17 rounded to an integer, nearest-even.
        let mut n = Big::from_u64(self.mantissa);
        n.mul_pow10(17);
        let scaled = if self.exp >= 0 {
            n.shl(self.exp as u32);
            n
        } else {
            let drop = (-self.exp) as u32;
            let (mut q, rest) = n.shr_with_rest(drop);
            if rest == Ordering::Greater || (rest == Ordering::Equal && q.is_odd()) {
                q.add_u32(1);
            }
            q
        };
        let mut digits = scaled.to_decimal();
        if digits.len() < 18 {
            let mut padded = vec![b'0'; 18 - digits.len()];
            padded.extend_from_slice(&digits);
            digits = padded;
        }
        let point = digits.len() - 17;
        let mut s = Vec::with_capacity(digits.len() + 2);
        if self.negative {
            s.push(b'-');
        }
        s.extend_from_slice(&digits[..point]);
        s.push(b'.');
        s.extend_from_slice(&digits[point..]);
        if s.len() + 1 > MAX_CHARS {
            return Vec::new();
        }
        while s.last() == Some(&b'0') {
            s.pop();
        }
        if s.last() == Some(&b'.') {
            s.pop();
        }
        if s == b"-0" {
            s = b"0".to_vec();
        }
        s
    }
}

/// redis's `string2ld`: the whole string must be a `strtold` number (no leading blank),
/// not NaN, and not out of range. Hexadecimal floats (`0x10`, `0x1.8p3`) included.
pub fn parse(s: &[u8]) -> Option<LongDouble> {
    if s.is_empty() || s.len() >= MAX_CHARS || is_c_space(s[0]) {
        return None;
    }
    if let Some(hex) = HexFloat::parse(s) {
        if hex.mantissa == 0 {
            return Some(LongDouble {
                negative: hex.negative,
                ..LongDouble::ZERO
            });
        }
        let value = LongDouble::round(hex.negative, hex.mantissa, hex.exp, hex.sticky);
        // As for decimals: overflow and underflow to zero are ERANGE, refused.
        return (!value.infinite && value.mantissa != 0).then_some(value);
    }
    let (negative, body) = match s[0] {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if body.eq_ignore_ascii_case(b"inf") || body.eq_ignore_ascii_case(b"infinity") {
        return Some(LongDouble::infinity(negative));
    }
    // digits [. digits] [e [sign] digits], at least one digit in the significand.
    let mut digits = Big::from_u64(0);
    let mut any_digit = false;
    let mut nonzero = false;
    let mut dec_exp: i64 = 0;
    let mut i = 0;
    let mut seen_point = false;
    while i < body.len() {
        let c = body[i];
        if c.is_ascii_digit() {
            any_digit = true;
            nonzero |= c != b'0';
            digits.mul_u32(10);
            digits.add_u32(u32::from(c - b'0'));
            if seen_point {
                dec_exp -= 1;
            }
        } else if c == b'.' && !seen_point {
            seen_point = true;
        } else {
            break;
        }
        i += 1;
    }
    if !any_digit {
        return None;
    }
    if i < body.len() && (body[i] == b'e' || body[i] == b'E') {
        let exp_part = &body[i + 1..];
        let (exp_neg, exp_digits) = match exp_part.first() {
            Some(b'-') => (true, &exp_part[1..]),
            Some(b'+') => (false, &exp_part[1..]),
            _ => (false, exp_part),
        };
        if exp_digits.is_empty() || !exp_digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        let mut e: i64 = 0;
        for &c in exp_digits {
            e = (e * 10 + i64::from(c - b'0')).min(1_000_000);
        }
        dec_exp += if exp_neg { -e } else { e };
        i = body.len();
    }
    if i != body.len() {
        return None;
    }
    if !nonzero {
        return Some(LongDouble {
            negative,
            ..LongDouble::ZERO
        });
    }
    let value = decimal_to_binary(negative, digits, dec_exp);
    // strtold reports ERANGE for overflow (±inf) and for underflow to zero: refused.
    if value.infinite || value.mantissa == 0 {
        return None;
    }
    Some(value)
}

/// The long double nearest to `digits × 10^dec_exp` (digits non-zero).
fn decimal_to_binary(negative: bool, mut digits: Big, dec_exp: i64) -> LongDouble {
    // Far outside the format's range: skip the (huge) exact arithmetic.
    let approx_bits = digits.bit_len() as f64 + dec_exp as f64 * std::f64::consts::LOG2_10;
    if approx_bits > (MAX_EXP + 64) as f64 {
        return LongDouble::infinity(negative);
    }
    if approx_bits < (MIN_EXP - 64) as f64 {
        return LongDouble {
            negative,
            ..LongDouble::ZERO
        };
    }
    if dec_exp >= 0 {
        digits.mul_pow10(dec_exp as u32);
        let bits = digits.bit_len();
        let drop = bits.saturating_sub(100);
        let (top, _) = digits.shr_with_rest(drop);
        let sticky = digits_has_low_bits(&digits, drop);
        return LongDouble::round(negative, top.to_u128(), i64::from(drop), sticky);
    }
    // digits / 10^-dec_exp: scale so that the quotient has ~100 bits, then round it with the
    // remainder as the sticky bit.
    let mut divisor = Big::from_u64(1);
    divisor.mul_pow10((-dec_exp) as u32);
    let shift = 100 + divisor.bit_len() as i64 - digits.bit_len() as i64;
    if shift >= 0 {
        digits.shl(shift as u32);
    } else {
        divisor.shl((-shift) as u32);
    }
    let (q, rem_nonzero) = digits.div_small_quotient(&divisor);
    LongDouble::round(negative, q, -shift, rem_nonzero)
}

fn digits_has_low_bits(n: &Big, bits: u32) -> bool {
    (0..bits).any(|b| n.bit(b))
}

/// A minimal unsigned big integer (little-endian 32-bit limbs), for exact conversions only.
#[derive(Clone, Debug)]
struct Big(Vec<u32>);

impl Big {
    fn from_u64(v: u64) -> Big {
        let mut b = Big(vec![v as u32, (v >> 32) as u32]);
        b.trim();
        b
    }

    fn trim(&mut self) {
        while self.0.last() == Some(&0) {
            self.0.pop();
        }
    }

    fn is_odd(&self) -> bool {
        self.0.first().is_some_and(|l| l & 1 == 1)
    }

    fn bit(&self, i: u32) -> bool {
        self.0
            .get((i / 32) as usize)
            .is_some_and(|l| (l >> (i % 32)) & 1 == 1)
    }

    fn bit_len(&self) -> u32 {
        match self.0.last() {
            None => 0,
            Some(&top) => (self.0.len() as u32 - 1) * 32 + (32 - top.leading_zeros()),
        }
    }

    fn mul_u32(&mut self, m: u32) {
        let mut carry = 0u64;
        for limb in &mut self.0 {
            let v = u64::from(*limb) * u64::from(m) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    fn add_u32(&mut self, a: u32) {
        let mut carry = u64::from(a);
        for limb in &mut self.0 {
            if carry == 0 {
                return;
            }
            let v = u64::from(*limb) + carry;
            *limb = v as u32;
            carry = v >> 32;
        }
        if carry != 0 {
            self.0.push(carry as u32);
        }
    }

    fn mul_pow10(&mut self, mut e: u32) {
        while e >= 9 {
            self.mul_u32(1_000_000_000);
            e -= 9;
        }
        self.mul_u32(10u32.pow(e));
    }

    fn shl(&mut self, bits: u32) {
        let (limbs, rem) = ((bits / 32) as usize, bits % 32);
        if rem != 0 {
            let mut carry = 0u32;
            for limb in &mut self.0 {
                let v = (*limb << rem) | carry;
                carry = *limb >> (32 - rem);
                *limb = v;
            }
            if carry != 0 {
                self.0.push(carry);
            }
        }
        self.0.splice(0..0, std::iter::repeat_n(0, limbs));
        self.trim();
    }

    /// `self >> bits`, and how the dropped part compares with half of 2^bits.
    fn shr_with_rest(&self, bits: u32) -> (Big, Ordering) {
        if bits == 0 {
            return (self.clone(), Ordering::Less);
        }
        let half_bit = bits - 1;
        let rest = if !self.bit(half_bit) {
            Ordering::Less
        } else if (0..half_bit).any(|b| self.bit(b)) {
            Ordering::Greater
        } else {
            Ordering::Equal
        };
        let (limbs, rem) = ((bits / 32) as usize, bits % 32);
        let mut out: Vec<u32> = self.0.iter().skip(limbs).copied().collect();
        if rem != 0 {
            for i in 0..out.len() {
                let hi = out.get(i + 1).copied().unwrap_or(0);
                out[i] = (out[i] >> rem) | (hi << (32 - rem));
            }
        }
        let mut b = Big(out);
        b.trim();
        (b, rest)
    }

    fn to_u128(&self) -> u128 {
        self.0
            .iter()
            .take(4)
            .enumerate()
            .fold(0u128, |acc, (i, &l)| acc | (u128::from(l) << (32 * i)))
    }

    fn cmp(&self, other: &Big) -> Ordering {
        self.0
            .len()
            .cmp(&other.0.len())
            .then_with(|| self.0.iter().rev().cmp(other.0.iter().rev()))
    }

    fn sub_assign(&mut self, other: &Big) {
        let mut borrow = 0i64;
        for i in 0..self.0.len() {
            let o = i64::from(other.0.get(i).copied().unwrap_or(0));
            let mut v = i64::from(self.0[i]) - o - borrow;
            borrow = 0;
            if v < 0 {
                v += 1 << 32;
                borrow = 1;
            }
            self.0[i] = v as u32;
        }
        self.trim();
    }

    /// `self / d` where the quotient is known to fit in 128 bits, and whether the remainder
    /// is non-zero. Plain binary long division: at most ~128 subtract steps.
    fn div_small_quotient(&self, d: &Big) -> (u128, bool) {
        let mut rem = self.clone();
        let mut q = 0u128;
        let top = self.bit_len().saturating_sub(d.bit_len()).min(127);
        for i in (0..=top).rev() {
            let mut shifted = d.clone();
            shifted.shl(i);
            if rem.cmp(&shifted) != Ordering::Less {
                rem.sub_assign(&shifted);
                q |= 1u128 << i;
            }
        }
        (q, !rem.0.is_empty())
    }

    /// Decimal digits (at least "0").
    fn to_decimal(&self) -> Vec<u8> {
        let mut n = self.0.clone();
        let mut chunks = Vec::new();
        while !n.is_empty() {
            let mut rem = 0u64;
            for limb in n.iter_mut().rev() {
                let v = (rem << 32) | u64::from(*limb);
                *limb = (v / 1_000_000_000) as u32;
                rem = v % 1_000_000_000;
            }
            while n.last() == Some(&0) {
                n.pop();
            }
            chunks.push(rem as u32);
        }
        let mut s = Vec::new();
        match chunks.pop() {
            None => s.push(b'0'),
            Some(top) => s.extend_from_slice(top.to_string().as_bytes()),
        }
        for c in chunks.iter().rev() {
            s.extend_from_slice(format!("{c:09}").as_bytes());
        }
        s
    }
}

#[cfg(test)]
mod tests {
    //! Tests of `long_double`.
    use super::parse;

    fn incr(a: &str, b: &str) -> String {
        let (Some(x), Some(y)) = (parse(a.as_bytes()), parse(b.as_bytes())) else {
            return "ERR".into();
        };
        String::from_utf8(x.add(y).to_human_string()).unwrap()
    }

    #[test]
    fn redis_examples() {
        assert_eq!(incr("10.50", "0.1"), "10.6");
        assert_eq!(incr("5.0e3", "2.0e2"), "5200");
        assert_eq!(incr("0", "3"), "3");
        assert_eq!(incr("1", "-1"), "0");
        assert_eq!(incr("-0", "0"), "0");
        // Accumulated 0.1s stay 0.3 in long double.
        assert_eq!(incr(&incr("0.1", "0.1"), "0.1"), "0.3");
        // The long double nearest 1e300, printed exactly (as redis prints it).
        let big = incr("1e300", "0");
        assert_eq!(big.len(), 301);
        assert!(big.starts_with("1000000000000000000008997324079559193870523944"));
        assert_eq!(incr("3.0", "1.5"), "4.5");
    }

    /// Found by difffuzz.py (cases.py fuzz-hex-floats): strtold reads C hex floats.
    #[test]
    fn hex_floats() {
        assert_eq!(incr("0x10", "0"), "16");
        assert_eq!(incr("0x.8", "0x1P4"), "16.5");
        assert_eq!(incr("-0x1p-2", "1"), "0.75");
        assert!(parse(b"0x").is_none());
        assert!(parse(b"0x1p99999").is_none());
        assert!(parse(b"0x1p-99999").is_none());
    }

    #[test]
    fn rejects() {
        assert!(parse(b"").is_none());
        assert!(parse(b" 1").is_none());
        assert!(parse(b"1 ").is_none());
        assert!(parse(b"abc").is_none());
        assert!(parse(b"nan").is_none());
        assert!(parse(b"1e99999").is_none());
        assert!(parse(b"1e-99999").is_none());
        assert!(parse(b"0e99999").is_some());
        assert!(parse(b"inf").is_some_and(|v| !v.is_finite()));
    }
}
