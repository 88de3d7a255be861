//! One client connection: its socket, its session, and what it keeps of its input and output.
//!
//! Reading (see `Server::on_readable`): the event loop reads into one shared 64 KiB buffer.
//! If that buffer holds only whole requests, as it almost always does, they are executed
//! straight from it and the connection keeps no input buffer at all; only the tail of a
//! request split across reads is copied into the connection's own `input`, and the next read
//! is appended there. So 1,000 idle clients cost almost nothing, and the common case copies
//! nothing.
//!
//! Writing mirrors reading: every reply of a batch is appended to one output buffer shared by
//! all clients (the server's, passed in), and the batch is sent with one `write` (as redis's
//! `beforeSleep` flushes clients). Only what the socket does not accept is kept by the
//! connection, in `pending`, until the socket is writable again. One shared buffer stays warm
//! in the CPU cache and is allocated once; a buffer per client would be grown from nothing (or
//! kept, 50 × 100 KiB for an LRANGE_600 run) for every batch. A client whose unsent output
//! passes `OUTPUT_LIMIT` (it is not reading its replies) is disconnected, as redis's
//! `client-output-buffer-limit normal 64mb`.

use crate::commands::{self, Ctx, Session};
use crate::protocol::reply::{self, Out};
use crate::protocol::request::{Parsed, Parser};
use crate::store::Store;
use mio::net::TcpStream;
use std::io::{self, Write};

/// Pending output that gets a client disconnected.
pub const OUTPUT_LIMIT: usize = 64 * 1024 * 1024;

/// A connection's buffers above this capacity are released once empty, so that one large
/// reply or request does not pin memory for the rest of a connection's life.
const KEEP_CAPACITY: usize = 64 * 1024;
/// The shared output buffer is released above this capacity (it serves every client, so it
/// may keep more: an LRANGE_600 batch of 16 replies is 86 KiB).
const KEEP_SHARED: usize = 4 * KEEP_CAPACITY;

pub struct Connection {
    pub stream: TcpStream,
    pub session: Session,
    parser: Parser,
    /// Unprocessed input: the tail of a request split across reads.
    input: Vec<u8>,
    /// Where the parser resumes in `input`.
    parse_pos: usize,
    /// Replies the socket did not take yet (empty unless the client reads slower than it
    /// sends).
    pending: Vec<u8>,
    /// Bytes of `pending` already written.
    sent: usize,
    /// Whether replies use RESP3 (after `HELLO 3`); the shared output buffer carries it while
    /// this client's commands run.
    resp3: bool,
    /// Close once `out` has been written (QUIT, protocol error).
    pub closing: bool,
    /// Whether the socket is registered for writability (only while output is pending).
    pub watching_writable: bool,
}

/// What the event loop should do with a connection after serving it.
#[derive(Debug, PartialEq, Eq)]
pub enum Status {
    Open,
    Close,
}

impl Connection {
    pub fn new(stream: TcpStream, id: u64) -> Connection {
        Connection {
            stream,
            session: Session::new(id),
            parser: Parser::default(),
            input: Vec::new(),
            parse_pos: 0,
            pending: Vec::new(),
            sent: 0,
            resp3: false,
            closing: false,
            watching_writable: false,
        }
    }

    /// Executes the requests in `data` (bytes just read into the shared buffer), appending
    /// their replies to `out` (the shared output buffer, empty on entry); `send` then sends
    /// them.
    pub fn serve(&mut self, data: &[u8], store: &mut Store, now: i64, out: &mut Out) -> Status {
        if self.closing {
            // Input after QUIT or a protocol error is ignored, as redis does.
            return Status::Open;
        }
        out.resp3 = self.resp3;
        let status = self.serve_input(data, store, now, out);
        self.resp3 = out.resp3;
        status
    }

