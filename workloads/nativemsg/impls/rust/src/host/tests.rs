//! Unit tests of the serve loop: EOF rules, stream errors, and a reply out before each read.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use super::*;
use serde_json::{json, Value};
use std::cell::RefCell;
use std::io::Cursor;
use std::rc::Rc;

fn frame(body: &[u8]) -> Vec<u8> {
    let mut v = (body.len() as u32).to_ne_bytes().to_vec();
    v.extend_from_slice(body);
    v
}

fn replies(mut wire: &[u8]) -> Vec<Value> {
    let mut out = Vec::new();
    while !wire.is_empty() {
        let len = u32::from_ne_bytes(wire[..4].try_into().unwrap()) as usize;
        out.push(serde_json::from_slice(&wire[4..4 + len]).unwrap());
        wire = &wire[4 + len..];
    }
    out
}

#[test]
fn serves_until_clean_eof() {
    let mut input = frame(br#"{"op":"ping"}"#);
    input.extend(frame(b"garbage"));
    input.extend(frame(br#"{"op":"echo","data":[1,"two"]}"#));
    let mut out = Vec::new();
    serve(Cursor::new(input), &mut out).unwrap();
    let r = replies(&out);
    assert_eq!(r.len(), 3);
    assert_eq!(r[0], json!({"op": "pong"}));
    assert!(r[1]["error"].is_string());
    assert_eq!(r[2], json!({"op": "echo", "data": [1, "two"]}));
}

#[test]
fn no_input_no_output() {
    let mut out = Vec::new();
    serve(Cursor::new(Vec::new()), &mut out).unwrap();
    assert!(out.is_empty());
}

#[test]
fn eof_mid_frame_fails_after_answering_earlier_frames() {
    let mut input = frame(br#"{"op":"ping"}"#);
    input.extend_from_slice(&[1, 0]);
    let mut out = Vec::new();
    let err = serve(Cursor::new(input), &mut out).unwrap_err();
    assert!(matches!(
        err,
        HostError::Read(FrameError::EofInHeader { got: 2 })
    ));
    assert_eq!(replies(&out), vec![json!({"op": "pong"})]);
}

#[test]
fn oversized_length_stops_the_host() {
    let input = (64u32 * 1024 * 1024 + 1).to_ne_bytes().to_vec();
    let mut out = Vec::new();
    let err = serve(Cursor::new(input), &mut out).unwrap_err();
    assert!(matches!(err, HostError::Read(FrameError::TooLarge(_))));
    assert!(err.to_string().contains("exceeds"));
    assert!(out.is_empty());
}

#[test]
fn write_errors_stop_the_host() {
    struct Closed;
    impl Write for Closed {
        fn write(&mut self, _: &[u8]) -> io::Result<usize> {
            Err(io::ErrorKind::BrokenPipe.into())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let err = serve(Cursor::new(frame(br#"{"op":"ping"}"#)), &mut Closed).unwrap_err();
    assert!(matches!(err, HostError::Write(_)));
}

/// Input that hands out one frame per read and checks, before each read, that every
/// earlier request already has its reply on the output: the host never holds a reply
/// back while it waits for more input.
struct Lockstep {
    frames: Vec<Vec<u8>>,
    next: usize,
    written: Rc<RefCell<Vec<u8>>>,
}

impl Read for Lockstep {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        assert_eq!(replies(&self.written.borrow()).len(), self.next);
        let Some(f) = self.frames.get(self.next) else {
            return Ok(0);
        };
        buf[..f.len()].copy_from_slice(f);
        self.next += 1;
        Ok(f.len())
    }
}

struct Shared(Rc<RefCell<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[test]
fn each_reply_is_out_before_the_next_read() {
    let written = Rc::new(RefCell::new(Vec::new()));
    let input = Lockstep {
        frames: (0..5)
            .map(|i| frame(format!(r#"{{"op":"echo","data":{i}}}"#).as_bytes()))
            .collect(),
        next: 0,
        written: Rc::clone(&written),
    };
    serve(input, &mut Shared(Rc::clone(&written))).unwrap();
    assert_eq!(replies(&written.borrow()).len(), 5);
}
