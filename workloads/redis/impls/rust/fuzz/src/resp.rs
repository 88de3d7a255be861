//! Fuzz target `resp` of redis-rust: the bytes of one client, parsed by the server's own RESP
//! request parser (`protocol::request::Parser`, multibulk and inline) until it needs more
//! bytes or reports a protocol error. Commands are not executed.
//!
//! The input is parsed twice: whole, as one read, and split into chunks whose sizes come from
//! the input's own bytes, fed the way `Connection::serve` feeds a connection (parse straight
//! from the read while nothing is buffered; else append to the kept tail, drain what was
//! parsed, shift the parser). Both runs must produce the same commands and the same error: a
//! mismatch aborts (a finding).

#![no_main]

// The allocator guard every Rust fuzz target of the lab shares (fuzz/rust/guard.rs).
#[path = "../../../../../../fuzz/rust/guard.rs"]
mod guard;

use redis_rust::protocol::request::{Parsed, Parser, ProtocolError, INLINE_MAX};

#[global_allocator]
static ALLOC: guard::Guard = guard::Guard;

/// The commands parsed (each a list of arguments) and the protocol error that ended the
/// stream, if any.
#[derive(Debug, PartialEq, Eq, Default)]
struct Outcome {
    commands: Vec<Vec<Vec<u8>>>,
    error: Option<ProtocolError>,
}

/// `Connection::execute` without running commands: parses every whole request of
/// `buf[pos..]`, returns where parsing stopped; false once a protocol error closed the stream.
fn execute(parser: &mut Parser, buf: &[u8], mut pos: usize, out: &mut Outcome) -> (usize, bool) {
    loop {
        let before = pos;
        match parser.parse(buf, &mut pos) {
            Ok(Parsed::Command) => {
                let args = parser.args(buf);
                assert!(!args.is_empty(), "a command without arguments");
                assert_eq!(args.len(), args.iter_from(0).len());
                out.commands
                    .push(args.iter_from(0).map(<[u8]>::to_vec).collect());
            }
            Ok(Parsed::Nothing) => assert!(pos > before, "Nothing consumed no byte"),
            Ok(Parsed::Incomplete) => return (pos, true),
            Err(e) => {
                assert!(e.0.starts_with(b"Protocol error: "), "{e:?}");
                out.error = Some(e);
                return (pos, false);
            }
        }
        assert!(pos <= buf.len(), "parsed past the end of the buffer");
    }
}

/// Feeds `chunks` to one parser with `Connection::serve`'s buffer handling.
fn run<'a>(chunks: impl Iterator<Item = &'a [u8]>) -> Outcome {
    let mut out = Outcome::default();
    let mut parser = Parser::default();
    let mut input: Vec<u8> = Vec::new();
    let mut parse_pos = 0;
    for data in chunks {
        if input.is_empty() {
            let (pos, open) = execute(&mut parser, data, 0, &mut out);
            if !open {
                break;
            }
            let keep = parser.keep_from(pos);
            if keep < data.len() {
                input.extend_from_slice(&data[keep..]);
                parser.shift(keep);
                parse_pos = pos - keep;
            }
        } else {
            input.extend_from_slice(data);
            let (pos, open) = execute(&mut parser, &input, parse_pos, &mut out);
            if !open {
                break;
            }
            let keep = parser.keep_from(pos);
            input.drain(..keep);
            parser.shift(keep);
            parse_pos = pos - keep;
        }
    }
    out
}

/// Chunk sizes 1..=32 taken from the input's bytes in turn (deterministic).
fn chunks(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = data;
    let mut i = 0;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let size = (1 + (data[i % data.len()] as usize ^ i) % 32).min(rest.len());
        i += 1;
        let (chunk, tail) = rest.split_at(size);
        rest = tail;
        Some(chunk)
    })
}

fn check(data: &[u8]) {
    let whole = run(std::iter::once(data));
    let split = run(chunks(data));
    // Beyond INLINE_MAX bytes a line without terminator is an error only when a read ends
    // before the terminator arrives (as in redis): there the outcome depends on the chunking.
    if data.len() <= INLINE_MAX {
        assert_eq!(whole, split, "whole and chunked parses differ");
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| guard::check_no_leak(data, check));
