//! The request frames the driver sends (SPEC §5): the 13-byte ping, and the echo payload
//! `{"op":"echo","data":{"seq":<n>,"text":S}}` built to an exact request body size.
//!
//! A request is built once, before the trial, as a complete frame (length prefix + body) so
//! the timed loop does no allocation and sends it with one write. Only the sequence number
//! changes between echo requests, and it is patched in place: it always has six digits, so
//! the body length never changes.

use serde_json::Value;
use std::ops::Range;

/// Browser → host body cap (SPEC §1); the driver never sends more.
pub const MAX_REQUEST_BODY: usize = 64 * 1024 * 1024;

/// Sequence numbers run through 100000..=999999: fixed width (JSON forbids leading zeros, so
/// the width is fixed by the range instead) keeps every echo request the same size.
const SEQ_BASE: u64 = 100_000;
const SEQ_SPAN: u64 = 900_000;
const SEQ_WIDTH: usize = 6;

const PING_BODY: &[u8] = br#"{"op":"ping"}"#;
const ECHO_PREFIX: &str = r#"{"op":"echo","data":{"seq":100000,"text":""#;
/// Offset of the sequence digits in ECHO_PREFIX.
const SEQ_AT: usize = r#"{"op":"echo","data":{"seq":"#.len();
const ECHO_SUFFIX: &str = r#""}}"#;

/// Plain ASCII words: most of the text takes a host's fast path, as real messages do.
const WORDS: [&str; 16] = [
    "native",
    "messaging",
    "host",
    "frame",
    "length",
    "prefix",
    "browser",
    "extension",
    "stdin",
    "stdout",
    "pipe",
    "json",
    "echo",
    "reply",
    "bytes",
    "lab",
];
/// Stride through WORDS; coprime with its length, so every word is used in turn.
const WORD_STRIDE: usize = 7;

/// JSON-escaped text inserted every few hundred bytes so every host walks its escape paths
/// (quote, backslash, newline) and its multi-byte UTF-8 paths (é: 2 bytes, €: 3 bytes,
/// 😀: 4 bytes, a surrogate pair for UTF-16 based hosts).
const SPECIAL: &str = "\\\"quote\\\" back\\\\slash new\\nline caf\u{e9} 5\u{20ac} smile\u{1f600} ";
const SPECIAL_FIRST: usize = 64;
const SPECIAL_EVERY: usize = 256;

/// One request, ready to send.
pub struct Request {
    /// Length prefix (4 bytes, native endian) followed by the body.
    frame: Vec<u8>,
    /// Where the six sequence digits sit in `frame` (echo only).
    seq_digits: Option<Range<usize>>,
    seq: u64,
    /// The reply a correct host sends; its `seq` is brought up to date on demand.
    expected: Value,
}

impl Request {
    /// `{"op":"ping"}`, answered by `{"op":"pong"}`.
    pub fn ping() -> Self {
        Request {
            frame: frame_of(PING_BODY),
            seq_digits: None,
            seq: 0,
            expected: serde_json::json!({"op": "pong"}),
        }
    }

    /// Smallest echo request body: the envelope around an empty text.
    pub fn min_echo_size() -> usize {
        ECHO_PREFIX.len() + ECHO_SUFFIX.len()
    }

    /// An echo request whose body is exactly `size` bytes.
    pub fn echo(size: usize) -> Result<Self, String> {
        if size < Self::min_echo_size() || size > MAX_REQUEST_BODY {
            return Err(format!(
                "an echo request body must be {}..={MAX_REQUEST_BODY} bytes, not {size}",
                Self::min_echo_size()
            ));
        }
        let mut body = String::with_capacity(size);
        body.push_str(ECHO_PREFIX);
        body.push_str(&escaped_text(size - Self::min_echo_size()));
        body.push_str(ECHO_SUFFIX);
        debug_assert_eq!(body.len(), size);
        // The request is itself the reply a correct host sends back (`op` and `data`), so the
        // expected value is the request parsed by the same JSON library the checker uses.
        let expected: Value = serde_json::from_str(&body)
            .map_err(|e| format!("internal error: the echo payload is not JSON: {e}"))?;
        let at = 4 + SEQ_AT;
        Ok(Request {
            frame: frame_of(body.as_bytes()),
            seq_digits: Some(at..at + SEQ_WIDTH),
            seq: SEQ_BASE,
            expected,
        })
    }

    /// The whole frame: length prefix and body, to be sent with one write.
    pub fn frame(&self) -> &[u8] {
        &self.frame
    }

    /// Request body bytes (what throughput counts).
    pub fn body_len(&self) -> usize {
        self.frame.len() - 4
    }

