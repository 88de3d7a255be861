package main

import (
	"math"
	"testing"
)

func negInf() float64 { return math.Inf(-1) }

func TestFormatDouble(t *testing.T) {
	for _, tc := range []struct {
		in   float64
		want string
	}{
		{0.1, "0.10000000000000001"}, {1, "1"}, {-0.0, "0"}, {math.Copysign(0, -1), "-0"},
		{2e20, "2e+20"}, {1e-5, "1.0000000000000001e-05"}, {1e16, "10000000000000000"},
		{1e17, "1e+17"}, {123.5, "123.5"}, {math.Inf(1), "inf"}, {math.Inf(-1), "-inf"},
	} {
		if got := string(formatDouble(nil, tc.in)); got != tc.want {
			t.Errorf("formatDouble(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestParseDouble(t *testing.T) {
	for _, tc := range []struct {
		in string
		v  float64
		ok bool
	}{
		{"1.5", 1.5, true}, {"-2", -2, true}, {"+3", 3, true}, {".5", 0.5, true}, {"5.", 5, true},
		{"1e3", 1000, true}, {"1E-2", 0.01, true}, {"inf", math.Inf(1), true},
		{"-Infinity", math.Inf(-1), true}, {"0x10", 16, true}, {"0x1p3", 8, true},
		{"0e-500", 0, true},
		{"nan", 0, false}, {"", 0, false}, {" 1", 0, false}, {"1 ", 0, false}, {"1e", 0, false},
		{"abc", 0, false}, {"1e400", 0, false}, {"1e-400", 0, false}, {"0x", 0, false},
		{"1_0", 0, false}, {"1\x00", 0, false},
	} {
		v, ok := parseDouble([]byte(tc.in))
		if ok != tc.ok || ok && v != tc.v {
			t.Errorf("parseDouble(%q) = %v, %v; want %v, %v", tc.in, v, ok, tc.v, tc.ok)
		}
	}
}

// INCRBYFLOAT adds in x87 long double precision and prints "%.17Lf" trimmed: 10.5 + 0.1
// is "10.6" there, where float64 arithmetic would print 10.59999999999999964.
func TestLongDoubleArithmetic(t *testing.T) {
	for _, tc := range []struct{ a, b, want string }{
		{"10.5", "0.1", "10.6"},
		{"1.1", "2.2", "3.3"},
		{"5", "-5", "0"},
		{"3", "1.5", "4.5"},
		{"0", "1e3", "1000"},
		{"-0.1", "0", "-0.1"},
		{"1", "1e-20", "1"},
	} {
		a, okA := parseLongDouble([]byte(tc.a))
		b, okB := parseLongDouble([]byte(tc.b))
		sum, ok := addLongDouble(a, b)
		if !okA || !okB || !ok {
			t.Fatalf("%s + %s: parse/add failed", tc.a, tc.b)
		}
		if got := formatLongDouble(sum); got != tc.want {
			t.Errorf("%s + %s = %q, want %q", tc.a, tc.b, got, tc.want)
		}
	}
	if _, ok := parseLongDouble([]byte("1e5000")); ok {
		t.Error("1e5000 is beyond long double range")
	}
	inf, _ := parseLongDouble([]byte("inf"))
	one, _ := parseLongDouble([]byte("1"))
	if _, ok := addLongDouble(inf, one); ok {
		t.Error("inf + 1 must be refused")
	}
}
