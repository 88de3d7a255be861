//! The event loop: one thread, one `mio::Poll` (epoll), every client served in turn.
//!
//! Why this shape: the harness pins the server to one CPU, so threads would only take turns
//! on it, and every cross-thread hand-off (a runtime's task queue, a lock around the
//! keyspace) would be pure overhead. A single loop that owns the keyspace outright, like
//! redis's `ae`, needs no synchronisation at all; `mio` supplies safe epoll and non-blocking
//! sockets and nothing more.
//!
//! Each turn: wait for events (at most until the next expiry cycle), then for each ready
//! client read once, execute every whole request read, and write the replies with one
//! `write`. The read buffer and the output buffer are the loop's, shared by every client (see
//! `connection` for what a client keeps of its own). mio registers sockets edge-triggered: an event means "new bytes arrived", so a
//! client must be read until the kernel has nothing left or it will not be reported again.
//! Reading everything at once would let one client with a deep pipeline monopolise the
//! loop, so each client gets one read of at most `READ_SIZE` per turn, and a client whose read
//! filled the buffer (it may have more) is put on `more_input` and served again next turn,
//! after everyone else who is ready: a bounded amount of work per client per turn, as redis
//! does with its 16 KiB reads. A read shorter than the buffer means the socket is drained
//! (TCP delivers everything available), which saves the extra `read` returning EAGAIN.

use crate::connection::{Connection, Status};
use crate::protocol::reply::Out;
use crate::store::Store;
use mio::net::TcpListener;
use mio::{Events, Interest, Poll, Token};
use slab::Slab;
use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const LISTENER: Token = Token(usize::MAX);
/// One read per client per turn, into the loop's shared buffer.
const READ_SIZE: usize = 64 * 1024;
/// How often the active expiry cycle runs (redis's default `hz 10`).
const EXPIRE_PERIOD: Duration = Duration::from_millis(100);
/// CPU time one expiry cycle may take (redis allows 25% of the period).
const EXPIRE_BUDGET: Duration = Duration::from_millis(25);

pub struct Server {
    poll: Poll,
    listener: TcpListener,
    conns: Slab<Connection>,
    store: Store,
    /// The shared read buffer (allocated and zeroed once).
    read_buf: Vec<u8>,
    /// The shared output buffer: the replies of the batch being served.
    out: Out,
    /// Clients whose last read filled `read_buf`: serve them again next turn.
    more_input: Vec<usize>,
    next_client_id: u64,
    shutdown: Arc<AtomicBool>,
}

fn unix_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

impl Server {
    pub fn new(
        listener: std::net::TcpListener,
        port: u16,
        shutdown: Arc<AtomicBool>,
    ) -> io::Result<Server> {
        let poll = Poll::new()?;
        let mut listener = TcpListener::from_std(listener);
        poll.registry()
            .register(&mut listener, LISTENER, Interest::READABLE)?;
        let mut store = Store::default();
        store.stats.port = port;
        store.stats.start_unix = unix_ms() / 1000;
        Ok(Server {
            poll,
            listener,
            conns: Slab::with_capacity(1024),
            store,
            read_buf: vec![0; READ_SIZE],
            out: Out::default(),
            more_input: Vec::new(),
            next_client_id: 1,
            shutdown,
        })
    }

