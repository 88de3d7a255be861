package main

// numeric.go: numbers as redis reads and prints them. Clients see these bytes, so each
// function copies the C library call redis makes: string2ll for integers (protocol.go),
// strtod for scores, strtold (x87 80-bit long double) for INCRBYFLOAT, and printf's "%.17g"
// and "%.17Lf" for replies.

import (
	"math"
	"math/big"
	"strconv"
	"strings"
)

// formatDouble appends d as printf("%.17g") does, with "inf"/"-inf" for infinities (redis
// spells those itself rather than trusting libc). Go's 'g' verb follows the same rule as C
// for choosing the exponent form and prints at least two exponent digits, as C does.
func formatDouble(b []byte, d float64) []byte {
	switch {
	case math.IsInf(d, 1):
		return append(b, "inf"...)
	case math.IsInf(d, -1):
		return append(b, "-inf"...)
	}
	return strconv.AppendFloat(b, d, 'g', 17, 64)
}

// floatSyntax reports whether all of s is a number strtod would consume in full (after
// the caller has rejected a leading blank): an optional sign, then "inf", "infinity", "nan",
// a decimal number with optional exponent, or a hexadecimal one ("0x1.8p3", "0x10") with
// an optional binary exponent. It returns the kind of number found.
func floatSyntax(s []byte) (kind byte, ok bool) {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	rest := s[i:]
	switch {
	case equalFold(rest, "inf"), equalFold(rest, "infinity"):
		return 'i', true
	case len(rest) >= 3 && equalFold(rest[:3], "nan"):
		return 'n', true // "nan" or "nan(chars)": rejected by every caller anyway
	}
	digits := func(hex bool) int {
		n := 0
		for i < len(s) && (s[i] >= '0' && s[i] <= '9' || hex && isHexDigit(s[i])) {
			i++
			n++
		}
		return n
	}
	hex := len(rest) >= 3 && rest[0] == '0' && (rest[1] == 'x' || rest[1] == 'X') &&
		(isHexDigit(rest[2]) || rest[2] == '.' && len(rest) > 3 && isHexDigit(rest[3]))
	if hex {
		i += 2
	}
	n := digits(hex)
	if i < len(s) && s[i] == '.' {
		i++
		n += digits(hex)
	}
	if n == 0 {
		return 0, false
	}
	expMark := byte('e')
	if hex {
		expMark = 'p'
	}
	if i < len(s) && (s[i]|0x20) == expMark {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits(false) == 0 {
			return 0, false
		}
	}
	if i != len(s) {
		return 0, false
	}
	if hex {
		return 'x', true
	}
	return 'd', true
}

// equalFold compares b with a lower-case ASCII word, ignoring the case of b's letters.
func equalFold(b []byte, lower string) bool {
	if len(b) != len(lower) {
		return false
	}
	for i := range b {
		if toLower(b[i]) != lower[i] {
			return false
		}
	}
	return true
}

func toLower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func toUpper(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - ('a' - 'A')
	}
	return c
}

// hasNonzeroDigit reports whether a number's mantissa has a nonzero digit (so a zero result
// means it underflowed, which strtod reports with ERANGE).
func hasNonzeroDigit(s []byte, hex bool) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	if hex {
		i += 2
	}
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '.':
		case c >= '1' && c <= '9', hex && isHexDigit(c) && c != '0':
			return true
		case c == '0':
		default:
			return false // the exponent: no nonzero mantissa digit seen
		}
	}
	return false
}

// parseDouble is redis's string2d: strtod must consume every byte, no leading blank,
// no NaN, and no overflow or underflow to zero.
func parseDouble(s []byte) (float64, bool) {
	if len(s) == 0 || isSpace(s[0]) {
		return 0, false
	}
	kind, ok := floatSyntax(s)
	if !ok || kind == 'n' {
		return 0, false
	}
	text := string(s)
	if kind == 'x' && !containsByte(s, 'p', 'P') {
		text += "p0" // Go wants a binary exponent on every hex float; C does not
	}
	d, err := strconv.ParseFloat(text, 64)
	if err != nil && !math.IsInf(d, 0) || kind != 'i' && math.IsInf(d, 0) {
		return 0, false // overflow: strtod returns HUGE_VAL with ERANGE
	}
	if d == 0 && hasNonzeroDigit(s, kind == 'x') {
		return 0, false // underflow to zero
	}
	return d, true
}

