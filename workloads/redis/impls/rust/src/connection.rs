//! One client connection: its socket, its session, and its input and output buffers.
//!
//! Reading (see `Server::on_readable`): the event loop reads into one shared 64 KiB buffer.
//! If that buffer holds only whole requests, as it almost always does, they are executed
//! straight from it and the connection keeps no input buffer at all; only the tail of a
//! request split across reads is copied into the connection's own `input`, and the next read
//! is appended there. So 1,000 idle clients cost almost nothing, and the common case copies
//! nothing.
//!
//! Writing: every reply of a batch is appended to `out`, and the batch is sent with one
//! `write` (as redis's `beforeSleep` flushes clients). What the socket does not accept stays in
//! `out` until the socket is writable again. A client whose unsent output passes
//! `OUTPUT_LIMIT` (it is not reading its replies) is disconnected, as redis's
//! `client-output-buffer-limit normal 64mb`.

use crate::commands::{self, Ctx, Session};
use crate::protocol::reply::{self, Out};
use crate::protocol::request::{Parsed, Parser};
use crate::store::Store;
use mio::net::TcpStream;
use std::io::{self, Write};

/// Pending output that gets a client disconnected.
pub const OUTPUT_LIMIT: usize = 64 * 1024 * 1024;

/// Buffers above this capacity are released once empty, so that one large reply or request
/// does not pin memory for the rest of a connection's life.
const KEEP_CAPACITY: usize = 64 * 1024;

pub struct Connection {
    pub stream: TcpStream,
    pub session: Session,
    parser: Parser,
    /// Unprocessed input: the tail of a request split across reads.
    input: Vec<u8>,
    /// Where the parser resumes in `input`.
    parse_pos: usize,
    out: Out,
    /// Bytes of `out` already written.
    sent: usize,
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
            out: Out::default(),
            sent: 0,
            closing: false,
            watching_writable: false,
        }
    }

    /// Executes the requests in `data` (bytes just read into the shared buffer).
    pub fn serve(&mut self, data: &[u8], store: &mut Store, now: i64) -> Status {
        if self.closing {
            // Input after QUIT or a protocol error is ignored, as redis does.
            return Status::Open;
        }
        if self.input.is_empty() {
            let pos = self.execute(data, 0, store, now);
            let keep = self.parser.keep_from(pos);
            if keep < data.len() {
                self.input.extend_from_slice(&data[keep..]);
                self.parser.shift(keep);
                self.parse_pos = pos - keep;
            }
        } else {
            self.input.extend_from_slice(data);
            let input = std::mem::take(&mut self.input);
            let pos = self.execute(&input, self.parse_pos, store, now);
            let keep = self.parser.keep_from(pos);
            self.input = input;
            self.input.drain(..keep);
            self.parser.shift(keep);
            self.parse_pos = pos - keep;
            if self.input.is_empty() && self.input.capacity() > KEEP_CAPACITY {
                self.input = Vec::new();
            }
        }
        if self.out.len() - self.sent > OUTPUT_LIMIT {
            return Status::Close;
        }
        Status::Open
    }

    /// Parses and runs every whole request in `buf[pos..]`; returns where parsing stopped.
    fn execute(&mut self, buf: &[u8], mut pos: usize, store: &mut Store, now: i64) -> usize {
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
                        out: &mut self.out,
                        now,
                    };
                    commands::execute(&mut ctx, self.parser.args(buf));
                    store.stats.total_commands += 1;
                    if self.out.len() - self.sent > OUTPUT_LIMIT {
                        break;
                    }
                }
                Ok(Parsed::Nothing) => {}
                Ok(Parsed::Incomplete) => break,
                Err(e) => {
                    reply::error_bytes(&mut self.out, &e.0);
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
        self.sent < self.out.len()
    }

    /// Writes as much pending output as the socket takes. `Close` on a write error, or
    /// when everything is written and the connection is closing.
    pub fn flush(&mut self) -> Status {
        while self.sent < self.out.len() {
            match self.stream.write(&self.out[self.sent..]) {
                Ok(0) => return Status::Close,
                Ok(n) => self.sent += n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Status::Open,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Status::Close,
            }
        }
        self.out.clear();
        self.sent = 0;
        if self.out.capacity() > KEEP_CAPACITY {
            self.out.buf = Vec::new();
        }
        if self.closing {
            Status::Close
        } else {
            Status::Open
        }
    }
}
