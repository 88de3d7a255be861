//! The per-connection handler: echo every message as `REPLY`, and the session rules.
//!
//! Two layers. [`Session`] is the protocol alone, with no socket: bytes go in
//! ([`Session::input_space`] + [`Session::received`]), reply bytes come out
//! ([`Session::output`] + [`Session::consume_output`]), and [`Session::phase`] says how the
//! session stands. [`Connection`] drives a `Session` over a non-blocking socket for a worker's
//! event loop. Keeping the rules socket-free lets the unit tests feed every split, cap and
//! end-of-session case byte by byte.
//!
//! Zero-copy echo: a reply is the request with its type byte changed, so each complete frame
//! is rewritten in place in the receive buffer (type := `REPLY`) and the reply bytes are
//! written straight from there — all complete frames of a read in one `write`, no copy and no
//! allocation per message. The buffer layout is
//!
//! ```text
//! 0 .. sent .. ready .. filled .. buf.len()
//!      [replies not yet written)[incomplete frame)[free: next read]
//! ```
//!
//! A frame is replied to only once it is complete, so a frame cut short by EOF is never
//! half-echoed; the buffer grows (doubling, as bytes actually arrive, never on the announced
//! length alone) to hold a frame bigger than itself, which bounds memory per connection by the
//! cap. The cap is checked on the header, before any growth.

use crate::frame::{Header, END, HEADER_LEN, REPLY};
use mio::net::TcpStream;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr};

/// Receive buffer of a new connection: room for 16 frames of 4 KiB per read.
pub const INITIAL_BUFFER: usize = 64 * 1024;
/// A buffer grown past this for a big frame is given back once it is empty again, so an
/// idle connection that once sent 16 MiB does not keep 16 MiB; up to here it is kept, so a
/// stream of 1 MiB messages does not reallocate for every message.
const KEEP_BUFFER: usize = 4 * 1024 * 1024;
/// Below this much free tail space, pending bytes are moved to the front before a read, so
/// reads stay large.
const MIN_READ: usize = 16 * 1024;

/// Where a session stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// Reading and echoing.
    Open,
    /// `END` or `QUIT` received: the replies before it and one header-only `END` are queued;
    /// nothing more is read. After they are written: shut down writing and close.
    Ending,
    /// EOF at a frame boundary: write the queued replies, then close (no `END`).
    PeerDone,
    /// EOF inside a frame: the partial frame is dropped; replies already owed for complete
    /// frames are written, then close.
    Truncated,
    /// A header announced a body above the cap: nothing more is read (nothing is allocated
    /// for that body); replies already owed for earlier frames are written, then close.
    TooLarge,
}

/// A header announced a body longer than the cap.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TooLarge {
    pub body_len: u64,
}

/// The protocol state of one connection (no I/O).
pub struct Session {
    buf: Vec<u8>,
    /// Start of the reply bytes not yet written.
    sent: usize,
    /// End of the complete frames (already rewritten as replies).
    ready: usize,
    /// End of the bytes received.
    filled: usize,
    max_body: u64,
    phase: Phase,
}

impl Session {
    pub fn new(max_body: u64) -> Session {
        Session::with_buffer(max_body, INITIAL_BUFFER)
    }

    /// A session whose receive buffer starts at `initial` bytes (at least a header) instead
    /// of `INITIAL_BUFFER`: the fuzz target starts small so that inputs of a few KiB reach the
    /// growth and compaction paths.
    pub fn with_buffer(max_body: u64, initial: usize) -> Session {
        Session {
            buf: vec![0; initial.max(HEADER_LEN)],
            sent: 0,
            ready: 0,
            filled: 0,
            max_body,
            phase: Phase::Open,
        }
    }

    pub fn phase(&self) -> Phase {
        self.phase
    }

    /// Reply bytes ready to be written, in order.
    pub fn output(&self) -> &[u8] {
        &self.buf[self.sent..self.ready]
    }

    /// Marks the first `n` bytes of [`Session::output`] as written.
    pub fn consume_output(&mut self, n: usize) {
        debug_assert!(n <= self.ready - self.sent);
        self.sent += n;
        if self.sent == self.filled {
            // Everything received has been answered: start over at the front.
            self.sent = 0;
            self.ready = 0;
            self.filled = 0;
            if self.buf.len() > KEEP_BUFFER {
                self.buf = vec![0; INITIAL_BUFFER];
            }
        }
    }