func containsByte(s []byte, a, b byte) bool {
	for _, c := range s {
		if c == a || c == b {
			return true
		}
	}
	return false
}

// --- INCRBYFLOAT's long double ---------------------------------------------------------
//
// redis adds INCRBYFLOAT operands as C long doubles, which on x86-64 are x87 80-bit
// numbers: a 64-bit significand and a 15-bit exponent. big.Float with 64 bits of precision
// and round-to-nearest-even gives the same sums; the exponent range is checked by hand.

const (
	longDoublePrec = 64
	// longDoubleMaxExp: |x| < 2^16384 for every finite long double (big.Float's MantExp
	// puts the mantissa in [0.5, 1), so finite values have an exponent <= 16384).
	longDoubleMaxExp = 16384
	// longDoubleMinExp: below 2^-16445 (the smallest denormal) strtold returns zero.
	longDoubleMinExp = -16445
	// maxLongDoubleChars is MAX_LONG_DOUBLE_CHARS: redis's buffer for these numbers.
	maxLongDoubleChars = 5 * 1024
)

// longDouble is a finite long double, or an infinity (inf = ±1).
type longDouble struct {
	f   *big.Float
	inf int
}

// parseLongDouble is redis's string2ld: strtold must consume every byte (which must fit
// redis's 5 KiB buffer), no leading blank, no NaN, no overflow or underflow to zero.
func parseLongDouble(s []byte) (longDouble, bool) {
	if len(s) == 0 || len(s) >= maxLongDoubleChars || isSpace(s[0]) {
		return longDouble{}, false
	}
	kind, ok := floatSyntax(s)
	if !ok || kind == 'n' {
		return longDouble{}, false
	}
	if kind == 'i' {
		if s[0] == '-' {
			return longDouble{inf: -1}, true
		}
		return longDouble{inf: 1}, true
	}
	f := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven)
	if _, _, err := f.Parse(string(s), 0); err != nil {
		return longDouble{}, false
	}
	if f.Sign() != 0 {
		exp := f.MantExp(nil)
		if exp > longDoubleMaxExp || exp < longDoubleMinExp {
			return longDouble{}, false
		}
	} else if hasNonzeroDigit(s, kind == 'x') {
		return longDouble{}, false
	}
	return longDouble{f: f}, true
}

// addLongDouble returns a+b, or false when the sum is NaN or infinite (redis's "increment
// would produce NaN or Infinity").
func addLongDouble(a, b longDouble) (longDouble, bool) {
	if a.inf != 0 || b.inf != 0 {
		return longDouble{}, false
	}
	sum := new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven).Add(a.f, b.f)
	if sum.Sign() != 0 && sum.MantExp(nil) > longDoubleMaxExp {
		return longDouble{}, false
	}
	return longDouble{f: sum}, true
}

// formatLongDouble is redis's ld2string in LD_STR_HUMAN mode: "%.17Lf", then trailing
// zeros (and a bare '.') removed, and "-0" printed as "0". A number too long for redis's
// buffer comes out empty, as ld2string's error return makes it.
func formatLongDouble(d longDouble) string {
	s := d.f.Text('f', 17)
	if len(s)+1 > maxLongDoubleChars {
		return ""
	}
	if strings.IndexByte(s, '.') >= 0 {
		i := len(s) - 1
		for s[i] == '0' {
			i--
		}
		if s[i] == '.' {
			i--
		}
		s = s[:i+1]
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func zeroLongDouble() *big.Float {
	return new(big.Float).SetPrec(longDoublePrec).SetMode(big.ToNearestEven)
}
