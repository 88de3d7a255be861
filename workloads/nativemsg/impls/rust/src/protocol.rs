//! The request → reply logic: `ping`, `echo`, `fill` and error replies, with the 1 MiB reply
//! cap. It turns one request body into one reply body and knows nothing about framing or I/O.

use std::io::{self, Write};

use serde_json::{Number, Value};

use crate::framing::MAX_REPLY;

const PONG: &[u8] = br#"{"op":"pong"}"#;
const ECHO_PREFIX: &[u8] = br#"{"op":"echo","data":"#;
const ECHO_SUFFIX: &[u8] = b"}";
const FILL_PREFIX: &[u8] = br#"{"op":"fill","data":""#;
const FILL_SUFFIX: &[u8] = br#""}"#;

/// The smallest fill reply: `{"op":"fill","data":""}`, 23 bytes.
pub const FILL_MIN: usize = FILL_PREFIX.len() + FILL_SUFFIX.len();

/// Longest piece of a client-supplied `op` quoted back in an error message, so an error
/// reply stays small whatever the request held.
const QUOTE_LIMIT: usize = 64;

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

fn too_big() -> String {
    format!("reply would exceed the Native Messaging limit of {MAX_REPLY} bytes")
}

/// Appends `{"error": reason}` to `out`; serde_json escapes whatever `reason` quotes.
fn write_error(out: &mut Vec<u8>, reason: &str) {
    let start = out.len();
    out.extend_from_slice(br#"{"error":"#);
    if serde_json::to_writer(&mut *out, reason).is_err() {
        // Writing into a Vec cannot fail; this keeps the reply valid JSON regardless.
        out.truncate(start);
        out.extend_from_slice(br#"{"error":"internal error"}"#);
        return;
    }
    out.push(b'}');
}

/// A client-supplied string for an error message: quoted with escapes (so control
/// characters stay visible), cut at `QUOTE_LIMIT` characters.
fn quote(s: &str) -> String {
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

#[cfg(test)]
mod tests {
    //! Unit tests of the request → reply logic: ping, echo re-serialisation, fill sizes, error
    //! replies for bad input, and the 1 MiB reply cap.

    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use serde_json::json;

    fn reply_bytes(request: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        respond(request, &mut out);
        assert!(out.len() <= MAX_REPLY);
        out
    }

    fn reply(request: &[u8]) -> Value {
        serde_json::from_slice(&reply_bytes(request)).expect("reply is JSON")
    }

    fn error_of(request: &[u8]) -> String {
        let r = reply(request);
        match r.get("error") {
            Some(Value::String(e)) if !e.is_empty() => e.clone(),
            _ => panic!("not an error reply: {r}"),
        }
    }

    #[test]
    fn ping_gets_pong() {
        assert_eq!(reply(br#"{"op":"ping"}"#), json!({"op": "pong"}));
        assert_eq!(
            reply(br#"{"op":"ping","extra":[1,2],"data":null}"#),
            json!({"op": "pong"})
        );
    }

    #[test]
    fn echo_re_serialises_any_value() {
        let data = json!({
            "s": "quote \" backslash \\ newline \n nul \u{0000} é € 😀",
            "n": [0, -1, 1.5, 1e300, -2.2250738585072014e-308, 9007199254740993u64],
            "b": [true, false, null],
            "o": {"": {}, "a": []},
        });
        let req = serde_json::to_vec(&json!({"op": "echo", "data": data})).unwrap();
        assert_eq!(reply(&req), json!({"op": "echo", "data": data}));
        for scalar in ["null", "0", "\"\"", "[]", "{}", "true", "-0.0", "0.1"] {
            let req = format!(r#"{{"op":"echo","data":{scalar}}}"#);
            let want: Value = serde_json::from_str(scalar).unwrap();
            assert_eq!(reply(req.as_bytes()), json!({"op": "echo", "data": want}));
        }
    }

    #[test]
    fn echo_is_not_a_byte_copy() {
        // Whitespace and escapes are normalised: proof the host parsed and re-wrote the data.
        let out = reply_bytes(br#"{"op":"echo","data":[ 1 , "\u0041" ]}"#);
        assert_eq!(out, br#"{"op":"echo","data":[1,"A"]}"#);
    }

    #[test]
    fn floats_round_trip_exactly() {
        for f in [
            0.1f64,
            1.0 / 3.0,
            5e-324,
            1.7976931348623157e308,
            123456.789e-7,
        ] {
            let req = format!(r#"{{"op":"echo","data":{f:e}}}"#);
            let got = reply(req.as_bytes())["data"].as_f64().unwrap();
            assert_eq!(got.to_bits(), f.to_bits(), "{f:e}");
        }
    }

    #[test]
    fn nul_in_strings_survives() {
        let out = reply(br#"{"op":"echo","data":"a\u0000b"}"#);
        assert_eq!(out["data"], "a\u{0}b");
    }

    #[test]
    fn echo_without_data_is_an_error() {
        error_of(br#"{"op":"echo"}"#);
    }

    #[test]
    fn fill_is_exactly_n_bytes() {
        for n in [
            FILL_MIN,
            FILL_MIN + 1,
            100,
            65_536,
            MAX_REPLY - 1,
            MAX_REPLY,
        ] {
            let out = reply_bytes(format!(r#"{{"op":"fill","bytes":{n}}}"#).as_bytes());
            assert_eq!(out.len(), n);
            let v: Value = serde_json::from_slice(&out).unwrap();
            assert_eq!(v["op"], "fill");
            let s = v["data"].as_str().unwrap();
            assert!(s.bytes().all(|b| b == b'x'));
        }
        assert_eq!(FILL_MIN, 23);
    }

    #[test]
    fn fill_rejects_bad_sizes() {
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
            error_of(req.as_bytes());
        }
        error_of(br#"{"op":"fill"}"#);
    }

    #[test]
    fn bad_requests_get_error_replies() {
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
            b"\xef\xbb\xbf{\"op\":\"ping\"}",               // BOM
        ];
        for &req in cases {
            error_of(req);
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let mut req = br#"{"op":"echo","data":"#.to_vec();
        req.extend(std::iter::repeat_n(b'[', 1_000_000));
        error_of(&req);
        // Balanced, too deep: also refused.
        let deep = format!(
            r#"{{"op":"echo","data":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        error_of(deep.as_bytes());
    }

    #[test]
    fn moderate_nesting_is_echoed() {
        let nested = format!("{}{}", "[".repeat(100), "]".repeat(100));
        let req = format!(r#"{{"op":"echo","data":{nested}}}"#);
        let want: Value = serde_json::from_str(&nested).unwrap();
        assert_eq!(reply(req.as_bytes())["data"], want);
    }

    #[test]
    fn reply_cap_is_exact() {
        // The echo wrapper around a string is 23 bytes: {"op":"echo","data":"…"}.
        let wrapper = ECHO_PREFIX.len() + 2 + ECHO_SUFFIX.len();
        let fits = "y".repeat(MAX_REPLY - wrapper);
        let req = serde_json::to_vec(&json!({"op": "echo", "data": fits})).unwrap();
        assert_eq!(reply_bytes(&req).len(), MAX_REPLY);

        let over = "y".repeat(MAX_REPLY - wrapper + 1);
        let req = serde_json::to_vec(&json!({"op": "echo", "data": over})).unwrap();
        assert!(error_of(&req).contains("exceed"));
    }

    #[test]
    fn huge_echo_gets_an_error_reply() {
        let big = "z".repeat(2 * MAX_REPLY);
        let req = serde_json::to_vec(&json!({"op": "echo", "data": big})).unwrap();
        error_of(&req);
        // Escapes can push a reply over the cap even when the request was under it.
        let quotes = "\"".repeat(MAX_REPLY / 2 + 10);
        let req = serde_json::to_vec(&json!({"op": "echo", "data": quotes})).unwrap();
        error_of(&req);
    }

    #[test]
    fn error_messages_quote_the_op_safely() {
        let e = error_of(br#"{"op":"fr\"ob"}"#);
        assert!(e.contains(r#""fr\"ob""#), "{e}");
        let long = "é".repeat(10 * QUOTE_LIMIT);
        let req = serde_json::to_vec(&json!({ "op": long })).unwrap();
        let e = error_of(&req);
        assert!(e.len() < 4 * QUOTE_LIMIT, "{e}");
    }

    #[test]
    fn respond_appends_after_existing_bytes() {
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
