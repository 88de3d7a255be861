package main

// globmatch.go: KEYS and SCAN MATCH patterns, matched as redis's stringmatchlen does: `*`, `?`,
// `[abc]`, `[^abc]`, `[a-z]` (reversed ranges allowed), and `\x` to match x literally. Bytes
// compare as C's signed char, which only matters inside [a-z] ranges of bytes >= 0x80.

// globMatch reports whether s matches pattern.
func globMatch(pattern, s string) bool {
	skipLonger := false
	return globMatchAt(pattern, s, &skipLonger)
}

// at returns p[i], or 0 past the end (redis reads the NUL that ends its strings).
func at(p string, i int) byte {
	if i < len(p) {
		return p[i]
	}
	return 0
}

func globMatchAt(p, s string, skipLonger *bool) bool {
	for len(p) > 0 && len(s) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 0 && at(p, 1) == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for len(s) > 0 {
				if globMatchAt(p[1:], s, skipLonger) {
					return true
				}
				if *skipLonger {
					return false
				}
				s = s[1:]
			}
			// The rest of the pattern matches nowhere in the rest of the string, so no
			// earlier '*' can help by matching more: stop (redis's fix for CVE-2022-36021).
			*skipLonger = true
			return false
		case '?':
			s = s[1:]
		case '[':
			p = p[1:]
			negate := at(p, 0) == '^'
			if negate {
				p = p[1:]
			}
			match := false
			for {
				if at(p, 0) == '\\' && len(p) >= 2 {
					p = p[1:]
					if p[0] == s[0] {
						match = true
					}
				} else if at(p, 0) == ']' {
					break
				} else if len(p) == 0 {
					// Unterminated class: redis steps back so the common advance below
					// leaves the pattern empty.
					break
				} else if len(p) >= 3 && p[1] == '-' {
					lo, hi, c := int8(p[0]), int8(p[2]), int8(s[0])
					if lo > hi {
						lo, hi = hi, lo
					}
					p = p[2:]
					if c >= lo && c <= hi {
						match = true
					}
				} else if p[0] == s[0] {
					match = true
				}
				p = p[1:]
			}
			if negate {
				match = !match
			}
			if !match {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) >= 2 {
				p = p[1:]
			}
			fallthrough
		default:
			if p[0] != s[0] {
				return false
			}
			s = s[1:]
		}
		if len(p) > 0 { // the unterminated class case has already consumed everything
			p = p[1:]
		}
		if len(s) == 0 {
			for len(p) > 0 && p[0] == '*' {
				p = p[1:]
			}
			break
		}
	}
	return len(p) == 0 && len(s) == 0
}
