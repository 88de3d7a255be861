//! The client side (the seed's Connector): a send queue drained by a send thread, and a
//! receive thread filling a receive queue. `post` enqueues a message and returns at once (it
//! blocks only while the send queue is full), `get` takes the next reply, `close` ends the
//! session. A `Connector` is `Sync`, so one thread can post while another gets.
//!
//! The send thread writes whatever is queued (up to 256 KiB) with one `writev`: every
//! message's encoded header and its body straight from the message, so header and body leave
//! in the same system call, a burst of messages costs one call, and no body is copied in user
//! space. The receive thread reads through a 64 KiB buffer, so one read brings in many small
//! replies.
//!
//! Bodies are recycled: the send thread hands the bodies it has written back (`buffer` gives
//! one to the next `post`), and `release` hands a reply's body back to the receive thread for
//! a later reply. Without that, every message cost two 4 KiB allocations freed on another
//! thread than made them, a third of the client's instructions in a Test4 profile (glibc's
//! arenas, no thread cache at that size).

use crate::frame::{self, Header, END, HEADER_LEN, QUIT};
use crossbeam_channel::{bounded, Receiver, Sender};
use std::io::{self, BufRead, BufReader, IoSlice, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::Mutex;
use std::thread::JoinHandle;

/// A message: its type and its body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    pub kind: u8,
    pub body: Vec<u8>,
}

impl Message {
    pub fn new(kind: u8, body: Vec<u8>) -> Message {
        Message { kind, body }
    }
}

/// How a client ends its session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionEnd {
    /// Send an `END` message.
    End,
    /// Send a `QUIT` message.
    Quit,
    /// Shut down the writing side of the socket (EOF).
    Eof,
}

#[derive(Clone, Copy, Debug)]
pub struct Options {
    /// Messages each queue holds before `post` (or the receive thread) waits.
    pub queue_depth: usize,
    /// Longest reply body accepted; a longer announced length fails the connection.
    pub max_body: u64,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            queue_depth: 256,
            max_body: frame::DEFAULT_MAX_BODY,
        }
    }
}

/// A batch is written once it holds this many bytes or messages (two iovecs per message,
/// within Linux's IOV_MAX of 1024).
const SEND_BATCH: usize = 256 * 1024;
const MAX_BATCH: usize = 500;
/// 64 KiB like the C++ client's reads: 16 connections × 256 KiB was 4 MiB of fresh pages to
/// fault in during a short run, for fewer reads that saved less than that.
const RECEIVE_BUFFER: usize = 64 * 1024;
/// Bodies kept for reuse: at most this many per direction, of at most this capacity, so a
/// connector whose user never asks for them holds at most 4 MiB.
const RECYCLE_DEPTH: usize = 64;
const RECYCLE_MAX: usize = 64 * 1024;

enum Outgoing {
    Message(Message),
    Finish(SessionEnd),
}

pub struct Connector {
    send_queue: Sender<Outgoing>,
    receive_queue: Receiver<io::Result<Message>>,
    /// Bodies the send thread has written, for `buffer`.
    sent_bodies: Receiver<Vec<u8>>,
    /// Reply bodies given back with `release`, for the receive thread.
    free_bodies: Sender<Vec<u8>>,
    send_thread: Mutex<Option<JoinHandle<io::Result<()>>>>,
    /// Kept to shut the socket down when the connector is dropped (unblocks both threads).
    stream: TcpStream,
}

