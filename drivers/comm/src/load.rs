//! The neutral load (`--load neutral`): the driver's own clients, the same for every server.
//!
//! Stream mode (the seed's Test4): N connections, each with a send thread that writes its M
//! messages back to back — whole frames, header and body together, up to --coalesce bytes
//! (64 KiB) of them per `writev` — and then END, and a receive
//! thread that reads the replies in large chunks and checks every byte as it arrives
//! ([`Replies`]). Rtt mode (the seed's test3): one thread per connection sends a message,
//! waits for its reply, and records the round trip in an HdrHistogram.
//!
//! All connections are open before any thread starts, and the threads start together (a
//! gate), so connection set-up is not measured. Elapsed time runs from the first send of the
//! measured messages to the last measured reply, each stamped right after the `read` that
//! completed it (the reply's check is not timed).
//!
//! Sockets are blocking (no timeout bookkeeping in the hot path). The main thread is the
//! watchdog: it waits for the threads' reports with the trial's deadline, and on a failure or
//! at the deadline it shuts every socket down, which wakes every blocked `read` and `write`.

use crate::frame::{encode_header, END, HEADER_LEN};
use crate::pattern::Tape;
use crate::reply::Replies;
use driver_kit::clock::own_cpu_time;
use driver_kit::error::{Failure, Result};
use driver_kit::percentiles::new_histogram;
use hdrhistogram::Histogram;
use std::io::{self, IoSlice, Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Bytes per `read`: large, so a receive thread drains many replies per system call.
const RECV_BUF: usize = 128 * 1024;
/// The threads need little stack: their buffers are on the heap.
const STACK: usize = 256 * 1024;
/// After a failure, how long the other threads get to wind down before the driver reports.
const WIND_DOWN: Duration = Duration::from_secs(2);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Send M messages without waiting; receive on another thread.
    Stream,
    /// Wait for each reply before the next message.
    RoundTrip,
}

pub struct Plan {
    pub shape: Shape,
    pub clients: u64,
    /// Measured messages per client.
    pub messages: u64,
    /// Unrecorded round trips per client before the measured ones (rtt only).
    pub warmup: u64,
    /// The type byte of every message.
    pub kind: u8,
    /// Stream mode: bytes of whole frames per `writev` (0: one frame per write).
    pub coalesce: usize,
    pub port: u16,
    /// The server's address (--impl-host).
    pub host: Ipv4Addr,
    pub deadline: Instant,
}

pub struct Outcome {
    /// First measured send to last measured reply.
    pub elapsed: Duration,
    /// Round trips in ns (rtt only).
    pub latency: Option<Histogram<u64>>,
    /// Replies received and checked in full, warm-up included.
    pub replies_checked: u64,
    /// The driver's own CPU time while the load ran (all its threads).
    pub cpu: Duration,
    pub threads: usize,
}