    /// Serves until SIGTERM/SIGINT sets the shutdown flag.
    pub fn run(&mut self) -> io::Result<()> {
        let mut events = Events::with_capacity(1024);
        // `clock` is read once per turn, after the turn's work: it decides whether the expiry
        // cycle is due, and how long the next wait may be.
        let mut clock = Instant::now();
        let mut next_expire = clock + EXPIRE_PERIOD;
        let mut again: Vec<usize> = Vec::new();
        while !self.shutdown.load(Ordering::Relaxed) {
            let timeout = if self.more_input.is_empty() {
                next_expire.saturating_duration_since(clock)
            } else {
                Duration::ZERO
            };
            match self.poll.poll(&mut events, Some(timeout)) {
                Ok(()) => {}
                // A signal (SIGTERM) interrupts epoll_wait: loop to check the flag.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {
                    clock = Instant::now();
                    continue;
                }
                Err(e) => return Err(e),
            }
            let now = unix_ms();
            std::mem::swap(&mut again, &mut self.more_input);
            for event in events.iter() {
                match event.token() {
                    LISTENER => self.accept(),
                    Token(key) => {
                        let closed = event.is_read_closed() || event.is_error();
                        if event.is_readable() || closed {
                            self.on_readable(key, now, closed);
                        }
                        if event.is_writable() {
                            self.on_writable(key);
                        }
                    }
                }
            }
            for key in again.drain(..) {
                self.on_readable(key, now, false);
            }
            clock = Instant::now();
            if clock >= next_expire {
                self.store.active_expire(unix_ms(), EXPIRE_BUDGET);
                clock = Instant::now();
                next_expire = clock + EXPIRE_PERIOD;
            }
        }
        Ok(())
    }

    fn accept(&mut self) {
        loop {
            match self.listener.accept() {
                Ok((mut stream, _)) => {
                    // Replies must leave at once: Nagle's algorithm would hold a pipelined
                    // batch's reply back until the previous one is acknowledged.
                    let _ = stream.set_nodelay(true);
                    let entry = self.conns.vacant_entry();
                    let key = entry.key();
                    // Writability is only watched while output is pending (see
                    // `update_interest`): with edge triggering, a socket registered for it
                    // would report every ACK that frees send-buffer space.
                    let interest = Interest::READABLE;
                    if self
                        .poll
                        .registry()
                        .register(&mut stream, Token(key), interest)
                        .is_err()
                    {
                        continue;
                    }
                    entry.insert(Connection::new(stream, self.next_client_id));
                    self.next_client_id += 1;
                    self.store.stats.connected_clients += 1;
                    self.store.stats.total_connections += 1;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                // EMFILE and friends: leave the rest in the backlog for the next turn.
                Err(_) => return,
            }
        }
    }

    /// One read from a client, then its requests, then one write of the replies.
    /// `closed`: the event also said the peer closed (FIN or RST). Epoll is edge-triggered, so
    /// after a read that took the last bytes no new event will come for that close: the client
    /// goes on `more_input`, and next turn's read sees the end and closes it. (Without this, a
    /// client that sent part of a request and closed kept its socket forever: found by the soak.)
    fn on_readable(&mut self, key: usize, now: i64, closed: bool) {
        let Some(conn) = self.conns.get_mut(key) else {
            return;
        };
        let n = loop {
            match conn.stream.read(&mut self.read_buf) {
                Ok(0) => return self.close(key),
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return self.close(key),
            }
        };
        if (n == self.read_buf.len() || closed) && !self.more_input.contains(&key) {
            self.more_input.push(key);
        }
        let status = match conn.serve(&self.read_buf[..n], &mut self.store, now, &mut self.out) {
            Status::Open => conn.send(&mut self.out),
            Status::Close => {
                // Over the output limit: drop the replies, and the buffer that grew for them.
                self.out = Out::default();
                Status::Close
            }
        };
        if status == Status::Close {
            return self.close(key);
        }
        self.update_interest(key);
    }

    fn on_writable(&mut self, key: usize) {
        if let Some(conn) = self.conns.get_mut(key) {
            if conn.flush() == Status::Close {
                return self.close(key);
            }
            self.update_interest(key);
        }
    }

    /// Watches writability exactly while the client has output the socket did not take,
    /// as redis installs its write handler only then.
    fn update_interest(&mut self, key: usize) {
        let Some(conn) = self.conns.get_mut(key) else {
            return;
        };
        let want = conn.has_pending_output();
        if want != conn.watching_writable {
            let interest = if want {
                Interest::READABLE | Interest::WRITABLE
            } else {
                Interest::READABLE
            };
            if self
                .poll
                .registry()
                .reregister(&mut conn.stream, Token(key), interest)
                .is_err()
            {
                return self.close(key);
            }
            conn.watching_writable = want;
        }
    }

    /// Drops the connection. Closing the socket also removes it from epoll (it is never
    /// duplicated), so no `epoll_ctl` call is spent on it: every redis-benchmark test
    /// reconnects all its clients, and close is on that path.
    fn close(&mut self, key: usize) {
        if self.conns.try_remove(key).is_some() {
            self.store.stats.connected_clients -= 1;
            self.more_input.retain(|&k| k != key);
        }
    }
}
