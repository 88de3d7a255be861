//! Fuzz target `server` of comm-rust: the input is the bytes of one client. It drives the
//! server's own per-connection protocol state (`handler::Session`: frame decoding in the
//! receive buffer, echo as `REPLY`, END/QUIT, EOF inside or after a frame, the body cap) the
//! way `Connection::drive` does — replies written first, then a read into the session's input
//! space, a zero-byte read at the end of the input — with memory in place of the socket.
//!
//! The cap is 1 MiB (the server's default is 64 MiB) so that the cap path is reachable. Two
//! runs per input, both compared with what the framing of the input says the client must get
//! (every complete frame echoed with its own body as `REPLY`, in order; a header-only `END`
//! after `END`/`QUIT`; nothing after a frame cut by EOF or a length over the cap) and with the
//! phase the session must end in:
//! - the server's own buffer size (64 KiB) with whole reads and whole writes;
//! - a 32-byte starting buffer (so inputs of a few KiB reach the buffer's growth and
//!   compaction) with reads and partial writes whose sizes come from the input's bytes.

#![no_main]

// The allocator guard every Rust fuzz target of the lab shares (fuzz/rust/guard.rs).
#[path = "../../../../../../fuzz/rust/guard.rs"]
mod guard;

use comm_rust::frame::{Header, END, HEADER_LEN, QUIT, REPLY};
use comm_rust::handler::{Phase, Session, TooLarge, INITIAL_BUFFER};

#[global_allocator]
static ALLOC: guard::Guard = guard::Guard;

const CAP: u64 = 1 << 20;

/// Sizes derived from the input's bytes, or unlimited.
struct Sizes<'a> {
    data: &'a [u8],
    i: usize,
    max: usize,
}

impl Sizes<'_> {
    /// The next size in 1..=max (usize::MAX when max is 0: whole reads and writes).
    fn next(&mut self) -> usize {
        if self.max == 0 || self.data.is_empty() {
            return usize::MAX;
        }
        let b = self.data[self.i % self.data.len()] as usize;
        self.i += 1;
        1 + (b * 31 + self.i) % self.max
    }
}

/// Runs one client's `data` through a session; returns what was written to it and the phase
/// the session ended in.
fn drive(data: &[u8], buffer: usize, chunked: bool) -> (Vec<u8>, Phase) {
    let mut session = Session::with_buffer(CAP, buffer);
    let mut reads = Sizes {
        data,
        i: 0,
        max: if chunked { 97 } else { 0 },
    };
    let mut writes = Sizes {
        data,
        i: data.len() / 2,
        max: if chunked { 61 } else { 0 },
    };
    let mut out = Vec::new();
    let mut rest = data;
    loop {
        let pending = session.output();
        if !pending.is_empty() {
            let n = pending.len().min(writes.next());
            out.extend_from_slice(&pending[..n]);
            session.consume_output(n);
        }
        if session.phase() != Phase::Open {
            // Nothing more is read; every reply owed goes out, then the connection closes.
            while !session.output().is_empty() {
                let n = session.output().len();
                out.extend_from_slice(session.output());
                session.consume_output(n);
            }
            assert!(
                session.input_space().is_none(),
                "reading after the session ended"
            );
            return (out, session.phase());
        }
        let Some(space) = session.input_space() else {
            assert!(
                !session.output().is_empty(),
                "no room to read and nothing to write"
            );
            continue;
        };
        assert!(!space.is_empty(), "an empty input space");
        if rest.is_empty() {
            session.peer_closed();
            continue;
        }
        let n = space.len().min(rest.len()).min(reads.next());
        space[..n].copy_from_slice(&rest[..n]);
        rest = &rest[n..];
        match session.received(n) {
            Ok(()) => assert_ne!(session.phase(), Phase::TooLarge),
            Err(TooLarge { body_len }) => {
                assert!(body_len > CAP);
                assert_eq!(session.phase(), Phase::TooLarge);
            }
        }
        assert!(
            session.buffer_len() <= INITIAL_BUFFER.max(HEADER_LEN + CAP as usize),
            "the receive buffer outgrew the cap"
        );
    }
}

/// What the client must receive for `data`, and the phase the session must end in.
fn expected(mut data: &[u8]) -> (Vec<u8>, Phase) {
    let mut out = Vec::new();
    loop {
        if data.is_empty() {
            return (out, Phase::PeerDone);
        }
        if data.len() < HEADER_LEN {
            return (out, Phase::Truncated);
        }
        let header = Header::decode(data);
        if header.body_len > CAP {
            return (out, Phase::TooLarge);
        }
        let frame_len = HEADER_LEN + header.body_len as usize;
        if data.len() < frame_len {
            return (out, Phase::Truncated);
        }
        if header.kind == END || header.kind == QUIT {
            out.extend_from_slice(&[END, 0, 0, 0, 0, 0, 0, 0, 0]);
            return (out, Phase::Ending);
        }
        out.push(REPLY);
        out.extend_from_slice(&data[1..frame_len]);
        data = &data[frame_len..];
    }
}

fn check(data: &[u8]) {
    let (want, want_phase) = expected(data);
    for (buffer, chunked) in [(INITIAL_BUFFER, false), (32, true)] {
        let (out, phase) = drive(data, buffer, chunked);
        assert_eq!(phase, want_phase, "buffer {buffer}, chunked {chunked}");
        assert!(
            out == want,
            "replies differ from the requests' bodies (buffer {buffer}, chunked {chunked})"
        );
    }
}

libfuzzer_sys::fuzz_target!(|data: &[u8]| guard::check_no_leak(data, check));
