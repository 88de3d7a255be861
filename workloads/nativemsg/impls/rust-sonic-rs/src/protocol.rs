//! The request → reply logic on sonic-rs: `ping`, `echo`, `fill` and error replies, with the
//! 1 MiB reply cap and a nesting guard. It turns one request body into one reply body and
//! knows nothing about framing or I/O.

use sonic_rs::{JsonType, JsonValueTrait, Value};

use crate::framing::MAX_REPLY;

const PONG: &[u8] = br#"{"op":"pong"}"#;
const ECHO_PREFIX: &[u8] = br#"{"op":"echo","data":"#;
const ECHO_SUFFIX: &[u8] = b"}";
const FILL_PREFIX: &[u8] = br#"{"op":"fill","data":""#;
const FILL_SUFFIX: &[u8] = br#""}"#;

/// The smallest fill reply: `{"op":"fill","data":""}`, 23 bytes.
pub const FILL_MIN: usize = FILL_PREFIX.len() + FILL_SUFFIX.len();

/// Deepest nesting of arrays and objects this host parses (the request object is level 1).
///
/// sonic-rs parses and serialises nested values by recursion and has no depth limit of its
/// own: a million `[` overflows the stack and kills the process. Requests nested deeper than
/// this get an error reply before sonic-rs sees them. 128 is serde_json's default limit (the
/// rust host's), and it fits unoptimised builds too: there sonic-rs takes about 36 KiB of
/// stack per level (the fuzz replays and `cargo test` run debug builds), against about 200
/// bytes in the release build.
pub const MAX_DEPTH: usize = 128;

/// Longest piece of a client-supplied `op` quoted back in an error message, so an error
/// reply stays small whatever the request held.
const QUOTE_LIMIT: usize = 64;

/// Capacity the reply buffer is cut back to after a refused oversized reply. sonic-rs
/// reserves six times a string's length before escaping it, so one huge echo would otherwise
/// leave the host holding that much for the rest of the port.
const KEEP_CAPACITY: usize = 4 * MAX_REPLY;

/// Appends the reply body to `request` to `out`: at most `MAX_REPLY` bytes, always one JSON
/// object, an `{"error": ...}` one when the request cannot be answered.
pub fn respond(request: &[u8], out: &mut Vec<u8>) {
    let start = out.len();
    if let Err(reason) = answer(request, out) {
        out.truncate(start);
        out.shrink_to(KEEP_CAPACITY);
        write_error(out, &reason);
    } else if out.len() - start > MAX_REPLY {
        out.truncate(start);
        out.shrink_to(KEEP_CAPACITY);
        write_error(out, &too_big());
    }
}

/// Writes the reply to `request` into `out`, or says why there is none. The reply may
/// exceed the cap here: `respond` checks it once it is written.
fn answer(request: &[u8], out: &mut Vec<u8>) -> Result<(), String> {
    check_depth(request)?;
    // sonic-rs validates UTF-8 itself and rejects NaN, Infinity, raw control characters and
    // trailing garbage.
    let request: Value = sonic_rs::from_slice(request).map_err(|e| {
        // Its message ends with a few lines that show the text around the error: the first
        // line says what and where.
        let e = e.to_string();
        format!(
            "request is not valid JSON: {}",
            e.lines().next().unwrap_or("")
        )
    })?;
    if !request.is_object() {
        return Err(format!(
            "request must be a JSON object, not {}",
            kind(&request)
        ));
    }
    let op = match request.get("op") {
        Some(op) => match op.as_str() {
            Some(op) => op,
            None => return Err(format!("\"op\" must be a string, not {}", kind(op))),
        },
        None => return Err("request has no \"op\" member".to_owned()),
    };

    match op {
        "ping" => out.extend_from_slice(PONG),
        "echo" => {
            let data = request
                .get("data")
                .ok_or_else(|| "echo request has no \"data\" member".to_owned())?;
            out.extend_from_slice(ECHO_PREFIX);
            // Re-serialised from the parsed value, never copied from the request bytes: the
            // reply is what this host's JSON library makes of the data. Straight into the
            // Vec (sonic-rs writes into its spare capacity); the cap is checked afterwards.
            sonic_rs::to_writer(&mut *out, data)
                .map_err(|e| format!("cannot serialise the echo: {e}"))?;
            out.extend_from_slice(ECHO_SUFFIX);
        }
        "fill" => {
            let len = fill_len(request.get("bytes"))?;
            out.extend_from_slice(FILL_PREFIX);
            out.resize(out.len() + (len - FILL_MIN), b'x');
            out.extend_from_slice(FILL_SUFFIX);
        }
        other => return Err(format!("unknown op {}", quote(other))),
    }
    Ok(())
}