impl Connector {
    /// Connects to `addr` (with `TCP_NODELAY`) and starts the send and receive threads.
    pub fn connect<A: ToSocketAddrs>(addr: A, options: Options) -> io::Result<Connector> {
        let stream = TcpStream::connect(addr)?;
        stream.set_nodelay(true)?;
        let (send_queue, send_rx) = bounded(options.queue_depth.max(1));
        let (receive_tx, receive_queue) = bounded(options.queue_depth.max(1));
        let recycle_depth = options.queue_depth.clamp(1, RECYCLE_DEPTH);
        let (sent_tx, sent_bodies) = bounded(recycle_depth);
        let (free_bodies, free_rx) = bounded(recycle_depth);
        let writer = stream.try_clone()?;
        let reader = stream.try_clone()?;
        let send_thread = spawn("comm-send", move || send_loop(writer, send_rx, sent_tx))?;
        // The receive thread ends by itself at END, EOF or an error; nobody joins it.
        spawn("comm-receive", move || {
            receive_loop(reader, receive_tx, free_rx, options.max_body)
        })?;
        Ok(Connector {
            send_queue,
            receive_queue,
            sent_bodies,
            free_bodies,
            send_thread: Mutex::new(Some(send_thread)),
            stream,
        })
    }

    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        self.stream.peer_addr()
    }

    /// An empty body to fill and `post`: one the send thread has already written when there
    /// is one (its memory reused), else a new one.
    pub fn buffer(&self) -> Vec<u8> {
        let mut body = self.sent_bodies.try_recv().unwrap_or_default();
        body.clear();
        body
    }

    /// Gives the body of a message from `get` back, to receive a later reply into.
    pub fn release(&self, body: Vec<u8>) {
        if body.capacity() > 0 && body.capacity() <= RECYCLE_MAX {
            let _ = self.free_bodies.try_send(body);
        }
    }

    /// Queues `message` for sending; waits only while the send queue is full. Fails once the
    /// session is closed or the send thread has stopped on an error.
    pub fn post(&self, message: Message) -> io::Result<()> {
        self.send_queue
            .send(Outgoing::Message(message))
            .map_err(|_| closed("the send thread has stopped"))
    }

    /// The next message received, in order: replies, then `END` if the server sends one.
    /// `Ok(None)` once the session has ended at a frame boundary (after `END`, or at EOF);
    /// an error for a broken connection (EOF inside a frame, a reset, a length over the cap).
    pub fn get(&self) -> io::Result<Option<Message>> {
        match self.receive_queue.recv() {
            Ok(Ok(message)) => Ok(Some(message)),
            Ok(Err(e)) => Err(e),
            Err(_) => Ok(None),
        }
    }

    /// Ends the session after every message already posted: sends `END` or `QUIT`, or shuts
    /// down writing; waits until the send thread has written everything and returns its
    /// error if it failed. Replies can still be read with `get` afterwards.
    pub fn close(&self, end: SessionEnd) -> io::Result<()> {
        // If the send thread already stopped, the join below reports why.
        let _ = self.send_queue.send(Outgoing::Finish(end));
        let handle = self.send_thread.lock().map_or(None, |mut h| h.take());
        match handle {
            Some(h) => h
                .join()
                .unwrap_or_else(|_| Err(closed("send thread panicked"))),
            None => Err(closed("already closed")),
        }
    }
}

