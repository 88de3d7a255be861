//! The request → reply logic on sonic-rs: `ping`, `echo`, `fill` and error replies, with the
//! 1 MiB reply cap and a nesting guard. It turns one request body into one reply body and
//! knows nothing about framing or I/O.

use sonic_rs::{JsonType, JsonValueTrait, Value};

use crate::framing::MAX_REPLY;
use nativemsg_rust::protocol::{quote, too_big, write_error_with};
use nativemsg_rust::protocol::{ECHO_PREFIX, ECHO_SUFFIX, FILL_PREFIX, FILL_SUFFIX, PONG};

/// The smallest fill reply: `{"op":"fill","data":""}`, 23 bytes (the reply shapes are the
/// rust host's, as SPEC.md has them).
pub use nativemsg_rust::protocol::FILL_MIN;

/// Deepest nesting of arrays and objects this host parses (the request object is level 1).
///
/// sonic-rs parses and serialises nested values by recursion and has no depth limit of its
/// own: a million `[` overflows the stack and kills the process. Requests nested deeper than
/// this get an error reply before sonic-rs sees them. 128 is serde_json's default limit (the
/// rust host's), and it fits unoptimised builds too: there sonic-rs takes about 36 KiB of
/// stack per level (the fuzz replays and `cargo test` run debug builds), against about 200
/// bytes in the release build.
pub const MAX_DEPTH: usize = 128;

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

/// Appends `{"error": reason}` to `out`; sonic-rs escapes whatever `reason` quotes.
fn write_error(out: &mut Vec<u8>, reason: &str) {
    write_error_with(out, reason, |out, reason| sonic_rs::to_writer(out, reason));
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
    //! The rust host's protocol checks (`nativemsg_rust::protocol::checks`: ping, echo
    //! re-serialisation, fill sizes, error replies for bad input, the 1 MiB reply cap) on this
    //! host's `respond`, and the edge cases of sonic-rs: its one-line error messages, the
    //! nesting guard, and the reply buffer shrinking after an oversized echo. Replies are read
    //! back with serde_json, a second library.

    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use nativemsg_rust::protocol::checks;
    use serde_json::{json, Value as Json};

    nativemsg_rust::protocol_tests!(crate::protocol::respond);

    fn reply_bytes(request: &[u8]) -> Vec<u8> {
        checks::reply_bytes(respond, request)
    }

    fn reply(request: &[u8]) -> Json {
        checks::reply(respond, request)
    }

    fn error_of(request: &[u8]) -> String {
        checks::error_of(respond, request)
    }

    #[test]
    fn error_messages_are_one_line() {
        let e = error_of(br#"{"op":"ping",}"#);
        assert!(e.starts_with("request is not valid JSON: "), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn too_deep_nesting_gets_the_guards_message() {
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
    fn the_buffer_shrinks_after_a_huge_echo() {
        let big = "z".repeat(2 * MAX_REPLY);
        let req = serde_json::to_vec(&json!({"op": "echo", "data": big})).unwrap();
        let mut out = Vec::new();
        respond(&req, &mut out);
        assert!(out.capacity() <= KEEP_CAPACITY, "{}", out.capacity());
        assert!(serde_json::from_slice::<Json>(&out).unwrap()["error"].is_string());
    }
}
