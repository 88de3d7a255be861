package main

import "testing"

func TestGlobMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "anything", true}, {"*", "", false}, {"", "", true},
		{"h?llo", "hello", true}, {"h?llo", "hllo", false},
		{"h*llo", "heeeello", true}, {"h*llo", "hllo", true},
		{"h[ae]llo", "hallo", true}, {"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true}, {"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true}, {"h[b-a]llo", "hbllo", true}, {"h[a-b]llo", "hcllo", false},
		{`a\*b`, "a*b", true}, {`a\*b`, "axb", false}, {`a\\b`, `a\b`, true},
		{"[", "x", false}, {"[x", "x", true}, {`\[x]`, "[x]", true}, {"*[", "a", false},
		// An unterminated class ends the pattern: "[a-]1" is the range a..] and then "1"
		// is read as part of the class, so it matches "]" alone (as redis does).
		{"[a-]1", "a1", false}, {"[a-]1", "]", true}, {`[\]]`, "]", true},
		{"f\\", "f", false}, {"**a", "bba", true}, {"a*", "a", true},
		{"*a*b*c*d*e*f*g*h*i*j*k*", "abcdefghijkx" + "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", true},
		{"*a*a*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", false},
		{"[\xe0-\xf0]", "\xe5", true}, {"[a-\xf0]", "\xe5", false}, // signed char ranges, as C
	} {
		if got := globMatch(tc.pattern, tc.s); got != tc.want {
			t.Errorf("globMatch(%q, %q) = %v, want %v", tc.pattern, tc.s, got, tc.want)
		}
	}
}
