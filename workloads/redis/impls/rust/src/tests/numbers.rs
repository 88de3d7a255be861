//! Tests of `numbers`: redis's integer strictness, strtod acceptance and `%.17g`.

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