    fn serve_input(&mut self, data: &[u8], store: &mut Store, now: i64, out: &mut Out) -> Status {
        if self.input.is_empty() {
            let pos = self.execute(data, 0, store, now, out);
            let keep = self.parser.keep_from(pos);
            if keep < data.len() {
                self.input.extend_from_slice(&data[keep..]);
                self.parser.shift(keep);
                self.parse_pos = pos - keep;
            }
        } else {
            self.input.extend_from_slice(data);
            let input = std::mem::take(&mut self.input);
            let pos = self.execute(&input, self.parse_pos, store, now, out);
            let keep = self.parser.keep_from(pos);
            self.input = input;
            self.input.drain(..keep);
            self.parser.shift(keep);
            self.parse_pos = pos - keep;
            if self.input.is_empty() && self.input.capacity() > KEEP_CAPACITY {
                self.input = Vec::new();
            }
        }
        if self.over_limit(out) {
            return Status::Close;
        }
        Status::Open
    }

    /// True when the unsent replies, earlier ones and this batch's, pass `OUTPUT_LIMIT`.
    fn over_limit(&self, out: &Out) -> bool {
        self.pending.len() - self.sent + out.len() > OUTPUT_LIMIT
    }

    /// Parses and runs every whole request in `buf[pos..]`; returns where parsing stopped.
    fn execute(
        &mut self,
        buf: &[u8],
        mut pos: usize,
        store: &mut Store,
        now: i64,
        out: &mut Out,
    ) -> usize {
        loop {
            if self.session.close_after_reply {
                self.closing = true;
                break;
            }
            match self.parser.parse(buf, &mut pos) {
                Ok(Parsed::Command) => {
                    let mut ctx = Ctx {
                        store,
                        session: &mut self.session,
                        out,
                        now,
                    };
                    commands::execute(&mut ctx, self.parser.args(buf));
                    store.stats.total_commands += 1;
                    if self.over_limit(out) {
                        break;
                    }
                }
                Ok(Parsed::Nothing) => {}
                Ok(Parsed::Incomplete) => break,
                Err(e) => {
                    reply::error_bytes(out, &e.0);
                    self.closing = true;
                    break;
                }
            }
        }
        if self.session.close_after_reply {
            self.closing = true;
        }
        pos
    }

    pub fn has_pending_output(&self) -> bool {
        self.sent < self.pending.len()
    }

    /// Sends the batch of replies in `out` with one `write` and leaves `out` empty for the
    /// next client. What the socket does not take moves to `pending` (the whole buffer is
    /// handed over when the rest is large, rather than copied). If earlier replies are still
    /// pending, the batch queues behind them: the socket is full, and the event loop writes
    /// when it is writable again. `Close` on a write error, or when everything is written and
    /// the connection is closing.
    pub fn send(&mut self, out: &mut Out) -> Status {
        let status = self.send_batch(out);
        out.clear();
        if out.capacity() > KEEP_SHARED {
            out.buf = Vec::new();
        }
        status
    }

    fn send_batch(&mut self, out: &mut Out) -> Status {
        if self.has_pending_output() {
            self.pending.extend_from_slice(out);
            return Status::Open;
        }
        let mut written = 0;
        while written < out.len() {
            match self.stream.write(&out[written..]) {
                Ok(0) => return Status::Close,
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Status::Close,
            }
        }
        if written < out.len() {
            if out.len() - written > KEEP_CAPACITY {
                self.pending = std::mem::take(&mut out.buf);
                self.sent = written;
            } else {
                self.pending.clear();
                self.pending.extend_from_slice(&out[written..]);
                self.sent = 0;
            }
            return Status::Open;
        }
        self.closing_status()
    }

    /// Writes as much pending output as the socket takes (the socket became writable).
    /// `Close` on a write error, or when everything is written and the connection is closing.
    pub fn flush(&mut self) -> Status {
        while self.sent < self.pending.len() {
            match self.stream.write(&self.pending[self.sent..]) {
                Ok(0) => return Status::Close,
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Status::Open,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Status::Close,
            }
        }
        self.pending.clear();
        self.sent = 0;
        if self.pending.capacity() > KEEP_CAPACITY {
            self.pending = Vec::new();
        }
        self.closing_status()
    }

    fn closing_status(&self) -> Status {
        if self.closing {
            Status::Close
        } else {
            Status::Open
        }
    }
}