pub fn run(plan: &Plan, tape: Tape) -> Result<Outcome> {
    let address = SocketAddr::from((plan.host, plan.port));
    let mut streams = Vec::new();
    for client in 0..plan.clients {
        let left = plan.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Failure::new(format!(
                "--timeout-s ran out while connecting client {client}"
            )));
        }
        let stream = TcpStream::connect_timeout(&address, left)
            .and_then(|s| s.set_nodelay(true).map(|()| s))
            .map_err(|e| Failure::new(format!("client {client}: connecting to {address}: {e}")))?;
        streams.push(stream);
    }

    let shared = Arc::new(Shared {
        tape,
        gate: Gate::default(),
        progress: (0..plan.clients).map(|_| Progress::default()).collect(),
    });
    let (reports, inbox) = mpsc::channel();
    let mut watchdog = Watchdog {
        streams: Vec::new(),
        shared: Arc::clone(&shared),
    };
    let mut threads = 0;
    let spawned = (|| -> Result<()> {
        for (client, stream) in (0..plan.clients).zip(streams) {
            let clone = || {
                stream
                    .try_clone()
                    .map_err(|e| Failure::new(format!("client {client}: dup: {e}")))
            };
            watchdog.streams.push(clone()?);
            let worker = Worker {
                shared: Arc::clone(&shared),
                client,
                kind: plan.kind,
                coalesce: plan.coalesce,
                reports: reports.clone(),
            };
            match plan.shape {
                Shape::Stream => {
                    let sender = worker.clone();
                    let send_stream = clone()?;
                    let messages = plan.messages;
                    spawn(format!("send-{client}"), move || {
                        sender.run(Role::Send, || sender.send_all(send_stream, messages))
                    })?;
                    threads += 1;
                    spawn(format!("recv-{client}"), move || {
                        worker.run(Role::Receive, || worker.receive_all(stream, messages))
                    })?;
                    threads += 1;
                }
                Shape::RoundTrip => {
                    let (warmup, messages) = (plan.warmup, plan.messages);
                    spawn(format!("rtt-{client}"), move || {
                        worker.run(Role::RoundTrip, || {
                            worker.round_trips(stream, warmup, messages)
                        })
                    })?;
                    threads += 1;
                }
            }
        }
        Ok(())
    })();
    drop(reports);
    if let Err(failure) = spawned {
        watchdog.abort();
        return Err(failure);
    }

    let cpu_before = own_cpu_time();
    shared.gate.open();
    let collected = watchdog.collect(&inbox, threads, plan);
    let cpu = own_cpu_time().saturating_sub(cpu_before);
    let totals = collected?;
    let elapsed = totals
        .last_reply
        .saturating_duration_since(totals.first_send);
    Ok(Outcome {
        elapsed,
        latency: totals.latency,
        replies_checked: totals.replies,
        cpu,
        threads,
    })
}

fn spawn(name: String, body: impl FnOnce() + Send + 'static) -> Result<()> {
    thread::Builder::new()
        .name(name)
        .stack_size(STACK)
        .spawn(body)
        .map(drop)
        .map_err(|e| Failure::new(format!("cannot start a load thread: {e}")))
}

/// What all the threads share.
struct Shared {
    tape: Tape,
    gate: Gate,
    progress: Vec<Progress>,
}

/// Per client, for the timeout message: how far each connection got.
#[derive(Default)]
struct Progress {
    sent: AtomicU64,
    received: AtomicU64,
}

/// Holds the threads until every connection and thread is ready, then releases them together
/// (or tells them to give up).
#[derive(Default)]
struct Gate {
    state: Mutex<Option<bool>>,
    changed: Condvar,
}

impl Gate {
    fn open(&self) {
        self.set(true);
    }

    fn abort(&self) {
        self.set(false);
    }

    fn set(&self, go: bool) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        state.get_or_insert(go);
        self.changed.notify_all();
    }

    /// True once opened; false if aborted.
    fn wait(&self) -> bool {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            if let Some(go) = *state {
                return go;
            }
            state = self.changed.wait(state).unwrap_or_else(|e| e.into_inner());
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Send,
    Receive,
    RoundTrip,
}

/// What a thread tells the watchdog when it ends.
struct Report {
    client: u64,
    role: Role,
    result: Result<Done>,
}

#[derive(Default)]
struct Done {
    first_send: Option<Instant>,
    last_reply: Option<Instant>,
    replies: u64,
    latency: Option<Histogram<u64>>,
}

#[derive(Clone)]
struct Worker {
    shared: Arc<Shared>,
    client: u64,
    kind: u8,
    coalesce: usize,
    reports: mpsc::Sender<Report>,
}

impl Worker {
    fn run(&self, role: Role, work: impl FnOnce() -> Result<Done>) {
        let result = if self.shared.gate.wait() {
            work()
        } else {
            Err(self.fail("aborted before the start"))
        };
        let _ = self.reports.send(Report {
            client: self.client,
            role,
            result,
        });
    }

    /// A failure of this client's connection (the reply checks name the client themselves).
    fn fail(&self, what: impl std::fmt::Display) -> Failure {
        Failure::new(format!("client {}: {what}", self.client))
    }

