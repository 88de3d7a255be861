//! Fuzz target `host` of nativemsg-rust: the input is what the host reads on stdin. It runs
//! the host's own loop (`host::serve`: `FrameReader`, `protocol::respond`, `write_frame`) over
//! an in-memory reader, replies into memory, until EOF or the broken-stream error.
//!
//! Checked per input:
//! - every reply is a well-formed frame: 4-byte native-order length ≤ 1 MiB, a JSON object;
//! - one reply per whole request frame, and the run ends the way the input's framing says
//!   (clean EOF, EOF in a header, EOF in a body, or a length over the 64 MiB cap), never with
//!   a write error (the host must turn an oversized reply into an error reply);
//! - the same output and the same end when the reader hands the input out in chunks whose
//!   sizes come from the input's bytes (as a pipe does), instead of all at once.

#![no_main]

// The allocator guard every Rust fuzz target of the lab shares (fuzz/rust/guard.rs).
#[path = "../../../../../../fuzz/rust/guard.rs"]
mod guard;
// The input read whole or in chunks, as a pipe hands it out (fuzz/rust/source.rs).
#[path = "../../../../../../fuzz/rust/source.rs"]
mod source;

use nativemsg_rust::framing::{FrameError, HEADER_LEN, MAX_REPLY, MAX_REQUEST};
use nativemsg_rust::host::{serve, HostError};
use source::Source;

#[global_allocator]
static ALLOC: guard::Guard = guard::Guard;

/// How a run ended, comparable across runs.
#[derive(Debug, PartialEq, Eq)]
enum End {
    Clean,
    EofInHeader(usize),
    EofInBody(usize, usize),
    TooLarge(u32),
}

fn run(data: &[u8], chunked: bool) -> (Vec<u8>, End) {
    let src = Source::new(data, chunked);
    let mut out = Vec::new();
    let end = match serve(src, &mut out) {
        Ok(()) => End::Clean,
        Err(HostError::Read(FrameError::EofInHeader { got })) => End::EofInHeader(got),
        Err(HostError::Read(FrameError::EofInBody { got, want })) => End::EofInBody(got, want),
        Err(HostError::Read(FrameError::TooLarge(len))) => End::TooLarge(len),
        Err(e) => panic!("the host stopped with {e} on an in-memory stream"),
    };
    (out, end)
}

/// What the framing of `data` says: the number of whole request frames, and the end.
fn expected(mut data: &[u8]) -> (usize, End) {
    let mut frames = 0;
    loop {
        if data.is_empty() {
            return (frames, End::Clean);
        }
        if data.len() < HEADER_LEN {
            return (frames, End::EofInHeader(data.len()));
        }
        let len = u32::from_le_bytes([data[0], data[1], data[2], data[3]]);
        if len as usize > MAX_REQUEST {
            return (frames, End::TooLarge(len));
        }
        let body = &data[HEADER_LEN..];
        if body.len() < len as usize {
            return (frames, End::EofInBody(body.len(), len as usize));
        }
        frames += 1;
        data = &body[len as usize..];
    }
}

/// Checks that `out` is a sequence of well-formed reply frames; returns how many.
fn check_replies(mut out: &[u8]) -> usize {
    let mut replies = 0;
    while !out.is_empty() {
        assert!(out.len() >= HEADER_LEN, "a truncated reply header");
        let len = u32::from_le_bytes([out[0], out[1], out[2], out[3]]) as usize;
        assert!(len <= MAX_REPLY, "a reply of {len} bytes");
        assert!(out.len() - HEADER_LEN >= len, "a truncated reply body");
        let body = &out[HEADER_LEN..HEADER_LEN + len];
        match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(serde_json::Value::Object(_)) => {}
            other => panic!("a reply that is not a JSON object: {other:?}"),
        }
        out = &out[HEADER_LEN + len..];
        replies += 1;
    }
    replies
}

fn check(data: &[u8]) {
    let (out, end) = run(data, false);
    let (frames, want_end) = expected(data);
    assert_eq!(
        end, want_end,
        "the host ended otherwise than the framing says"
    );
    assert_eq!(check_replies(&out), frames, "not one reply per request");
    let (out_chunked, end_chunked) = run(data, true);
    assert_eq!(end_chunked, end, "chunked reads end otherwise");
    assert!(out_chunked == out, "chunked reads give other replies");
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| guard::check_no_leak(data, check));