    /// Gives operation `n` its own sequence number, so that a reply to a different request
    /// (a host that answers late, or answers twice) cannot pass the full check.
    pub fn set_seq(&mut self, n: u64) {
        let Some(range) = self.seq_digits.clone() else {
            return;
        };
        self.seq = SEQ_BASE + n % SEQ_SPAN;
        let mut value = self.seq;
        for byte in self.frame[range].iter_mut().rev() {
            *byte = b'0' + (value % 10) as u8;
            value /= 10;
        }
    }

    /// The reply a correct host sends to the request as it is now.
    pub fn expected_reply(&mut self) -> &Value {
        if self.seq_digits.is_some() {
            if let Some(seq) = self
                .expected
                .get_mut("data")
                .and_then(|data| data.get_mut("seq"))
            {
                *seq = Value::from(self.seq);
            }
        }
        &self.expected
    }
}

fn frame_of(body: &[u8]) -> Vec<u8> {
    // Callers keep bodies within MAX_REQUEST_BODY, so the length always fits in u32.
    let mut frame = Vec::with_capacity(4 + body.len());
    frame.extend_from_slice(&(body.len() as u32).to_ne_bytes());
    frame.extend_from_slice(body);
    frame
}

/// Deterministic JSON string content (already escaped) of exactly `len` bytes.
fn escaped_text(len: usize) -> String {
    let mut text = String::with_capacity(len);
    let mut next_special = SPECIAL_FIRST;
    let mut word = 0;
    while text.len() < len {
        let room = len - text.len();
        if text.len() >= next_special && SPECIAL.len() <= room {
            text.push_str(SPECIAL);
            next_special = text.len() + SPECIAL_EVERY;
            continue;
        }
        let next = WORDS[word % WORDS.len()];
        word += WORD_STRIDE;
        if next.len() < room {
            text.push_str(next);
            text.push(' ');
        } else {
            // The tail: one-byte letters reach the exact size whatever is left.
            text.extend(std::iter::repeat_n('x', room));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(request: &Request) -> &[u8] {
        &request.frame()[4..]
    }

    #[test]
    fn ping_is_the_13_byte_request_with_a_native_endian_length() {
        let request = Request::ping();
        assert_eq!(request.frame(), b"\x0d\x00\x00\x00{\"op\":\"ping\"}");
        assert_eq!(request.body_len(), 13);
    }

    #[test]
    fn echo_bodies_have_the_exact_size_and_are_valid_json() {
        let min = Request::min_echo_size();
        let mut sizes: Vec<usize> = (min..min + 700).collect();
        sizes.extend([1024, 4096, 65536, 524288, 1 << 20]);
        for size in sizes {
            let request = Request::echo(size).unwrap();
            assert_eq!(request.body_len(), size, "body size for --size {size}");
            let length = u32::from_ne_bytes(request.frame()[..4].try_into().unwrap());
            assert_eq!(length as usize, size, "length prefix for --size {size}");
            let value: Value = serde_json::from_slice(body(&request)).unwrap();
            assert_eq!(value["op"], "echo");
            assert!(value["data"]["text"].is_string());
        }
    }

    #[test]
    fn echo_text_walks_escape_and_multibyte_paths() {
        for size in [1024, 65536, 524288] {
            let request = Request::echo(size).unwrap();
            let value: Value = serde_json::from_slice(body(&request)).unwrap();
            let text = value["data"]["text"].as_str().unwrap();
            for c in ['"', '\\', '\n', 'é', '€', '😀'] {
                assert!(text.contains(c), "{size}-byte payload lacks {c:?}");
            }
            // "Every few hundred bytes", not once.
            let specials = text.matches('😀').count();
            assert!(
                specials >= size / 400,
                "{size} bytes: only {specials} specials"
            );
        }
    }

    #[test]
    fn echo_payload_is_deterministic() {
        assert_eq!(
            Request::echo(4096).unwrap().frame(),
            Request::echo(4096).unwrap().frame()
        );
    }

    #[test]
    fn echo_size_out_of_range_is_refused() {
        assert!(Request::echo(Request::min_echo_size() - 1).is_err());
        assert!(Request::echo(MAX_REQUEST_BODY + 1).is_err());
    }

    #[test]
    fn seq_changes_in_place_and_keeps_the_size() {
        let mut request = Request::echo(1024).unwrap();
        for n in [0, 1, 41, 899_999, 900_000, 5_000_123] {
            request.set_seq(n);
            assert_eq!(request.body_len(), 1024);
            let sent: Value = serde_json::from_slice(body(&request)).unwrap();
            let seq = 100_000 + n % 900_000;
            assert_eq!(sent["data"]["seq"], seq);
            assert_eq!(&sent, request.expected_reply(), "expected reply for op {n}");
        }
    }
}
