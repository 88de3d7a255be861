//! The request → reply logic: `ping`, `echo`, `fill` and error replies, with the 1 MiB reply
//! cap. It turns one request body into one reply body and knows nothing about framing or I/O.

use std::io::{self, Write};

use serde_json::{Number, Value};

use crate::framing::MAX_REPLY;

// The fixed parts of the replies (SPEC.md), for any host of the protocol.
pub const PONG: &[u8] = br#"{"op":"pong"}"#;
pub const ECHO_PREFIX: &[u8] = br#"{"op":"echo","data":"#;
pub const ECHO_SUFFIX: &[u8] = b"}";
pub const FILL_PREFIX: &[u8] = br#"{"op":"fill","data":""#;
pub const FILL_SUFFIX: &[u8] = br#""}"#;

/// The smallest fill reply: `{"op":"fill","data":""}`, 23 bytes.
pub const FILL_MIN: usize = FILL_PREFIX.len() + FILL_SUFFIX.len();

/// Longest piece of a client-supplied `op` quoted back in an error message, so an error
/// reply stays small whatever the request held.
pub const QUOTE_LIMIT: usize = 64;

/// Appends the reply body to `request` to `out`: at most `MAX_REPLY` bytes, always one JSON
/// object, an `{"error": ...}` one when the request cannot be answered.
pub fn respond(request: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    let mut capped = Capped {
        limit: start + MAX_REPLY,
        out: &mut *out,
    };
    if let Err(reason) = answer(request, &mut capped) {
        out.truncate(start);
        write_error(out, &reason);
    }
}

/// Writes the reply to `request` into `out`, or says why there is none.
fn answer(request: &[u8], out: &mut Capped<'_>) -> Result<(), String> {
    // Checked up front for a clear message; serde_json's `from_str` then trusts the text
    // instead of validating every string a second time.
    let text =
        std::str::from_utf8(request).map_err(|e| format!("request is not valid UTF-8: {e}"))?;
    // serde_json rejects NaN, Infinity and trailing garbage, and nesting deeper than 128
    // levels, so a million `[` is an error here rather than a stack overflow.
    let request: Value =
        serde_json::from_str(text).map_err(|e| format!("request is not valid JSON: {e}"))?;
    let Value::Object(request) = request else {
        return Err(format!(
            "request must be a JSON object, not {}",
            kind(&request)
        ));
    };
    let op = match request.get("op") {
        Some(Value::String(op)) => op.as_str(),
        Some(other) => return Err(format!("\"op\" must be a string, not {}", kind(other))),
        None => return Err("request has no \"op\" member".to_owned()),
    };

    match op {
        "ping" => out.put(PONG),
        "echo" => {
            let data = request
                .get("data")
                .ok_or_else(|| "echo request has no \"data\" member".to_owned())?;
            out.put(ECHO_PREFIX)?;
            // Re-serialised from the parsed value, never copied from the request bytes: the
            // reply is what this host's JSON library makes of the data.
            serde_json::to_writer(&mut *out, data).map_err(|_| too_big())?;
            out.put(ECHO_SUFFIX)
        }
        "fill" => {
            let len = fill_len(request.get("bytes"))?;
            out.put(FILL_PREFIX)?;
            out.put_repeated(b'x', len - FILL_MIN)?;
            out.put(FILL_SUFFIX)
        }
        other => Err(format!("unknown op {}", quote(other))),
    }
}

/// The body size a fill request asks for, checked to be a reply this host can send.
fn fill_len(bytes: Option<&Value>) -> Result<usize, String> {
    let n = match bytes {
        Some(Value::Number(n)) => n,
        Some(other) => return Err(format!("\"bytes\" must be an integer, not {}", kind(other))),
        None => return Err("fill request has no \"bytes\" member".to_owned()),
    };
    match n.as_u64().map(usize::try_from) {
        Some(Ok(len)) if (FILL_MIN..=MAX_REPLY).contains(&len) => Ok(len),
        Some(_) => Err(out_of_range(n)),
        None if n.is_i64() => Err(format!("\"bytes\" must not be negative, got {n}")),
        None => Err(format!("\"bytes\" must be an integer, got {n}")),
    }
}

fn out_of_range(n: &Number) -> String {
    format!("\"bytes\" is {n}, but a fill reply must be {FILL_MIN} to {MAX_REPLY} bytes")
}

/// The error message for a reply over the cap.
pub fn too_big() -> String {
    format!("reply would exceed the Native Messaging limit of {MAX_REPLY} bytes")
}