/// Refuses requests nested deeper than `MAX_DEPTH`, before sonic-rs recurses into them.
///
/// Nesting can be no deeper than the number of `[` and `{` bytes in the body, and one pass
/// that counts them is cheap (the compiler vectorises it). Only a body with more of them than
/// `MAX_DEPTH` is walked exactly, skipping strings the way a JSON parser does; on a valid
/// prefix of the body that walk sees the parser's nesting, and the parser stops at the first
/// byte that is not valid JSON, so it never goes deeper than the walk allows.
fn check_depth(body: &[u8]) -> Result<(), String> {
    if open_brackets(body) <= MAX_DEPTH {
        return Ok(());
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in body {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(format!("request is nested deeper than {MAX_DEPTH} levels"));
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// How many `[` and `{` bytes `body` holds, strings included. `b | 0x20` maps `[` (0x5B) to
/// `{` (0x7B) and no other byte to it. Counted 32 bytes at a time into 32 byte-wide counters,
/// emptied every 255 blocks before one can overflow: the compiler turns the inner loop into
/// vector compares and adds (about 0.3 instructions a byte, against 0.7 for a plain
/// `filter().count()`; callgrind on the echo-512k request).
fn open_brackets(body: &[u8]) -> usize {
    const LANES: usize = 32;
    let mut blocks = body.chunks_exact(LANES);
    let mut total = 0usize;
    loop {
        let mut counters = [0u8; LANES];
        let mut taken = 0;
        for block in blocks.by_ref().take(255) {
            for (c, &b) in counters.iter_mut().zip(block) {
                *c += u8::from(b | 0x20 == b'{');
            }
            taken += 1;
        }
        total += counters.iter().map(|&c| usize::from(c)).sum::<usize>();
        if taken < 255 {
            break;
        }
    }
    total
        + blocks
            .remainder()
            .iter()
            .filter(|&&b| b | 0x20 == b'{')
            .count()
}

/// The body size a fill request asks for, checked to be a reply this host can send.
fn fill_len(bytes: Option<&Value>) -> Result<usize, String> {
    let n = match bytes {
        Some(n) if n.is_number() => n,
        Some(other) => return Err(format!("\"bytes\" must be an integer, not {}", kind(other))),
        None => return Err("fill request has no \"bytes\" member".to_owned()),
    };
    match n.as_u64().map(usize::try_from) {
        Some(Ok(len)) if (FILL_MIN..=MAX_REPLY).contains(&len) => Ok(len),
        Some(_) => Err(format!(
            "\"bytes\" is {}, but a fill reply must be {FILL_MIN} to {MAX_REPLY} bytes",
            number(n)
        )),
        None if n.is_i64() => Err(format!("\"bytes\" must not be negative, got {}", number(n))),
        None => Err(format!("\"bytes\" must be an integer, got {}", number(n))),
    }
}

/// A number as JSON text, for an error message.
fn number(n: &Value) -> String {
    sonic_rs::to_string(n).unwrap_or_else(|_| "a number".to_owned())
}

fn too_big() -> String {
    format!("reply would exceed the Native Messaging limit of {MAX_REPLY} bytes")
}

/// Appends `{"error": reason}` to `out`; sonic-rs escapes whatever `reason` quotes.
fn write_error(out: &mut Vec<u8>, reason: &str) {
    let start = out.len();
    out.extend_from_slice(br#"{"error":"#);
    if sonic_rs::to_writer(&mut *out, reason).is_err() {
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
    match v.get_type() {
        JsonType::Null => "null",
        JsonType::Boolean => "a boolean",
        JsonType::Number => "a number",
        JsonType::String => "a string",
        JsonType::Array => "an array",
        JsonType::Object => "an object",
    }
}

#[cfg(test)]
mod tests {
    //! Unit tests of the request → reply logic: ping, echo re-serialisation, fill sizes, error
    //! replies for bad input, the nesting guard, and the 1 MiB reply cap. Replies are read
    //! back with serde_json, a second library.

    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use serde_json::{json, Value as Json};

    fn reply_bytes(request: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        respond(request, &mut out);
        assert!(out.len() <= MAX_REPLY);
        out
    }

    fn reply(request: &[u8]) -> Json {
        serde_json::from_slice(&reply_bytes(request)).expect("reply is JSON")
    }

    fn error_of(request: &[u8]) -> String {
        let r = reply(request);
        match r.get("error") {
            Some(Json::String(e)) if !e.is_empty() => e.clone(),
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
            let want: Json = serde_json::from_str(scalar).unwrap();
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
            let v: Json = serde_json::from_slice(&out).unwrap();
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
            b"{\"op\":\"echo\",\"data\":\"\xc0\xaf\"}",     // overlong encoding
            b"{\"op\":\"echo\",\"data\":\"a\x01\"}",        // raw control character
            b"\xef\xbb\xbf{\"op\":\"ping\"}",               // BOM
        ];
        for &req in cases {
            error_of(req);
        }
    }

    #[test]
    fn error_messages_are_one_line() {
        let e = error_of(br#"{"op":"ping",}"#);
        assert!(e.starts_with("request is not valid JSON: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    /// Runs `f` on a thread with a 64 MiB stack: in a debug build sonic-rs needs about
    /// 36 KiB per nesting level, more than the 2 MiB of a test thread holds at the limit.
    fn on_big_stack(f: impl FnOnce() + Send + 'static) {
        std::thread::Builder::new()
            .stack_size(64 << 20)
            .spawn(f)
            .unwrap()
            .join()
            .unwrap();
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let mut req = br#"{"op":"echo","data":"#.to_vec();
        req.extend(std::iter::repeat_n(b'[', 1_000_000));
        assert!(error_of(&req).contains("nested deeper"));
        for (open, close) in [("[", "]"), (r#"{"a":"#, "}")] {
            // Balanced, too deep: also refused, with the guard's message.
            let deep = format!(
                r#"{{"op":"echo","data":{}0{}}}"#,
                open.repeat(100_000),
                close.repeat(100_000)
            );
            assert!(error_of(deep.as_bytes()).contains("nested deeper"));
        }
    }

    #[test]
    fn nesting_up_to_the_limit_is_echoed() {
        on_big_stack(|| {
            // The request object itself is one level.
            for depth in [100, MAX_DEPTH - 1] {
                let nested = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
                let req = format!(r#"{{"op":"echo","data":{nested}}}"#);
                let out = reply_bytes(req.as_bytes());
                assert_eq!(
                    out,
                    format!(r#"{{"op":"echo","data":{nested}}}"#).as_bytes()
                );
                let objects = format!(r#"{}0{}"#, r#"{"a":"#.repeat(depth), "}".repeat(depth));
                let req = format!(r#"{{"op":"echo","data":{objects}}}"#);
                assert_eq!(reply_bytes(req.as_bytes()), req.as_bytes());
            }
            let nested = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
            let e = error_of(format!(r#"{{"op":"echo","data":{nested}}}"#).as_bytes());
            assert!(e.contains("nested deeper"), "{e}");
        });
    }

    #[test]
    fn brackets_inside_strings_do_not_count() {
        // Far more `[` than MAX_DEPTH, all inside strings (one after an escaped quote).
        let text = format!("\\\"{}{}", "[{".repeat(5 * MAX_DEPTH), "\\\\");
        let req = format!(r#"{{"op":"echo","data":["{text}","{text}"]}}"#);
        let r = reply(req.as_bytes());
        assert_eq!(r["data"][1].as_str().unwrap().len(), 10 * MAX_DEPTH + 2);
    }

    #[test]
    fn open_brackets_counts_every_bracket() {
        assert_eq!(open_brackets(b""), 0);
        assert_eq!(open_brackets(b"[{]}\"[\" ;{"), 4);
        let mut long = vec![b'['; 1000];
        long.extend(vec![b'x'; 1000]);
        long.extend(vec![b'{'; 1000]);
        assert_eq!(open_brackets(&long), 2000);
        // More than 255 blocks of 32 brackets (the counters' flush), and every remainder.
        for len in [255 * 32, 255 * 32 + 1, 3 * 255 * 32 + 31, 100_000] {
            assert_eq!(open_brackets(&vec![b'{'; len]), len);
        }
        // No byte but `[` and `{` is counted.
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(open_brackets(&all), 2);
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
    fn huge_echo_gets_an_error_reply_and_the_buffer_shrinks() {
        let big = "z".repeat(2 * MAX_REPLY);
        let req = serde_json::to_vec(&json!({"op": "echo", "data": big})).unwrap();
        let mut out = Vec::new();
        respond(&req, &mut out);
        assert!(out.capacity() <= KEEP_CAPACITY, "{}", out.capacity());
        assert!(serde_json::from_slice::<Json>(&out).unwrap()["error"].is_string());
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
        assert!(serde_json::from_slice::<Json>(&out[4..]).unwrap()["error"].is_string());
    }
}
