//! Reply verification (SPEC §5): the first `--check-full` replies of a trial are parsed and
//! compared as JSON with the expected reply; the others must be frames of the same length as
//! the first reply, since a host's serialiser is deterministic and the requests of a trial
//! differ only in a fixed-width sequence number.
//!
//! "Equal as JSON" is the lab's definition (docs/decisions.md): same types and structure,
//! object members as unordered sets, strings as code points, numbers as IEEE-754 doubles.

use crate::payload::Request;
use driver_kit::error::{Failure, Result};
use serde_json::Value;
use std::time::{Duration, Instant};

/// How many bytes or characters of a reply an error message quotes.
const EXCERPT: usize = 160;

pub struct Checker {
    check_full: u64,
    /// Length of the first reply of the trial (which is always fully checked).
    expected_len: Option<usize>,
    full: u64,
    length: u64,
    /// Time spent parsing and comparing; the modes subtract it from the closed-loop time so
    /// that verification does not lower the measured throughput.
    full_check_time: Duration,
}

impl Checker {
    pub fn new(check_full: u64) -> Self {
        Checker {
            check_full,
            expected_len: None,
            full: 0,
            length: 0,
            full_check_time: Duration::ZERO,
        }
    }

    /// Starts the measured phase: warm-up replies were checked the same way, but the counts
    /// reported (and the first `--check-full` full checks) are those of measured operations.
    /// The reference length is kept.
    pub fn start_measuring(&mut self) {
        self.full = 0;
        self.length = 0;
        self.full_check_time = Duration::ZERO;
    }

    /// (fully checked, length checked) replies since `start_measuring`.
    pub fn counts(&self) -> (u64, u64) {
        (self.full, self.length)
    }

    pub fn full_check_time(&self) -> Duration {
        self.full_check_time
    }

    /// Verifies one reply body to `request` as it was sent.
    pub fn check(&mut self, reply: &[u8], request: &mut Request) -> Result<()> {
        match self.expected_len {
            Some(expected_len) if self.full >= self.check_full => {
                if reply.len() != expected_len {
                    return Err(Failure::new(format!(
                        "the reply is {} bytes, the first reply of the trial was {expected_len} \
                         (a correct host gives every reply of a trial the same length); got {}",
                        reply.len(),
                        excerpt(reply)
                    )));
                }
                self.length += 1;
            }
            _ => {
                let started = Instant::now();
                let verdict = verify_reply(reply, request.expected_reply());
                self.full_check_time += started.elapsed();
                verdict?;
                self.expected_len.get_or_insert(reply.len());
                self.full += 1;
            }
        }
        Ok(())
    }
}

/// Parses `reply` and compares it as JSON with `expected`.
pub fn verify_reply(reply: &[u8], expected: &Value) -> Result<()> {
    let got: Value = serde_json::from_slice(reply).map_err(|e| {
        Failure::new(format!(
            "the reply is not JSON ({e}); expected {}, got {}",
            value_excerpt(expected),
            excerpt(reply)
        ))
    })?;
    if got.get("error").is_some() && expected.get("error").is_none() {
        return Err(Failure::new(format!(
            "the host answered with an error reply: {}",
            excerpt(reply)
        )));
    }
    match first_difference(expected, &got, "$") {
        None => Ok(()),
        Some(difference) => Err(Failure::new(format!(
            "wrong reply: {difference}; expected {}, got {}",
            value_excerpt(expected),
            excerpt(reply)
        ))),
    }
}

/// Where `got` first differs from `expected` as JSON, described for a person; None if equal.
pub fn first_difference(expected: &Value, got: &Value, path: &str) -> Option<String> {
    match (expected, got) {
        (Value::Null, Value::Null) => None,
        (Value::Bool(a), Value::Bool(b)) if a == b => None,
        (Value::Number(a), Value::Number(b)) => {
            // Compared as doubles: 1, 1.0 and 1e0 are the same number to a browser.
            (a.as_f64() != b.as_f64())
                .then(|| format!("at {path}: expected the number {a}, got {b}"))
        }
        (Value::String(a), Value::String(b)) => string_difference(a, b, path),
        (Value::Array(a), Value::Array(b)) => {
            if a.len() != b.len() {
                return Some(format!(
                    "at {path}: expected an array of {} elements, got {}",
                    a.len(),
                    b.len()
                ));
            }
            a.iter()
                .zip(b)
                .enumerate()
                .find_map(|(i, (x, y))| first_difference(x, y, &format!("{path}[{i}]")))
        }
        (Value::Object(a), Value::Object(b)) => {
            if let Some(missing) = a.keys().find(|k| !b.contains_key(*k)) {
                return Some(format!("at {path}: the member {missing:?} is missing"));
            }
            if let Some(extra) = b.keys().find(|k| !a.contains_key(*k)) {
                return Some(format!("at {path}: unexpected member {extra:?}"));
            }
            a.iter()
                .find_map(|(k, x)| first_difference(x, &b[k], &format!("{path}.{k}")))
        }
        _ => Some(format!(
            "at {path}: expected {}, got {}",
            kind(expected),
            kind(got)
        )),
    }
}