/// Appends `{"error": reason}` to `out`; serde_json escapes whatever `reason` quotes.
fn write_error(out: &mut Vec<u8>, reason: &str) {
    write_error_with(out, reason, |out, reason| {
        serde_json::to_writer(out, reason)
    });
}

/// Appends `{"error": reason}` to `out`, `reason` written as a JSON string by `write_string`
/// (a host's JSON library: it escapes whatever `reason` quotes).
pub fn write_error_with<E>(
    out: &mut Vec<u8>,
    reason: &str,
    write_string: impl FnOnce(&mut Vec<u8>, &str) -> Result<(), E>,
) {
    let start = out.len();
    out.extend_from_slice(br#"{"error":"#);
    if write_string(out, reason).is_err() {
        // Writing into a Vec cannot fail; this keeps the reply valid JSON regardless.
        out.truncate(start);
        out.extend_from_slice(br#"{"error":"internal error"}"#);
        return;
    }
    out.push(b'}');
}

/// A client-supplied string for an error message: quoted with escapes (so control
/// characters stay visible), cut at `QUOTE_LIMIT` characters.
pub fn quote(s: &str) -> String {
    match s.char_indices().nth(QUOTE_LIMIT) {
        Some((cut, _)) => format!("{:?}...", &s[..cut]),
        None => format!("{s:?}"),
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A `Vec` writer that refuses to grow past `limit`, so an oversized echo stops as soon as
/// it crosses the reply cap instead of serialising (say) 64 MiB only to throw it away.
struct Capped<'a> {
    out: &'a mut Vec<u8>,
    limit: usize,
}

impl Capped<'_> {
    fn room(&self, n: usize) -> Result<(), String> {
        if n > self.limit.saturating_sub(self.out.len()) {
            return Err(too_big());
        }
        Ok(())
    }

    fn put(&mut self, bytes: &[u8]) -> Result<(), String> {
        self.room(bytes.len())?;
        self.out.extend_from_slice(bytes);
        Ok(())
    }

    fn put_repeated(&mut self, byte: u8, n: usize) -> Result<(), String> {
        self.room(n)?;
        self.out.resize(self.out.len() + n, byte);
        Ok(())
    }
}

impl Write for Capped<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.write_all(buf)?;
        Ok(buf.len())
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.put(buf)
            .map_err(|reason| io::Error::new(io::ErrorKind::FileTooLarge, reason))
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// The protocol's checks, for any responder of the nativemsg protocol: ping, echo
/// re-serialisation, fill sizes, error replies for bad input, and the 1 MiB reply cap, as
/// SPEC.md has them. This crate runs them on its own `respond`; a host with another JSON
/// library runs them on its responder with `protocol_tests!` (feature `test-support`) and
/// keeps the checks of its own library's edge cases beside them. Replies are read back with
/// serde_json.
#[cfg(any(test, feature = "test-support"))]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
pub mod checks {
    use super::{ECHO_PREFIX, ECHO_SUFFIX, FILL_MIN, QUOTE_LIMIT};
    use crate::framing::MAX_REPLY;
    use serde_json::{json, Value};

    /// A responder under test.
    pub type Respond = fn(&[u8], &mut Vec<u8>);

    /// The reply body to `request`, checked to be within the cap.
    pub fn reply_bytes(respond: Respond, request: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        respond(request, &mut out);
        assert!(out.len() <= MAX_REPLY);
        out
    }

    /// The reply to `request`, parsed.
    pub fn reply(respond: Respond, request: &[u8]) -> Value {
        serde_json::from_slice(&reply_bytes(respond, request)).expect("reply is JSON")
    }

    /// The message of the error reply to `request`; fails if the reply is not one.
    pub fn error_of(respond: Respond, request: &[u8]) -> String {
        let r = reply(respond, request);
        match r.get("error") {
            Some(Value::String(e)) if !e.is_empty() => e.clone(),
            _ => panic!("not an error reply: {r}"),
        }
    }

    pub fn ping_gets_pong(respond: Respond) {
        assert_eq!(reply(respond, br#"{"op":"ping"}"#), json!({"op": "pong"}));
        assert_eq!(
            reply(respond, br#"{"op":"ping","extra":[1,2],"data":null}"#),
            json!({"op": "pong"})
        );
    }

    pub fn echo_re_serialises_any_value(respond: Respond) {
        let data = json!({
            "s": "quote \" backslash \\ newline \n nul \u{0000} é € 😀",
            "n": [0, -1, 1.5, 1e300, -2.2250738585072014e-308, 9007199254740993u64],
            "b": [true, false, null],
            "o": {"": {}, "a": []},
        });
        let req = serde_json::to_vec(&json!({"op": "echo", "data": data})).unwrap();
        assert_eq!(reply(respond, &req), json!({"op": "echo", "data": data}));
        for scalar in ["null", "0", "\"\"", "[]", "{}", "true", "-0.0", "0.1"] {
            let req = format!(r#"{{"op":"echo","data":{scalar}}}"#);
            let want: Value = serde_json::from_str(scalar).unwrap();
            assert_eq!(
                reply(respond, req.as_bytes()),
                json!({"op": "echo", "data": want})
            );
        }
    }

    pub fn echo_is_not_a_byte_copy(respond: Respond) {
        // Whitespace and escapes are normalised: proof the host parsed and re-wrote the data.
        let out = reply_bytes(respond, br#"{"op":"echo","data":[ 1 , "\u0041" ]}"#);
        assert_eq!(out, br#"{"op":"echo","data":[1,"A"]}"#);
    }

    pub fn floats_round_trip_exactly(respond: Respond) {
        for f in [
            0.1f64,
            1.0 / 3.0,
            5e-324,
            1.7976931348623157e308,
            123456.789e-7,
        ] {
            let req = format!(r#"{{"op":"echo","data":{f:e}}}"#);
            let got = reply(respond, req.as_bytes())["data"].as_f64().unwrap();
            assert_eq!(got.to_bits(), f.to_bits(), "{f:e}");
        }
    }

    pub fn nul_in_strings_survives(respond: Respond) {
        let out = reply(respond, br#"{"op":"echo","data":"a\u0000b"}"#);
        assert_eq!(out["data"], "a\u{0}b");
    }

    pub fn echo_without_data_is_an_error(respond: Respond) {
        error_of(respond, br#"{"op":"echo"}"#);
    }

    pub fn fill_is_exactly_n_bytes(respond: Respond) {
        for n in [
            FILL_MIN,
            FILL_MIN + 1,
            100,
            65_536,
            MAX_REPLY - 1,
            MAX_REPLY,
        ] {
            let out = reply_bytes(
                respond,
                format!(r#"{{"op":"fill","bytes":{n}}}"#).as_bytes(),
            );
            assert_eq!(out.len(), n);
            let v: Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(v["op"], "fill");
            let s = v["data"].as_str().unwrap();
            assert!(s.bytes().all(|b| b == b'x'));
        }
        assert_eq!(FILL_MIN, 23);
    }

    pub fn fill_rejects_bad_sizes(respond: Respond) {
        for bytes in [
            "22",
            "0",
            "-1",
            "1048577",
            "4294967296",
            "4294967319",           // 2^32 + 23: a valid 23 if truncated to 32 bits
            "18446744073709551639", // 2^64 + 23: wraps to 23 in 64 bits
            "1e400",
            "1.5",
            "100.0",
            "1e3",
            "\"100\"",
            "null",
            "[100]",
        ] {
            let req = format!(r#"{{"op":"fill","bytes":{bytes}}}"#);
            error_of(respond, req.as_bytes());
        }
        error_of(respond, br#"{"op":"fill"}"#);
    }

    pub fn bad_requests_get_error_replies(respond: Respond) {
        let cases: &[&[u8]] = &[
            b"",
            b"   ",
            b"not json",
            b"NaN",
            b"Infinity",
            b"{\"op\":\"echo\",\"data\":NaN}",
            b"{\"op\":\"ping\"} trailing",
            b"{\"op\":\"ping\"}{}",
            b"[\"ping\"]",
            b"\"ping\"",
            b"42",
            b"null",
            b"{}",
            b"{\"op\":null}",
            b"{\"op\":1}",
            b"{\"op\":[\"ping\"]}",
            b"{\"op\":\"PING\"}",
            b"{\"op\":\"frob\"}",
            b"{\"op\":\"ping\"\xff}",
            b"{\"op\":\"echo\",\"data\":\"\xc3\x28\"}",
            b"{\"op\":\"echo\",\"data\":\"\xed\xa0\x80\"}", // UTF-8-encoded surrogate
            b"{\"op\":\"echo\",\"data\":\"\xc0\xaf\"}",     // overlong encoding
            b"{\"op\":\"echo\",\"data\":\"a\x01\"}",        // raw control character
            b"\xef\xbb\xbf{\"op\":\"ping\"}",               // BOM
        ];
        for &req in cases {
            error_of(respond, req);
        }
    }

    pub fn deep_nesting_is_an_error_not_a_crash(respond: Respond) {
        let mut req = br#"{"op":"echo","data":"#.to_vec();
        req.extend(std::iter::repeat_n(b'[', 1_000_000));
        error_of(respond, &req);
        // Balanced, too deep: also refused.
        let deep = format!(
            r#"{{"op":"echo","data":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        error_of(respond, deep.as_bytes());
    }

    pub fn reply_cap_is_exact(respond: Respond) {
        // The echo wrapper around a string is 23 bytes: {"op":"echo","data":"…"}.
        let wrapper = ECHO_PREFIX.len() + 2 + ECHO_SUFFIX.len();
        let fits = "y".repeat(MAX_REPLY - wrapper);
        let req = serde_json::to_vec(&json!({"op": "echo", "data": fits})).unwrap();
        assert_eq!(reply_bytes(respond, &req).len(), MAX_REPLY);

        let over = "y".repeat(MAX_REPLY - wrapper + 1);
        let req = serde_json::to_vec(&json!({"op": "echo", "data": over})).unwrap();
        assert!(error_of(respond, &req).contains("exceed"));
    }

    pub fn huge_echo_gets_an_error_reply(respond: Respond) {
        let big = "z".repeat(2 * MAX_REPLY);
        let req = serde_json::to_vec(&json!({"op": "echo", "data": big})).unwrap();
        error_of(respond, &req);
        // Escapes can push a reply over the cap even when the request was under it.
        let quotes = "\"".repeat(MAX_REPLY / 2 + 10);
        let req = serde_json::to_vec(&json!({"op": "echo", "data": quotes})).unwrap();
        error_of(respond, &req);
    }

    pub fn error_messages_quote_the_op_safely(respond: Respond) {
        let e = error_of(respond, br#"{"op":"fr\"ob"}"#);
        assert!(e.contains(r#""fr\"ob""#), "{e}");
        let long = "é".repeat(10 * QUOTE_LIMIT);
        let req = serde_json::to_vec(&json!({ "op": long })).unwrap();
        let e = error_of(respond, &req);
        assert!(e.len() < 4 * QUOTE_LIMIT, "{e}");
    }

    pub fn respond_appends_after_existing_bytes(respond: Respond) {
        // The host keeps a frame header in front of the body; respond must not disturb it,
        // and the 1 MiB cap applies to what it adds.
        let mut out = vec![9, 9, 9, 9];
        respond(br#"{"op":"fill","bytes":1048576}"#, &mut out);
        assert_eq!(&out[..4], &[9, 9, 9, 9]);
        assert_eq!(out.len(), 4 + MAX_REPLY);
        let mut out = vec![9, 9, 9, 9];
        respond(b"oops", &mut out);
        assert_eq!(&out[..4], &[9, 9, 9, 9]);
        assert!(serde_json::from_slice::<Value>(&out[4..]).unwrap()["error"].is_string());
    }
}

/// One `#[test]` per check of `protocol::checks`, each run on the responder given.
#[cfg(any(test, feature = "test-support"))]
#[macro_export]
macro_rules! protocol_tests {
    ($respond:expr) => {
        $crate::__tests_of_checks!(protocol::checks, $respond;
            ping_gets_pong,
            echo_re_serialises_any_value,
            echo_is_not_a_byte_copy,
            floats_round_trip_exactly,
            nul_in_strings_survives,
            echo_without_data_is_an_error,
            fill_is_exactly_n_bytes,
            fill_rejects_bad_sizes,
            bad_requests_get_error_replies,
            deep_nesting_is_an_error_not_a_crash,
            reply_cap_is_exact,
            huge_echo_gets_an_error_reply,
            error_messages_quote_the_op_safely,
            respond_appends_after_existing_bytes,
        );
    };
}

#[cfg(test)]
mod tests {
    //! The protocol's checks (`checks`) on this host's `respond`, and the edge cases of
    //! serde_json's nesting limit.

    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::checks::reply;
    use super::*;

    crate::protocol_tests!(respond);

    #[test]
    fn moderate_nesting_is_echoed() {
        let nested = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let req = format!(r#"{{"op":"echo","data":{nested}}}"#);
        let want: Value = serde_json::from_str(&nested).unwrap();
        assert_eq!(reply(respond, req.as_bytes())["data"], want);
    }
}
