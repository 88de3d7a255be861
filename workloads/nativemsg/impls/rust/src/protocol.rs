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
mod tests;
