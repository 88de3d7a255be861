//! Tests of `glob`.
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
