//! The listener: one thread accepting connections, and a pool of worker threads that run the
//! per-connection handlers.
//!
//! Each worker owns a `mio::Poll` (epoll) event loop and every connection handed to it, so a
//! worker serves all of its connections at once; the listener hands each accepted socket to
//! the worker with the fewest live connections, round-robin among equals (a channel per
//! worker, and the worker's `Waker` to tell it), so churn does not pile sessions onto one.
//! This keeps the seed's shape — a listener and a `--pool` of handler threads — without its
//! limit of one session per pool thread: 16 clients on a pool of 8 are all served together.
//! A connection never moves between workers, so no lock is taken on the echo path.
//!
//! Shutdown: [`Stopper::stop`] sets a shared flag and wakes the listener, which drops the
//! listening socket (no more accepts) and wakes every worker; each worker returns, dropping
//! (closing) its connections, and [`Listener::run`] returns once all have been joined.

use crate::handler::{Connection, Status};
use mio::net::{TcpListener, TcpStream};
use mio::{Events, Interest, Poll, Token, Waker};
use slab::Slab;
use std::collections::VecDeque;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Server settings (the command line's `--pool` and `--max-body`).
#[derive(Clone, Copy, Debug)]
pub struct Config {
    pub pool: usize,
    pub max_body: u64,
}

/// Pending connections the kernel queues for us: the sweep-clients scenario connects 256
/// clients at once.
const BACKLOG: i32 = 4096;
/// How long a connection that answered `END` waits for its peer to close.
const LINGER: Duration = Duration::from_secs(5);
/// After a failed accept for lack of descriptors, try again this soon.
const ACCEPT_RETRY: Duration = Duration::from_millis(50);

const LISTENER: Token = Token(0);
const WAKE: Token = Token(usize::MAX);

/// Stops a running [`Listener`] from any thread (a signal handler thread, a test).
#[derive(Clone)]
pub struct Stopper {
    flag: Arc<AtomicBool>,
    waker: Arc<Waker>,
}

impl Stopper {
    pub fn stop(&self) {
        self.flag.store(true, Ordering::SeqCst);
        // A failed wake leaves nothing better to do; the flag is also checked on every event.
        let _ = self.waker.wake();
    }
}

struct WorkerHandle {
    queue: mpsc::Sender<(TcpStream, SocketAddr)>,
    waker: Arc<Waker>,
    /// Connections handed to the worker and not yet closed by it.
    live: Arc<AtomicUsize>,
    thread: JoinHandle<()>,
}

pub struct Listener {
    poll: Poll,
    socket: TcpListener,
    workers: Vec<WorkerHandle>,
    stopper: Stopper,
}

/// A listening socket on `addr` with `SO_REUSEADDR` and a deep backlog.
fn listen(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

impl Listener {
    /// Binds `addr` and starts the worker pool (which idles until connections arrive).
    pub fn bind(addr: SocketAddr, config: Config) -> io::Result<Listener> {
        let poll = Poll::new()?;
        let mut socket = TcpListener::from_std(listen(addr)?);
        poll.registry()
            .register(&mut socket, LISTENER, Interest::READABLE)?;
        let stopper = Stopper {
            flag: Arc::new(AtomicBool::new(false)),
            waker: Arc::new(Waker::new(poll.registry(), WAKE)?),
        };
        let mut workers = Vec::with_capacity(config.pool.max(1));
        for id in 0..config.pool.max(1) {
            workers.push(spawn_worker(
                id,
                config.max_body,
                Arc::clone(&stopper.flag),
            )?);
        }
        Ok(Listener {
            poll,
            socket,
            workers,
            stopper,
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.socket.local_addr()
    }

    pub fn stopper(&self) -> Stopper {
        self.stopper.clone()
    }

    /// Accepts connections until stopped, then stops the workers and waits for them.
    pub fn run(mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(64);
        let mut next = 0usize;
        let mut to_wake = vec![false; self.workers.len()];
        let mut retry: Option<Duration> = None;
        let result = loop {
            if let Err(e) = self.poll.poll(&mut events, retry) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                break Err(e);
            }
            if self.stopper.flag.load(Ordering::SeqCst) {
                break Ok(());
            }
            retry = None;
            // Edge-triggered: accept until the queue is empty.
            loop {
                match self.socket.accept() {
                    Ok((stream, peer)) => {
                        // Replies are whole batches already; do not let Nagle hold them.
                        if let Err(e) = stream.set_nodelay(true) {
                            eprintln!("comm-rust-server: {peer}: TCP_NODELAY: {e}; refused");
                            continue;
                        }
                        let i = least_loaded(&self.workers, next);
                        let w = &self.workers[i];
                        w.live.fetch_add(1, Ordering::Relaxed);
                        if w.queue.send((stream, peer)).is_err() {
                            w.live.fetch_sub(1, Ordering::Relaxed);
                            eprintln!("comm-rust-server: worker {i} is gone; {peer} refused");
                        }
                        to_wake[i] = true;
                        next = (i + 1) % self.workers.len();
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                    Err(e)
                        if e.kind() == io::ErrorKind::Interrupted
                            || e.kind() == io::ErrorKind::ConnectionAborted =>
                    {
                        continue
                    }
                    Err(e) => {
                        // Out of descriptors (EMFILE/ENFILE) or memory: the connection stays
                        // in the backlog; no new edge will come for it, so poll again soon.
                        eprintln!("comm-rust-server: accept: {e}; retrying");
                        retry = Some(ACCEPT_RETRY);
                        break;
                    }
                }
            }
            for (w, wake) in self.workers.iter().zip(to_wake.iter_mut()) {
                if std::mem::take(wake) {
                    // A worker that cannot be woken finds the socket on its next event.
                    let _ = w.waker.wake();
                }
            }
        };
        // Stop: no more accepts, then every worker closes its connections and returns.
        self.stopper.flag.store(true, Ordering::SeqCst);
        drop(self.socket);
        for w in &self.workers {
            let _ = w.waker.wake();
        }
        for w in self.workers {
            drop(w.queue);
            let _ = w.thread.join();
        }
        result
    }
}

/// The worker with the fewest live connections, searching from `start` so that ties rotate.
fn least_loaded(workers: &[WorkerHandle], start: usize) -> usize {
    (0..workers.len())
        .map(|k| (start + k) % workers.len())
        .min_by_key(|&i| workers[i].live.load(Ordering::Relaxed))
        .unwrap_or(0)
}

fn spawn_worker(id: usize, max_body: u64, stop: Arc<AtomicBool>) -> io::Result<WorkerHandle> {
    let poll = Poll::new()?;
    let waker = Arc::new(Waker::new(poll.registry(), WAKE)?);
    let (queue, incoming) = mpsc::channel();
    let live = Arc::new(AtomicUsize::new(0));
    let mut worker = Worker {
        poll,
        incoming,
        live: Arc::clone(&live),
        stop,
        max_body,
        conns: Slab::new(),
        next_serial: 0,
        more_input: Vec::new(),
        lingering: VecDeque::new(),
    };
    let thread = std::thread::Builder::new()
        .name(format!("comm-worker-{id}"))
        .spawn(move || worker.run())?;
    Ok(WorkerHandle {
        queue,
        waker,
        live,
        thread,
    })
}

struct Slot {
    conn: Connection,
    /// Distinguishes this connection from a later one in the same slab slot.
    serial: u64,
    lingering: bool,
    more_input: bool,
}

/// One pool thread: an event loop over the connections the listener handed it.
struct Worker {
    poll: Poll,
    incoming: mpsc::Receiver<(TcpStream, SocketAddr)>,
    live: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    max_body: u64,
    conns: Slab<Slot>,
    next_serial: u64,
    /// Connections whose read budget ran out with input possibly left.
    more_input: Vec<usize>,
    /// Connections lingering after `END`, oldest first: (slot, serial, deadline).
    lingering: VecDeque<(usize, u64, Instant)>,
}

impl Worker {
    fn run(&mut self) {
        let mut events = Events::with_capacity(1024);
        loop {
            let timeout = if !self.more_input.is_empty() {
                Some(Duration::ZERO)
            } else {
                self.lingering
                    .front()
                    .map(|&(_, _, deadline)| deadline.saturating_duration_since(Instant::now()))
            };
            if let Err(e) = self.poll.poll(&mut events, timeout) {
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                eprintln!("comm-rust-server: worker poll: {e}");
                return;
            }
            if self.stop.load(Ordering::SeqCst) {
                return; // dropping self.conns closes every connection
            }
            for event in events.iter() {
                if event.token() == WAKE {
                    self.adopt_new_connections();
                    continue;
                }
                let key = event.token().0;
                if let Some(slot) = self.conns.get_mut(key) {
                    slot.conn.ready(
                        event.is_readable(),
                        event.is_writable(),
                        event.is_read_closed() || event.is_error(),
                    );
                    self.drive(key);
                }
            }
            // Second helpings, after everyone with fresh events had a turn.
            for key in std::mem::take(&mut self.more_input) {
                if let Some(slot) = self.conns.get_mut(key) {
                    slot.more_input = false;
                    self.drive(key);
                }
            }
            self.expire_lingering();
        }
    }

    fn adopt_new_connections(&mut self) {
        while let Ok((stream, peer)) = self.incoming.try_recv() {
            let entry = self.conns.vacant_entry();
            let key = entry.key();
            let mut conn = Connection::new(stream, peer, self.max_body);
            // Both interests for good: edge-triggered, so writability is only reported when a
            // full send buffer drains, which is exactly when pending replies need it.
            if let Err(e) = self.poll.registry().register(
                conn.stream(),
                Token(key),
                Interest::READABLE | Interest::WRITABLE,
            ) {
                eprintln!("comm-rust-server: {peer}: cannot register: {e}; closed");
                self.live.fetch_sub(1, Ordering::Relaxed);
                continue;
            }
            self.next_serial += 1;
            entry.insert(Slot {
                conn,
                serial: self.next_serial,
                lingering: false,
                more_input: false,
            });
        }
    }

    fn drive(&mut self, key: usize) {
        let slot = &mut self.conns[key];
        match slot.conn.drive() {
            Status::Wait => {}
            Status::MoreInput => {
                if !slot.more_input {
                    slot.more_input = true;
                    self.more_input.push(key);
                }
            }
            Status::Lingering => {
                if !slot.lingering {
                    slot.lingering = true;
                    self.lingering
                        .push_back((key, slot.serial, Instant::now() + LINGER));
                }
            }
            Status::Close => {
                // Dropping the stream closes it, which also removes it from the epoll set.
                self.close(key);
            }
        }
    }

    fn expire_lingering(&mut self) {
        let now = Instant::now();
        while let Some(&(key, serial, deadline)) = self.lingering.front() {
            if deadline > now {
                break;
            }
            self.lingering.pop_front();
            if self.conns.get(key).is_some_and(|s| s.serial == serial) {
                self.close(key);
            }
        }
    }

    fn close(&mut self, key: usize) {
        self.conns.remove(key);
        self.live.fetch_sub(1, Ordering::Relaxed);
    }
}