    fn progress(&self) -> &Progress {
        &self.shared.progress[self.client as usize]
    }

    /// The send thread of stream mode: M messages back to back, then END.
    fn send_all(&self, mut stream: TcpStream, messages: u64) -> Result<Done> {
        let tape = &self.shared.tape;
        let header = encode_header(self.kind, tape.size() as u64);
        let mut first_send = None;
        let per_write = frames_per_write(self.coalesce, tape.size());
        // Refilled for each write: no allocation per message.
        let mut slices: Vec<IoSlice> = Vec::with_capacity(2 * per_write as usize);
        let mut m = 0;
        while m < messages {
            let batch = per_write.min(messages - m);
            slices.clear();
            for j in m..m + batch {
                slices.push(IoSlice::new(&header));
                slices.push(IoSlice::new(tape.body(self.client, j)));
            }
            if m == 0 {
                first_send = Some(Instant::now());
            }
            write_all_vectored(&mut stream, &mut slices)
                .map_err(|e| self.fail(sending(m, batch, messages, &e)))?;
            m += batch;
            self.progress().sent.store(m, Ordering::Relaxed);
        }
        write_frame(&mut stream, &encode_header(END, 0), &[])
            .map_err(|e| self.fail(format!("sending END after {messages} messages: {e}")))?;
        Ok(Done {
            first_send,
            ..Done::default()
        })
    }

    /// The receive thread of stream mode: M checked replies, then END or end of file.
    fn receive_all(&self, mut stream: TcpStream, messages: u64) -> Result<Done> {
        let mut buf = vec![0u8; RECV_BUF];
        let mut replies = Replies::new(&self.shared.tape, self.client, messages);
        let mut last_reply = None;
        loop {
            let n = read(&mut stream, &mut buf, &replies, messages)?;
            let now = Instant::now();
            if n == 0 {
                replies.eof()?;
                break;
            }
            let before = replies.received();
            replies.feed(&buf[..n])?;
            if replies.received() != before {
                self.progress()
                    .received
                    .store(replies.received(), Ordering::Relaxed);
                if replies.received() == messages {
                    last_reply = Some(now);
                }
            }
            if replies.ended() {
                break;
            }
        }
        Ok(Done {
            last_reply,
            replies: replies.received(),
            ..Done::default()
        })
    }

    /// Rtt mode: each message waits for its reply; the first `warmup` are not recorded.
    fn round_trips(&self, mut stream: TcpStream, warmup: u64, messages: u64) -> Result<Done> {
        let tape = &self.shared.tape;
        let total = warmup + messages;
        let header = encode_header(self.kind, tape.size() as u64);
        let mut buf = vec![0u8; RECV_BUF.max(tape.size() + HEADER_LEN).min(4 << 20)];
        let mut replies = Replies::new(tape, self.client, total);
        let mut latency = new_histogram()?;
        let mut done = Done::default();
        for m in 0..total {
            let sent_at = Instant::now();
            write_frame(&mut stream, &header, tape.body(self.client, m))
                .map_err(|e| self.fail(sending(m, 1, total, &e)))?;
            self.progress().sent.store(m + 1, Ordering::Relaxed);
            let arrived = loop {
                let n = read(&mut stream, &mut buf, &replies, total)?;
                let now = Instant::now();
                if n == 0 {
                    replies.eof()?;
                    return Err(self.fail("internal error: end of file accepted early"));
                }
                replies.feed(&buf[..n])?;
                if replies.received() > m + 1 {
                    return Err(self.fail(format!(
                        "a reply to message {} arrived before the message was sent",
                        m + 1
                    )));
                }
                if replies.received() == m + 1 {
                    break now;
                }
            };
            self.progress().received.store(m + 1, Ordering::Relaxed);
            if m >= warmup {
                let took = arrived.saturating_duration_since(sent_at);
                latency.saturating_record(u64::try_from(took.as_nanos()).unwrap_or(u64::MAX));
                done.first_send.get_or_insert(sent_at);
                done.last_reply = Some(arrived);
            }
        }
        write_frame(&mut stream, &encode_header(END, 0), &[])
            .map_err(|e| self.fail(format!("sending END after {total} messages: {e}")))?;
        while !replies.ended() {
            let n = read(&mut stream, &mut buf, &replies, total)?;
            if n == 0 {
                replies.eof()?;
                break;
            }
            replies.feed(&buf[..n])?;
        }
        done.replies = replies.received();
        done.latency = Some(latency);
        Ok(done)
    }
}