impl Drop for Connector {
    fn drop(&mut self) {
        // Unblocks a send thread stuck in write and a receive thread stuck in read; queued
        // messages not yet written are abandoned.
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

fn closed(why: &str) -> io::Error {
    io::Error::new(io::ErrorKind::BrokenPipe, why.to_string())
}

fn spawn<T: Send + 'static>(
    name: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> io::Result<JoinHandle<T>> {
    // Small stacks: a test may run hundreds of connectors, two threads each.
    std::thread::Builder::new()
        .name(name.to_string())
        .stack_size(256 * 1024)
        .spawn(f)
}

/// Writes every queued message, batching what is already waiting into one `writev`.
fn send_loop(
    mut stream: TcpStream,
    queue: Receiver<Outgoing>,
    sent: Sender<Vec<u8>>,
) -> io::Result<()> {
    let mut batch: Vec<Message> = Vec::with_capacity(MAX_BATCH);
    let mut headers: Vec<[u8; HEADER_LEN]> = Vec::with_capacity(MAX_BATCH + 1);
    // A dropped connector disconnects the queue: then just stop.
    while let Ok(first) = queue.recv() {
        let mut finish = None;
        let mut bytes = 0;
        let mut next = Some(first);
        while let Some(item) = next.take() {
            match item {
                Outgoing::Message(m) => {
                    bytes += HEADER_LEN + m.body.len();
                    batch.push(m);
                }
                Outgoing::Finish(end) => {
                    finish = Some(end);
                    break;
                }
            }
            if batch.len() == MAX_BATCH || bytes >= SEND_BATCH {
                break;
            }
            next = queue.try_recv().ok();
        }
        headers.clear();
        headers.extend(batch.iter().map(|m| {
            Header {
                kind: m.kind,
                body_len: m.body.len() as u64,
            }
            .encode()
        }));
        match finish {
            Some(SessionEnd::End) => headers.push(end_header(END)),
            Some(SessionEnd::Quit) => headers.push(end_header(QUIT)),
            Some(SessionEnd::Eof) | None => {}
        }
        let mut slices: Vec<IoSlice> = Vec::with_capacity(2 * headers.len());
        for (i, header) in headers.iter().enumerate() {
            slices.push(IoSlice::new(header));
            if let Some(m) = batch.get(i) {
                slices.push(IoSlice::new(&m.body));
            }
        }
        write_all_vectored(&mut stream, &mut slices)?;
        drop(slices);
        for m in batch.drain(..) {
            // Back to `buffer`; dropped when nobody takes them (the queue is full).
            if m.body.capacity() > 0 && m.body.capacity() <= RECYCLE_MAX {
                let _ = sent.try_send(m.body);
            }
        }
        if let Some(end) = finish {
            if end == SessionEnd::Eof {
                stream.shutdown(Shutdown::Write)?;
            }
            return Ok(());
        }
    }
    Ok(())
}

fn end_header(kind: u8) -> [u8; HEADER_LEN] {
    Header { kind, body_len: 0 }.encode()
}

/// Writes all of `slices`, in as few `writev` calls as the socket allows.
fn write_all_vectored(stream: &mut TcpStream, mut slices: &mut [IoSlice]) -> io::Result<()> {
    IoSlice::advance_slices(&mut slices, 0); // skips empty bodies
    while !slices.is_empty() {
        match stream.write_vectored(slices) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => IoSlice::advance_slices(&mut slices, n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Reads messages into the receive queue until `END`, EOF or an error.
fn receive_loop(
    stream: TcpStream,
    queue: Sender<io::Result<Message>>,
    free: Receiver<Vec<u8>>,
    max_body: u64,
) {
    let mut reader = BufReader::with_capacity(RECEIVE_BUFFER, stream);
    loop {
        let body = free.try_recv().unwrap_or_default();
        let result = read_message_into(&mut reader, max_body, body);
        let stop = !matches!(&result, Ok(Some(m)) if m.kind != END);
        let item = match result {
            Ok(Some(m)) => Ok(m),
            Ok(None) => return, // EOF at a frame boundary: disconnecting the queue says so
            Err(e) => Err(e),
        };
        if queue.send(item).is_err() || stop {
            return;
        }
    }
}

/// One message, `None` at a clean EOF (before the first byte of a header).
pub fn read_message<R: BufRead>(reader: &mut R, max_body: u64) -> io::Result<Option<Message>> {
    read_message_into(reader, max_body, Vec::new())
}

/// `read_message` with the body read into `body` (its content dropped, its memory reused).
fn read_message_into<R: BufRead>(
    reader: &mut R,
    max_body: u64,
    mut body: Vec<u8>,
) -> io::Result<Option<Message>> {
    let mut header = [0u8; HEADER_LEN];
    let mut got = 0;
    while got < HEADER_LEN {
        match reader.read(&mut header[got..]) {
            Ok(0) if got == 0 => return Ok(None),
            Ok(0) => return Err(truncated("header")),
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    let header = Header::decode(&header);
    let Some(frame_len) = header.frame_len(max_body) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("reply body length {} exceeds {max_body}", header.body_len),
        ));
    };
    // Copied out of the reader's buffer (no zero-filling first), in as many pieces as it
    // takes to arrive.
    let len = frame_len - HEADER_LEN;
    body.clear();
    body.reserve_exact(len);
    while body.len() < len {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Err(truncated("body"));
        }
        let n = available.len().min(len - body.len());
        body.extend_from_slice(&available[..n]);
        reader.consume(n);
    }
    Ok(Some(Message::new(header.kind, body)))
}

fn truncated(part: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::UnexpectedEof,
        format!("connection closed inside a message {part}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{encode_into, DEFAULT, REPLY};

    #[test]
    fn read_message_decodes_frames_and_a_clean_eof() {
        let mut wire = Vec::new();
        encode_into(&mut wire, REPLY, b"hello");
        encode_into(&mut wire, END, b"");
        let mut r = &wire[..];
        assert_eq!(
            read_message(&mut r, 100).unwrap(),
            Some(Message::new(REPLY, b"hello".to_vec()))
        );
        assert_eq!(
            read_message(&mut r, 100).unwrap(),
            Some(Message::new(END, vec![]))
        );
        assert_eq!(read_message(&mut r, 100).unwrap(), None);
    }

    #[test]
    fn read_message_rejects_truncation_and_oversize() {
        let mut wire = Vec::new();
        encode_into(&mut wire, DEFAULT, b"0123456789");
        for cut in [1, 8, 9, 15] {
            let mut r = &wire[..cut];
            let e = read_message(&mut r, 100).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::UnexpectedEof, "cut at {cut}");
        }
        let mut r = &wire[..];
        assert_eq!(
            read_message(&mut r, 9).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
