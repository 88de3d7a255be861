//! Fuzz target `request` of capnp-rust. Input byte 0 = the case (`% 3`: carsales, catrank,
//! eval), byte 1 = flags (bit 0: packed; bit 1, this target's own: `reuse`, the server's
//! scratch-space builders, else `no-reuse`); the rest = what the `server` mode reads on
//! stdin. It runs the program's own `modes::server` (reading with SPEC §6's limits through
//! `stream::MessageReader`, the case's `serve`, the response written by
//! `stream::MessageWriter`) until the end of the input or the error, in memory.
//!
//! Checked per input:
//! - the server's output is a stream of exactly `served` messages, each readable by the
//!   client's response reader (`MessageReader` + the case's response root and `check`, which
//!   may only disagree with the expected value, never fail to read);
//! - the input handed out in chunks whose sizes come from its own bytes (as a pipe does)
//!   gives the same responses and the same end (count, or error message);
//! - the input bytes are also read as a stream of *responses*, as the client would read them
//!   from a server: any end but a panic is fine.

#![no_main]

// The allocator guard every Rust fuzz target of the lab shares (fuzz/rust/guard.rs).
#[path = "../../../../../../fuzz/rust/guard.rs"]
mod guard;
// The input read whole or in chunks, as a pipe hands it out (fuzz/rust/source.rs).
#[path = "../../../../../../fuzz/rust/source.rs"]
mod source;

use capnp::traits::Owned;
use capnp_rust::carsales::CarSales;
use capnp_rust::catrank::CatRank;
use capnp_rust::eval::Eval;
use capnp_rust::modes::{self, Arena, Case, Fresh, Scratch, SCRATCH_WORDS};
use capnp_rust::stream::{Compression, MessageReader, MessageWriter};
use source::Source;

#[global_allocator]
static ALLOC: guard::Guard = guard::Guard;

/// Runs the server over `stream`; returns its output and its end (served count or error).
fn serve<C: Case, A: Arena>(
    arena: A,
    stream: &[u8],
    compression: Compression,
    chunked: bool,
) -> (Vec<u8>, Result<u64, String>) {
    let source = Source::new(stream, chunked);
    let mut output = Vec::new();
    let result = {
        let mut from_client = MessageReader::new(source, compression);
        let mut to_client = MessageWriter::new(&mut output, compression);
        modes::server::<C, A, _, _>(arena, &mut from_client, &mut to_client)
            .map_err(|failure| failure.0)
    };
    (output, result)
}

/// Reads `stream` as the client reads responses; returns how many messages it read whole
/// (with a readable root) before the end or the first error.
fn read_responses<C: Case>(stream: &[u8], compression: Compression, expected: C::Expected) -> u64 {
    let mut reader = MessageReader::new(stream, compression);
    let mut read = 0;
    while let Ok(Some(message)) = reader.next_message() {
        let Ok(root) = message.get_root::<<C::Response as Owned>::Reader<'_>>() else {
            break;
        };
        let _ = C::check(root, expected);
        read += 1;
    }
    read
}

fn run<C: Case>(stream: &[u8], compression: Compression, reuse: bool, expected: C::Expected) {
    let runs = if reuse {
        let mut words = capnp::Word::allocate_zeroed_vec(SCRATCH_WORDS);
        let whole = serve::<C, _>(Scratch::new(&mut words), stream, compression, false);
        let chunked = serve::<C, _>(Scratch::new(&mut words), stream, compression, true);
        (whole, chunked)
    } else {
        let whole = serve::<C, _>(Fresh, stream, compression, false);
        let chunked = serve::<C, _>(Fresh, stream, compression, true);
        (whole, chunked)
    };
    let ((output, result), (output_chunked, result_chunked)) = runs;
    assert_eq!(result_chunked, result, "chunked reads end otherwise");
    assert!(
        output_chunked == output,
        "chunked reads give other responses"
    );

    // Every response the server wrote reads back whole, and nothing else is there.
    let written = read_responses::<C>(&output, compression, expected);
    let served = *result.as_ref().unwrap_or(&written);
    assert_eq!(written, served, "responses written vs requests served");
    let mut reader = MessageReader::new(&output[..], compression);
    for _ in 0..written {
        assert!(matches!(reader.next_message(), Ok(Some(_))));
    }
    assert!(
        matches!(reader.next_message(), Ok(None)),
        "bytes after the last response"
    );

    // The client's reader on the input itself.
    read_responses::<C>(stream, compression, expected);
}

fn check(data: &[u8]) {
    let [case, flags, stream @ ..] = data else {
        return;
    };
    let compression = if flags & 1 == 1 {
        Compression::Packed
    } else {
        Compression::None
    };
    let reuse = flags & 2 == 2;
    match case % 3 {
        0 => run::<CarSales>(stream, compression, reuse, 0),
        1 => run::<CatRank>(stream, compression, reuse, 0),
        _ => run::<Eval>(stream, compression, reuse, 0),
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| guard::check_no_leak(data, check));