fn sending(m: u64, batch: u64, of: u64, e: &io::Error) -> String {
    let hint = match e.kind() {
        io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset => {
            " (the server closed the connection)"
        }
        _ => "",
    };
    let which = match batch {
        1 => format!("message {m}"),
        _ => format!("messages {m}..={}", m + batch - 1),
    };
    format!("sending {which} of {of}: {e}{hint}")
}

/// How many whole frames one `writev` carries: 1 without --coalesce, else as many as fit in
/// `coalesce` bytes (at least 1, at most 512: 1024 iovecs, the kernel's IOV_MAX).
pub fn frames_per_write(coalesce: usize, size: usize) -> u64 {
    if coalesce == 0 {
        return 1;
    }
    (coalesce / (HEADER_LEN + size)).clamp(1, 512) as u64
}

/// Writes all of `slices` (whole frames), in as few `writev` calls as the socket allows.
fn write_all_vectored(stream: &mut TcpStream, mut slices: &mut [IoSlice]) -> io::Result<()> {
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

/// Writes one frame, header and body in one `writev` (more only if the socket takes part).
fn write_frame(stream: &mut TcpStream, header: &[u8], body: &[u8]) -> io::Result<()> {
    write_all_vectored(stream, &mut [IoSlice::new(header), IoSlice::new(body)])
}

/// One `read`, retried when interrupted; errors name the client and how far it got.
fn read(stream: &mut TcpStream, buf: &mut [u8], replies: &Replies, of: u64) -> Result<usize> {
    loop {
        match stream.read(buf) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => {
                return Err(Failure::new(format!(
                    "client {}: reading replies after {} of {of}: {e}",
                    replies.client(),
                    replies.received()
                )))
            }
        }
    }
}

/// The main thread's side: collects the reports, bounds the wait, stops everything on a
/// failure.
struct Watchdog {
    /// One handle per connection, to shut them all down.
    streams: Vec<TcpStream>,
    shared: Arc<Shared>,
}

struct Totals {
    first_send: Instant,
    last_reply: Instant,
    replies: u64,
    latency: Option<Histogram<u64>>,
}