fn string_difference(expected: &str, got: &str, path: &str) -> Option<String> {
    if expected == got {
        return None;
    }
    let at = expected
        .chars()
        .zip(got.chars())
        .take_while(|(x, y)| x == y)
        .count();
    let window = |s: &str| s.chars().skip(at).take(24).collect::<String>();
    Some(format!(
        "at {path}: the strings differ from code point {at} on (expected {:?}, got {:?}; \
         lengths {} and {} code points)",
        window(expected),
        window(got),
        expected.chars().count(),
        got.chars().count()
    ))
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The start of a reply, quoted with escapes (so NUL bytes of a bad length prefix show).
pub fn excerpt(bytes: &[u8]) -> String {
    let shown = &bytes[..bytes.len().min(EXCERPT)];
    let text = String::from_utf8_lossy(shown);
    if bytes.len() > EXCERPT {
        format!("{text:?}… ({} bytes)", bytes.len())
    } else {
        format!("{text:?}")
    }
}

fn value_excerpt(value: &Value) -> String {
    excerpt(value.to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn echo_reply_for(request: &mut Request) -> Vec<u8> {
        serde_json::to_vec(request.expected_reply()).unwrap()
    }

    #[test]
    fn accepts_a_correct_pong() {
        let mut checker = Checker::new(50);
        checker
            .check(br#"{"op":"pong"}"#, &mut Request::ping())
            .unwrap();
        checker
            .check(b" { \"op\" : \"pong\" }\n", &mut Request::ping())
            .unwrap();
        assert_eq!(checker.counts(), (2, 0));
    }

    #[test]
    fn rejects_a_wrong_pong() {
        for (reply, expect) in [
            (&br#"{"op":"ping"}"#[..], "at $.op"),
            (br#"{"op":"pong","x":1}"#, "unexpected member"),
            (br#"{}"#, "missing"),
            (br#"["pong"]"#, "expected an object"),
            (br#"{"op":"pong"} trailing"#, "not JSON"),
            (br#"{"error":"unknown op"}"#, "error reply"),
            (b"\xff\xfe", "not JSON"),
        ] {
            let err = Checker::new(50)
                .check(reply, &mut Request::ping())
                .unwrap_err();
            assert!(err.message().contains(expect), "{reply:?}: {err}");
        }
    }

    #[test]
    fn rejects_an_8_byte_length_reply() {
        // What a driver that reads 4 length bytes sees from a host that wrote 8: four NUL
        // bytes, then the body cut short by four.
        let err = Checker::new(50)
            .check(b"\0\0\0\0{\"op\":\"po", &mut Request::ping())
            .unwrap_err();
        assert!(err.message().contains("not JSON"), "{err}");
        assert!(
            err.message().contains("\\0"),
            "the excerpt shows the NULs: {err}"
        );
    }

    #[test]
    fn accepts_a_re_serialised_echo() {
        let mut request = Request::echo(2048).unwrap();
        request.set_seq(7);
        // Members reordered, non-ASCII written as \u escapes, the number as a double: all
        // equal as JSON.
        let expected = request.expected_reply().clone();
        let text = serde_json::to_string(&expected["data"]["text"]).unwrap();
        let ascii: String = text
            .chars()
            .map(|c| {
                if c.is_ascii() {
                    c.to_string()
                } else {
                    c.encode_utf16(&mut [0; 2])
                        .iter()
                        .map(|u| format!("\\u{u:04x}"))
                        .collect()
                }
            })
            .collect();
        let reply = format!(r#"{{"data":{{"text":{ascii},"seq":100007.0}},"op":"echo"}}"#);
        Checker::new(50)
            .check(reply.as_bytes(), &mut request)
            .unwrap();
    }

    #[test]
    fn rejects_a_wrong_echo() {
        let mut request = Request::echo(2048).unwrap();
        request.set_seq(3);
        let good = request.expected_reply().clone();
        let mut stale = good.clone();
        stale["data"]["seq"] = json!(100002);
        let mut changed = good.clone();
        let text = changed["data"]["text"].as_str().unwrap().replace('é', "e");
        changed["data"]["text"] = json!(text);
        let mut extra = good.clone();
        extra["id"] = json!(1);
        for (reply, expect) in [
            (stale, "at $.data.seq"),
            (changed, "at $.data.text"),
            (extra, "unexpected member \"id\""),
            (json!({"op": "pong"}), "missing"),
        ] {
            let bytes = serde_json::to_vec(&reply).unwrap();
            let err = Checker::new(50).check(&bytes, &mut request).unwrap_err();
            assert!(err.message().contains(expect), "{err}");
        }
    }

    #[test]
    fn after_the_full_checks_only_the_length_is_compared() {
        let mut request = Request::echo(1024).unwrap();
        let mut checker = Checker::new(2);
        for n in 0..5 {
            request.set_seq(n);
            let reply = echo_reply_for(&mut request);
            checker.check(&reply, &mut request).unwrap();
        }
        assert_eq!(checker.counts(), (2, 3));
        let mut short = echo_reply_for(&mut request);
        short.pop();
        let err = checker.check(&short, &mut request).unwrap_err();
        assert!(
            err.message().contains("first reply of the trial was"),
            "{err}"
        );
    }

    #[test]
    fn the_first_reply_is_checked_in_full_even_with_check_full_0() {
        let mut checker = Checker::new(0);
        assert!(checker.check(b"{}", &mut Request::ping()).is_err());
        checker
            .check(br#"{"op":"pong"}"#, &mut Request::ping())
            .unwrap();
        checker
            .check(br#"{"op":"gnop"}"#, &mut Request::ping())
            .unwrap();
        assert_eq!(checker.counts(), (1, 1));
    }

    #[test]
    fn measuring_restarts_the_counts_but_keeps_the_length() {
        let mut checker = Checker::new(1);
        checker
            .check(br#"{"op":"pong"}"#, &mut Request::ping())
            .unwrap();
        checker.start_measuring();
        assert_eq!(checker.counts(), (0, 0));
        checker
            .check(br#"{"op":"pong"}"#, &mut Request::ping())
            .unwrap();
        assert!(checker
            .check(b"{\"op\":\"pong\" }", &mut Request::ping())
            .is_err());
        assert_eq!(checker.counts(), (1, 0));
    }
}