    /// The free space to read into, after making room; `None` when nothing should be read now:
    /// the session is ending, or the buffer is full of replies the peer has not taken yet
    /// (back-pressure: the caller writes, then asks again).
    pub fn input_space(&mut self) -> Option<&mut [u8]> {
        if self.phase != Phase::Open {
            return None;
        }
        if self.sent == self.ready && self.sent > 0 {
            // No reply pending: only the incomplete frame (usually a few bytes) moves.
            self.buf.copy_within(self.ready..self.filled, 0);
            self.filled -= self.ready;
            self.sent = 0;
            self.ready = 0;
        } else if self.buf.len() - self.filled < MIN_READ && self.sent > 0 {
            self.buf.copy_within(self.sent..self.filled, 0);
            self.ready -= self.sent;
            self.filled -= self.sent;
            self.sent = 0;
        }
        if self.filled == self.buf.len() {
            if self.ready > self.sent {
                return None;
            }
            // The whole buffer is one incomplete frame (its header passed the cap when it
            // arrived): grow toward its size, doubling as its bytes come in.
            let need = Header::decode(&self.buf[self.ready..])
                .frame_len(self.max_body)
                .expect("cap checked when the header arrived");
            let new_len = need.min(self.buf.len().saturating_mul(2));
            self.buf.resize(new_len, 0);
        }
        Some(&mut self.buf[self.filled..])
    }

    /// Takes `n` bytes just read into [`Session::input_space`]: every frame they complete
    /// becomes a reply, and an `END`/`QUIT` ends the session.
    pub fn received(&mut self, n: usize) -> Result<(), TooLarge> {
        debug_assert!(self.phase == Phase::Open && self.filled + n <= self.buf.len());
        self.filled += n;
        while self.filled - self.ready >= HEADER_LEN {
            let header = Header::decode(&self.buf[self.ready..]);
            let Some(frame_len) = header.frame_len(self.max_body) else {
                self.filled = self.ready;
                self.phase = Phase::TooLarge;
                return Err(TooLarge {
                    body_len: header.body_len,
                });
            };
            if self.filled - self.ready < frame_len {
                break;
            }
            if header.ends_session() {
                // The reply is a header-only END, written over the request's own header;
                // its body (if any) and anything after it are dropped.
                let end = Header {
                    kind: END,
                    body_len: 0,
                }
                .encode();
                self.buf[self.ready..self.ready + HEADER_LEN].copy_from_slice(&end);
                self.ready += HEADER_LEN;
                self.filled = self.ready;
                self.phase = Phase::Ending;
                break;
            }
            self.buf[self.ready] = REPLY;
            self.ready += frame_len;
        }
        Ok(())
    }

    /// The peer shut down its sending side (read returned 0).
    pub fn peer_closed(&mut self) {
        if self.phase != Phase::Open {
            return;
        }
        if self.filled == self.ready {
            self.phase = Phase::PeerDone;
        } else {
            self.filled = self.ready;
            self.phase = Phase::Truncated;
        }
    }

    /// Bytes held by the receive buffer (for tests and memory accounting).
    pub fn buffer_len(&self) -> usize {
        self.buf.len()
    }

    /// The whole buffer as scratch space, once the session has stopped reading and every
    /// reply is out (used to discard what a peer sends after `END`).
    fn scratch(&mut self) -> &mut [u8] {
        debug_assert!(self.phase != Phase::Open && self.sent == self.ready);
        &mut self.buf
    }
}

/// What the event loop should do with a connection after driving it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// Waiting for the socket (readable or writable).
    Wait,
    /// Its per-turn read budget ran out with input possibly left: drive it again next turn.
    MoreInput,
    /// `END` answered and writing shut down; reading on until the peer closes (see
    /// [`Connection::drive`]). The loop closes it after a grace period.
    Lingering,
    /// Done: drop it.
    Close,
}

/// Reads per connection per turn, so one fast sender cannot starve the others on its worker.
const READS_PER_TURN: usize = 4;

/// A `Session` on a non-blocking, edge-triggered socket.
pub struct Connection {
    stream: TcpStream,
    peer: SocketAddr,
    session: Session,
    /// Readiness as last reported by the poller and not yet used up (edge-triggered).
    readable: bool,
    writable: bool,
    /// The peer's FIN has been reported: a short read no longer proves the socket drained.
    read_closed: bool,
    lingering: bool,
}

