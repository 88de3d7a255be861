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
