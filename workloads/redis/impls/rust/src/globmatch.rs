//! Glob-style pattern matching for KEYS and SCAN MATCH, with redis's `stringmatchlen` rules:
//! `*`, `?`, `[abc]`, `[^abc]`, `[a-z]` (reversed ranges allowed), and `\x` to quote a
//! character. Like redis, bytes are compared as C `char` (signed on x86-64), which matters
//! only for ranges whose ends are above 0x7f.

/// True if `string` matches `pattern` as a whole.
pub fn matches(pattern: &[u8], string: &[u8]) -> bool {
    let mut skip_longer = false;
    match_from(pattern, string, &mut skip_longer)
}

fn signed(b: u8) -> i32 {
    i32::from(b as i8)
}

fn match_from(mut pat: &[u8], mut s: &[u8], skip_longer: &mut bool) -> bool {
    // `at` reads as C does past the end of the pattern: the NUL terminator.
    let at = |p: &[u8], i: usize| p.get(i).copied().unwrap_or(0);
    while !pat.is_empty() && !s.is_empty() {
        match pat[0] {
            b'*' => {
                while pat.len() > 1 && pat[1] == b'*' {
                    pat = &pat[1..];
                }
                if pat.len() == 1 {
                    return true;
                }
                while !s.is_empty() {
                    if match_from(&pat[1..], s, skip_longer) {
                        return true;
                    }
                    if *skip_longer {
                        return false;
                    }
                    s = &s[1..];
                }
                // Nothing after this star matches anywhere in the rest of the string, so
                // no earlier star can help either (the same early exit as redis).
                *skip_longer = true;
                return false;
            }
            b'?' => s = &s[1..],
            b'[' => {
                pat = &pat[1..];
                let negate = at(pat, 0) == b'^';
                if negate {
                    pat = &pat[1..];
                }
                let mut matched = false;
                loop {
                    if at(pat, 0) == b'\\' && pat.len() >= 2 {
                        pat = &pat[1..];
                        if pat[0] == s[0] {
                            matched = true;
                        }
                    } else if at(pat, 0) == b']' && !pat.is_empty() {
                        break;
                    } else if pat.is_empty() {
                        // Unterminated class: redis steps back so the final advance below
                        // leaves the pattern empty.
                        break;
                    } else if pat.len() >= 3 && pat[1] == b'-' {
                        let (mut start, mut end) = (signed(pat[0]), signed(pat[2]));
                        if start > end {
                            std::mem::swap(&mut start, &mut end);
                        }
                        let c = signed(s[0]);
                        pat = &pat[2..];
                        if c >= start && c <= end {
                            matched = true;
                        }
                    } else if pat[0] == s[0] {
                        matched = true;
                    }
                    pat = &pat[1..];
                }
                if negate {
                    matched = !matched;
                }
                if !matched {
                    return false;
                }
                s = &s[1..];
                if pat.is_empty() {
                    // The unterminated-class case: the C code's pattern-- / pattern++ pair.
                    if s.is_empty() {
                        return true;
                    }
                    return false;
                }
            }
            c => {
                let c = if c == b'\\' && pat.len() >= 2 {
                    pat = &pat[1..];
                    pat[0]
                } else {
                    c
                };
                if c != s[0] {
                    return false;
                }
                s = &s[1..];
            }
        }
        pat = &pat[1..];
        if s.is_empty() {
            while at(pat, 0) == b'*' && !pat.is_empty() {
                pat = &pat[1..];
            }
            break;
        }
    }
    pat.is_empty() && s.is_empty()
}

#[cfg(test)]
mod tests {
    //! Tests of `globmatch`.
    use super::matches;

    #[test]
    fn basics() {
        assert!(matches(b"*", b"anything"));
        assert!(matches(b"h?llo", b"hello"));
        assert!(matches(b"h*llo", b"heeeello"));
        assert!(matches(b"h[ae]llo", b"hallo"));
        assert!(!matches(b"h[ae]llo", b"hillo"));
        assert!(matches(b"h[^e]llo", b"hallo"));
        assert!(!matches(b"h[^e]llo", b"hello"));
        assert!(matches(b"h[a-b]llo", b"hbllo"));
        assert!(matches(b"h[b-a]llo", b"hallo"));
        assert!(matches(b"a\\*b", b"a*b"));
        assert!(!matches(b"a\\*b", b"axb"));
        assert!(matches(b"key:*", b"key:1"));
        assert!(!matches(b"key:*", b"ke"));
        assert!(matches(b"a*", b"a"));
        assert!(matches(b"*a*b*", b"xxaxxbxx"));
        assert!(!matches(b"", b"a"));
        assert!(matches(b"", b""));
    }
}