impl Connection {
    pub fn new(stream: TcpStream, peer: SocketAddr, max_body: u64) -> Connection {
        Connection {
            stream,
            peer,
            session: Session::new(max_body),
            readable: false,
            writable: false,
            read_closed: false,
            lingering: false,
        }
    }

    pub fn stream(&mut self) -> &mut TcpStream {
        &mut self.stream
    }

    /// Records a readiness event.
    pub fn ready(&mut self, readable: bool, writable: bool, read_closed: bool) {
        self.readable |= readable || read_closed;
        self.writable |= writable;
        self.read_closed |= read_closed;
    }

    /// Does all the work the socket allows now: write pending replies, read (up to the turn's
    /// budget), echo, and apply the session rules.
    pub fn drive(&mut self) -> Status {
        if self.lingering {
            return self.discard_input();
        }
        let mut reads = 0;
        loop {
            // Replies first: they free buffer space, and the peer is waiting for them.
            while self.writable && !self.session.output().is_empty() {
                match self.stream.write(self.session.output()) {
                    Ok(n) => self.session.consume_output(n),
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.writable = false,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(_) => return Status::Close,
                }
            }
            let drained = self.session.output().is_empty();
            match self.session.phase() {
                Phase::Open => {}
                Phase::Ending if drained => {
                    // FIN after the END reply; then read until the peer closes, so that
                    // nothing unread is left behind (closing with unread input makes the
                    // kernel send RST, which can destroy replies still in flight).
                    if self.stream.shutdown(Shutdown::Write).is_err() {
                        return Status::Close;
                    }
                    self.lingering = true;
                    return self.discard_input();
                }
                Phase::PeerDone | Phase::Truncated | Phase::TooLarge if drained => {
                    return Status::Close
                }
                Phase::Ending | Phase::PeerDone | Phase::Truncated | Phase::TooLarge => {
                    return Status::Wait
                }
            }
            if !self.readable {
                return Status::Wait;
            }
            if reads == READS_PER_TURN {
                return Status::MoreInput;
            }
            let read_closed = self.read_closed;
            let Some(space) = self.session.input_space() else {
                return Status::Wait; // replies back up: wait until writable
            };
            let want = space.len();
            match self.stream.read(space) {
                Ok(0) => self.session.peer_closed(),
                Ok(n) => {
                    reads += 1;
                    // A short read took everything the kernel had (Linux hands over all
                    // queued bytes up to the buffer size); new bytes bring a new edge. Not so
                    // once the FIN is in: it brings no further edge, so read on to the 0.
                    if n < want && !read_closed {
                        self.readable = false;
                    }
                    if let Err(TooLarge { body_len }) = self.session.received(n) {
                        eprintln!(
                            "comm-rust-server: {}: body length {body_len} exceeds --max-body \
                             {}; closing the connection",
                            self.peer, self.session.max_body
                        );
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.readable = false,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Status::Close,
            }
        }
    }

    /// After `END`: read and drop whatever the peer still sends until it closes. A peer that
    /// keeps sending gets a bounded share of the worker per event and the linger deadline.
    fn discard_input(&mut self) -> Status {
        for _ in 0..4 * READS_PER_TURN {
            match self.stream.read(self.session.scratch()) {
                Ok(0) => return Status::Close,
                Ok(_) => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Status::Lingering,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Status::Close,
            }
        }
        Status::Lingering
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{encode_into, BINARY, DEFAULT, QUIT, TEXT};

    const CAP: u64 = 1 << 20;

    /// Feeds `input` in chunks of at most `chunk` bytes, writing out replies after each read
    /// as an event loop would; returns everything written.
    fn run(session: &mut Session, input: &[u8], chunk: usize) -> Result<Vec<u8>, TooLarge> {
        let mut out = Vec::new();
        let mut rest = input;
        while !rest.is_empty() {
            let Some(space) = session.input_space() else {
                break;
            };
            let n = space.len().min(chunk).min(rest.len());
            space[..n].copy_from_slice(&rest[..n]);
            rest = &rest[n..];
            session.received(n)?;
            let reply = session.output().to_vec();
            out.extend_from_slice(&reply);
            session.consume_output(reply.len());
        }
        Ok(out)
    }

    fn frame(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        encode_into(&mut v, kind, body);
        v
    }

    fn body(n: usize, seed: usize) -> Vec<u8> {
        (0..n).map(|i| ((i + seed) % 251) as u8).collect()
    }

    #[test]
    fn every_type_is_echoed_as_reply_in_order() {
        let kinds = [DEFAULT, TEXT, 2, 16, 64, BINARY, 3, 255];
        let mut input = Vec::new();
        let mut expected = Vec::new();
        for (i, &k) in kinds.iter().enumerate() {
            let b = body(i * 10, i);
            input.extend(frame(k, &b));
            expected.extend(frame(REPLY, &b));
        }
        for chunk in [1, 2, 8, 9, 10, 100, usize::MAX] {
            let mut s = Session::new(CAP);
            assert_eq!(
                run(&mut s, &input, chunk).unwrap(),
                expected,
                "chunk {chunk}"
            );
            assert_eq!(s.phase(), Phase::Open);
        }
    }

    #[test]
    fn end_answers_everything_before_it_then_end() {
        for end in [END, QUIT] {
            let mut input = frame(DEFAULT, b"one");
            input.extend(frame(TEXT, b"two"));
            input.extend(frame(end, b""));
            input.extend(frame(DEFAULT, b"after end: dropped"));
            let mut expected = frame(REPLY, b"one");
            expected.extend(frame(REPLY, b"two"));
            expected.extend(frame(END, b""));
            for chunk in [1, 5, usize::MAX] {
                let mut s = Session::new(CAP);
                assert_eq!(run(&mut s, &input, chunk).unwrap(), expected);
                assert_eq!(s.phase(), Phase::Ending);
                assert!(s.input_space().is_none(), "nothing is read after END");
            }
        }
    }

    #[test]
    fn end_with_a_body_is_answered_by_a_header_only_end() {
        let mut s = Session::new(CAP);
        let input = frame(END, b"bye now");
        assert_eq!(run(&mut s, &input, 3).unwrap(), frame(END, b""));
        assert_eq!(s.phase(), Phase::Ending);
    }

    #[test]
    fn eof_at_a_frame_boundary_is_a_clean_end() {
        let mut s = Session::new(CAP);
        run(&mut s, &frame(DEFAULT, b"x"), usize::MAX).unwrap();
        s.peer_closed();
        assert_eq!(s.phase(), Phase::PeerDone);
        assert!(s.output().is_empty());
    }

    #[test]
    fn eof_inside_a_frame_drops_the_partial_frame() {
        let mut input = frame(DEFAULT, b"whole");
        let partial = frame(DEFAULT, b"cut short");
        input.extend_from_slice(&partial[..12]);
        let mut s = Session::new(CAP);
        // Replies are not taken out here: the whole one is still owed at EOF.
        let space = s.input_space().unwrap();
        space[..input.len()].copy_from_slice(&input);
        s.received(input.len()).unwrap();
        s.peer_closed();
        assert_eq!(s.phase(), Phase::Truncated);
        assert_eq!(s.output(), frame(REPLY, b"whole"));
        // A header cut short is a partial frame too.
        let mut s = Session::new(CAP);
        run(&mut s, &[DEFAULT, 0, 0], usize::MAX).unwrap();
        s.peer_closed();
        assert_eq!(s.phase(), Phase::Truncated);
        assert!(s.output().is_empty());
    }

    #[test]
    fn a_length_above_the_cap_fails_on_the_header_without_growing() {
        let mut s = Session::new(1000);
        let mut input = frame(TEXT, b"before");
        input.extend(
            Header {
                kind: DEFAULT,
                body_len: 1001,
            }
            .encode(),
        );
        let space = s.input_space().unwrap();
        space[..input.len()].copy_from_slice(&input);
        assert_eq!(s.received(input.len()), Err(TooLarge { body_len: 1001 }));
        assert_eq!(s.phase(), Phase::TooLarge);
        assert_eq!(s.buffer_len(), INITIAL_BUFFER);
        assert!(s.input_space().is_none());
        // The reply owed for the frame before it still goes out.
        assert_eq!(s.output(), frame(REPLY, b"before"));
        // At the cap exactly is fine.
        let mut s = Session::new(1000);
        let f = frame(DEFAULT, &body(1000, 0));
        assert_eq!(run(&mut s, &f, 7).unwrap(), frame(REPLY, &body(1000, 0)));
        // u64::MAX must not overflow anything.
        let mut s = Session::new(CAP);
        let header = [DEFAULT, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
        assert!(run(&mut s, &header, usize::MAX).is_err());
    }

    #[test]
    fn a_frame_bigger_than_the_buffer_grows_it_as_bytes_arrive() {
        let big = body(3 * INITIAL_BUFFER + 17, 5);
        let f = frame(BINARY, &big);
        let mut s = Session::new(CAP);
        // The announced length alone does not grow the buffer.
        run(&mut s, &f[..HEADER_LEN + 10], usize::MAX).unwrap();
        assert_eq!(s.buffer_len(), INITIAL_BUFFER);
        let out = run(&mut s, &f[HEADER_LEN + 10..], 4096).unwrap();
        assert_eq!(out, frame(REPLY, &big));
        assert!(s.buffer_len() >= f.len());
    }

    #[test]
    fn a_small_starting_buffer_grows_and_compacts_as_the_default_one() {
        // What the fuzz target relies on: `with_buffer` changes where the buffer starts, not
        // what is answered.
        let mut input = Vec::new();
        let mut expected = Vec::new();
        for i in 0..40 {
            let b = body(i * 13 % 300, i);
            input.extend(frame(DEFAULT, &b));
            expected.extend(frame(REPLY, &b));
        }
        for chunk in [1, 7, 64, usize::MAX] {
            let mut s = Session::with_buffer(CAP, 16);
            assert_eq!(s.buffer_len(), 16);
            assert_eq!(
                run(&mut s, &input, chunk).unwrap(),
                expected,
                "chunk {chunk}"
            );
            assert!(s.buffer_len() >= HEADER_LEN + 300 - 13);
        }
        // Never below a header.
        assert_eq!(Session::with_buffer(CAP, 0).buffer_len(), HEADER_LEN);
    }

    #[test]
    fn a_huge_buffer_is_given_back_once_empty() {
        let big = body(KEEP_BUFFER + 1, 0);
        let mut s = Session::new(16 << 20);
        let out = run(&mut s, &frame(DEFAULT, &big), usize::MAX).unwrap();
        assert_eq!(out.len(), big.len() + HEADER_LEN);
        assert_eq!(s.buffer_len(), INITIAL_BUFFER);
    }

    #[test]
    fn unsent_replies_apply_back_pressure() {
        // Many small frames, replies never taken: reading stops when the buffer is full.
        let one = frame(DEFAULT, &body(1000, 1));
        let mut s = Session::new(CAP);
        let mut fed = 0;
        while let Some(space) = s.input_space() {
            let n = space.len().min(one.len());
            space[..n].copy_from_slice(&one[..n]);
            s.received(n).unwrap();
            fed += n;
            assert!(fed < 10 * INITIAL_BUFFER, "reading never stopped");
        }
        assert_eq!(
            s.buffer_len(),
            INITIAL_BUFFER,
            "no growth for pending replies"
        );
        // Taking the replies out makes room again.
        let n = s.output().len();
        assert!(n > 0);
        s.consume_output(n);
        assert!(s.input_space().is_some());
    }

    #[test]
    fn partial_writes_keep_reply_order() {
        let mut input = Vec::new();
        let mut expected = Vec::new();
        for i in 0..200 {
            let b = body(i * 37 % 3000, i);
            input.extend(frame(DEFAULT, &b));
            expected.extend(frame(REPLY, &b));
        }
        let mut s = Session::new(CAP);
        let mut out = Vec::new();
        let mut rest = &input[..];
        let mut step = 0usize;
        while !rest.is_empty() || !s.output().is_empty() {
            step += 1;
            if let Some(space) = s.input_space() {
                let n = space.len().min(rest.len()).min(1 + step * 7919 % 20000);
                space[..n].copy_from_slice(&rest[..n]);
                rest = &rest[n..];
                s.received(n).unwrap();
            }
            // Write out only part of what is pending, as a full socket would take.
            let take = s.output().len().min(step * 104_729 % 9000);
            out.extend_from_slice(&s.output()[..take]);
            s.consume_output(take);
        }
        assert_eq!(out, expected);
    }
}