impl Watchdog {
    fn abort(&self) {
        self.shared.gate.abort();
        for stream in &self.streams {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }

    fn collect(
        &mut self,
        inbox: &mpsc::Receiver<Report>,
        threads: usize,
        plan: &Plan,
    ) -> Result<Totals> {
        let mut pending = threads;
        let mut first_send: Option<Instant> = None;
        let mut last_reply: Option<Instant> = None;
        let mut replies = 0;
        let mut latency: Option<Histogram<u64>> = None;
        // A send thread's failure (a broken pipe) is usually explained by its receive thread
        // (what the server sent before it closed), so it waits for that.
        let mut send_failures: Vec<(u64, Failure)> = Vec::new();
        while pending > 0 {
            let left = plan.deadline.saturating_duration_since(Instant::now());
            let report = match inbox.recv_timeout(left) {
                Ok(report) => report,
                Err(RecvTimeoutError::Timeout) => {
                    let mut failure = Failure::new(format!(
                        "the load did not finish within --timeout-s: {}",
                        self.stragglers(plan)
                    ));
                    if let Some((_, sent)) = send_failures.first() {
                        failure = failure.also(sent);
                    }
                    return Err(self.stop(failure, inbox));
                }
                Err(RecvTimeoutError::Disconnected) => break,
            };
            pending -= 1;
            match report.result {
                Ok(done) => {
                    first_send = earliest(first_send, done.first_send);
                    last_reply = latest(last_reply, done.last_reply);
                    replies += done.replies;
                    if let Some(h) = done.latency {
                        match &mut latency {
                            None => latency = Some(h),
                            Some(all) => all.add(&h).map_err(|e| {
                                Failure::new(format!("internal error merging histograms: {e}"))
                            })?,
                        }
                    }
                }
                Err(failure) if report.role == Role::Send => {
                    send_failures.push((report.client, failure));
                }
                Err(failure) => {
                    let failure = match send_failures.iter().find(|(c, _)| *c == report.client) {
                        Some((_, sent)) => failure.also(format!("its send thread: {sent}")),
                        None => failure,
                    };
                    return Err(self.stop(failure, inbox));
                }
            }
        }
        if let Some((_, failure)) = send_failures.into_iter().next() {
            return Err(self.stop(failure, inbox));
        }
        match (first_send, last_reply) {
            (Some(first_send), Some(last_reply)) => Ok(Totals {
                first_send,
                last_reply,
                replies,
                latency,
            }),
            _ => Err(Failure::new("internal error: no send or reply was timed")),
        }
    }

    /// Shuts every connection down and gives the threads a moment to end (they are not
    /// joined: one that does not end dies with the driver).
    fn stop(&self, failure: Failure, inbox: &mpsc::Receiver<Report>) -> Failure {
        self.abort();
        let until = Instant::now() + WIND_DOWN;
        while inbox
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .is_ok()
        {}
        failure
    }

    /// Which connections had not finished, for the timeout message.
    fn stragglers(&self, plan: &Plan) -> String {
        let expected = plan.warmup + plan.messages;
        let behind: Vec<String> = self
            .shared
            .progress
            .iter()
            .enumerate()
            .filter_map(|(client, p)| {
                let (sent, received) = (
                    p.sent.load(Ordering::Relaxed),
                    p.received.load(Ordering::Relaxed),
                );
                (received < expected).then(|| {
                    format!("client {client} sent {sent} and got {received} replies of {expected}")
                })
            })
            .collect();
        match behind.len() {
            0 => "every reply arrived, but a session did not end (no END and no end of file)"
                .to_string(),
            n if n <= 4 => behind.join("; "),
            n => format!("{}; and {} more clients", behind[..4].join("; "), n - 4),
        }
    }
}

fn earliest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn latest(a: Option<Instant>, b: Option<Instant>) -> Option<Instant> {
    match (a, b) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    #[test]
    fn frames_per_write_fill_the_budget_with_whole_frames() {
        assert_eq!(frames_per_write(0, 4096), 1);
        assert_eq!(frames_per_write(65536, 4096), 15); // 15 × 4105 = 61575
        assert_eq!(frames_per_write(65536, 64), 512); // 897 would fit; IOV_MAX allows 512
        assert_eq!(frames_per_write(65536, 1 << 20), 1);
        assert_eq!(frames_per_write(1, 0), 1);
    }

    #[test]
    fn vectored_writes_survive_partial_writes() {
        // 800 kB is more than a loopback socket takes at once: writev returns short counts.
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let mut client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let tape = Tape::new(100_000);
        let header = encode_header(0, 100_000);
        let reader = thread::spawn(move || {
            let mut all = Vec::new();
            server.read_to_end(&mut all).unwrap();
            all
        });
        let mut slices: Vec<IoSlice> = (0..8)
            .flat_map(|m| [IoSlice::new(&header), IoSlice::new(tape.body(0, m))])
            .collect();
        write_all_vectored(&mut client, &mut slices).unwrap();
        drop(client);
        let all = reader.join().unwrap();
        let mut replies_to_check = all.clone();
        for frame in replies_to_check.chunks_mut(HEADER_LEN + 100_000) {
            frame[0] = crate::frame::REPLY;
        }
        let mut replies = Replies::new(&tape, 0, 8);
        replies.feed(&replies_to_check).unwrap();
        replies.eof().unwrap();
        assert_eq!(all.len(), 8 * (HEADER_LEN + 100_000));
    }
}
