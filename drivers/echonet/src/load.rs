//! `--mode load`: N concurrent controllers, each with one request outstanding, cycling through
//! the node profile's 12 one-property Gets; one thread multiplexes their sockets (epoll, mio).
//! Every reply is matched by TID, source and ESV, and checked byte for byte.
//!
//! Each controller has a socket of its own on the driver's address with an ephemeral port: N
//! controllers on one address cannot all own port 3610, and a node replies to the request's
//! source port (SPEC §2, §6), so the port tells whose reply it is. The warm-up requests run
//! first, then the measured ones; each phase ends when its last reply is in.

use crate::expected::Exchange;
use crate::frame::{self, Tids, MAX_DATAGRAM};
use crate::socket::{send_failure, Outcome, Patience, Tally};
use driver_kit::error::{Failure, Result};
use driver_kit::percentiles::{nanos, new_histogram};
use hdrhistogram::Histogram;
use mio::net::UdpSocket;
use mio::{Events, Interest, Poll, Token};
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::Instant;

pub struct Plan {
    pub controllers: u64,
    pub warmup: u64,
    pub requests: u64,
    /// The driver's address: every controller's socket binds there.
    pub ctl: Ipv4Addr,
    pub node: SocketAddrV4,
    pub patience: Patience,
    /// The 12 one-property Gets.
    pub exchanges: Vec<Exchange>,
}

struct Controller {
    socket: UdpSocket,
    /// The request outstanding, TID set.
    out: Vec<u8>,
    tid: u16,
    /// Index in the plan's exchanges of the request outstanding; the next one follows it.
    current: usize,
    busy: bool,
    first_sent: Instant,
    attempt_end: Instant,
    /// Attempts of the request outstanding so far.
    attempts: u32,
    /// The last failed send of the request outstanding.
    send_error: Option<io::Error>,
}

struct Engine<'a> {
    plan: &'a Plan,
    poll: Poll,
    controllers: Vec<Controller>,
    tids: Tids,
    buf: Vec<u8>,
    tally: Tally,
    answered: u64,
    sent: u64,
}

/// One phase's progress.
struct Phase {
    count: u64,
    issued: u64,
    done: u64,
    first_sent: Option<Instant>,
    last_reply: Option<Instant>,
}

pub fn run(plan: &Plan) -> Result<Outcome> {
    let poll = Poll::new().map_err(|e| Failure::new(format!("epoll: {e}")))?;
    let mut controllers = Vec::new();
    for c in 0..plan.controllers {
        let bound = std::net::UdpSocket::bind((plan.ctl, 0))
            .and_then(|s| s.set_nonblocking(true).map(|()| s))
            .map_err(|e| {
                Failure::new(format!(
                    "controller {c}: binding a socket to {}: {e}",
                    plan.ctl
                ))
            })?;
        let mut socket = UdpSocket::from_std(bound);
        poll.registry()
            .register(&mut socket, Token(c as usize), Interest::READABLE)
            .map_err(|e| Failure::new(format!("controller {c}: epoll_ctl: {e}")))?;
        let now = Instant::now();
        let gets = plan.exchanges.len().max(1);
        controllers.push(Controller {
            socket,
            out: Vec::new(),
            tid: 0,
            // Controller c asks for property c first (the index is advanced before each
            // request), so the mix of properties is even at any moment.
            current: (c as usize + gets - 1) % gets,
            busy: false,
            first_sent: now,
            attempt_end: now,
            attempts: 0,
            send_error: None,
        });
    }
    let mut engine = Engine {
        plan,
        poll,
        controllers,
        tids: Tids::new(),
        buf: vec![0; MAX_DATAGRAM],
        tally: Tally::default(),
        answered: 0,
        sent: 0,
    };
    engine
        .phase(plan.warmup, None)
        .map_err(|f| f.context("warm-up"))?;
    engine.tally = Tally::default();
    let mut latency = new_histogram()?;
    let (first, last) = engine
        .phase(plan.requests, Some(&mut latency))
        .map_err(|f| f.context("measured requests"))?;
    Ok(Outcome {
        elapsed: last.saturating_duration_since(first),
        latency,
        requests: plan.requests,
        measured: engine.tally,
        answered: engine.answered,
        sent: engine.sent,
    })
}

impl Engine<'_> {
    /// Runs `count` requests over the controllers; returns the first send and the last reply.
    fn phase(
        &mut self,
        count: u64,
        mut latency: Option<&mut Histogram<u64>>,
    ) -> Result<(Instant, Instant)> {
        let now = Instant::now();
        let mut phase = Phase {
            count,
            issued: 0,
            done: 0,
            first_sent: None,
            last_reply: None,
        };
        for c in 0..self.controllers.len() {
            if phase.issued == count {
                break;
            }
            self.start_next(c, &mut phase)?;
        }
        let mut events = Events::with_capacity(self.controllers.len().max(1));
        while phase.done < count {
            let now = Instant::now();
            if now >= self.plan.patience.deadline {
                return Err(Failure::new(format!(
                    "--timeout-s ran out: {} of {count} requests answered",
                    phase.done
                )));
            }
            let next_timer = self
                .controllers
                .iter()
                .filter(|c| c.busy)
                .map(|c| c.attempt_end)
                .min()
                .unwrap_or(self.plan.patience.deadline)
                .min(self.plan.patience.deadline);
            match self
                .poll
                .poll(&mut events, Some(next_timer.saturating_duration_since(now)))
            {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(Failure::new(format!("epoll_wait: {e}"))),
            }
            for event in events.iter() {
                self.drain(event.token().0, &mut phase, latency.as_deref_mut())?;
            }
            self.resend_overdue()?;
        }
        Ok((
            phase.first_sent.unwrap_or(now),
            phase.last_reply.unwrap_or(now),
        ))
    }

    /// Controller `c` sends the request after its last one, with a fresh TID.
    fn start_next(&mut self, c: usize, phase: &mut Phase) -> Result<()> {
        let exchanges = &self.plan.exchanges;
        let tid = self.tids.next_tid();
        let controller = &mut self.controllers[c];
        controller.current = (controller.current + 1) % exchanges.len();
        controller.out.clear();
        controller
            .out
            .extend_from_slice(&exchanges[controller.current].request);
        frame::set_tid(&mut controller.out, tid);
        controller.tid = tid;
        controller.busy = true;
        controller.attempts = 0;
        controller.first_sent = Instant::now();
        phase.first_sent.get_or_insert(controller.first_sent);
        controller.send_error = None;
        phase.issued += 1;
        self.send(c);
        Ok(())
    }

    /// One attempt of controller `c`'s outstanding request.
    fn send(&mut self, c: usize) {
        let node = self.plan.node;
        let timeout = self.plan.patience.timeout;
        let controller = &mut self.controllers[c];
        controller.attempts += 1;
        self.sent += 1;
        // A failed send (a full buffer, a firewall's drop on output) is a lost datagram: the
        // attempt's timer resends it. mio's send_to does not retry EINTR; the timer does.
        if let Err(e) = controller
            .socket
            .send_to(&controller.out, SocketAddr::V4(node))
        {
            controller.send_error = Some(e);
        }
        controller.attempt_end = Instant::now() + timeout;
    }

    /// Reads every datagram controller `c`'s socket holds (epoll is edge-triggered).
    fn drain(
        &mut self,
        c: usize,
        phase: &mut Phase,
        mut latency: Option<&mut Histogram<u64>>,
    ) -> Result<()> {
        loop {
            let (n, from) = match self.controllers[c].socket.recv_from(&mut self.buf) {
                Ok(got) => got,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                // A signal, or an ICMP error of an earlier send: neither ends the load.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionRefused
                    ) =>
                {
                    continue
                }
                Err(e) => return Err(Failure::new(format!("controller {c}: receiving: {e}"))),
            };
            let at = Instant::now();
            let plan = self.plan;
            let node = plan.node;
            let controller = &self.controllers[c];
            let datagram = &self.buf[..n];
            let is_reply = controller.busy
                && from.ip() == *node.ip()
                && frame::tid_and_esv(datagram)
                    .is_some_and(|(tid, esv)| tid == controller.tid && frame::answers_get(esv));
            if !is_reply {
                self.tally.ignored += 1;
                continue;
            }
            let exchange = &plan.exchanges[controller.current];
            let tid = controller.tid;
            if from != SocketAddr::V4(node) {
                return Err(Failure::new(format!(
                    "controller {c}: the reply to {} (TID 0x{tid:04X}) came from {from}, not \
                     from the node's port {} (SPEC §2: a node replies from its socket)",
                    exchange.what,
                    node.port()
                )));
            }
            exchange.check(tid, datagram).map_err(|why| {
                Failure::new(format!(
                    "controller {c}: the reply to {} (TID 0x{tid:04X}) from {node} is wrong: \
                     {why}",
                    exchange.what
                ))
            })?;
            if let Some(h) = latency.as_deref_mut() {
                h.saturating_record(nanos(at - controller.first_sent));
            }
            self.controllers[c].busy = false;
            self.answered += 1;
            phase.done += 1;
            phase.last_reply = Some(at);
            if phase.issued < phase.count {
                self.start_next(c, phase)?;
            }
        }
    }

    /// Resends every request whose attempt is over; fails on one out of attempts.
    fn resend_overdue(&mut self) -> Result<()> {
        let now = Instant::now();
        let patience = self.plan.patience;
        for c in 0..self.controllers.len() {
            let controller = &self.controllers[c];
            if !controller.busy || controller.attempt_end > now {
                continue;
            }
            if controller.attempts > patience.retries {
                let exchange = &self.plan.exchanges[controller.current];
                return Err(Failure::new(format!(
                    "controller {c}: {} (TID 0x{:04X}) to {}: no reply after {}{}",
                    exchange.what,
                    controller.tid,
                    self.plan.node,
                    patience.describe(),
                    send_failure(controller.send_error.as_ref())
                )));
            }
            self.tally.retries += 1;
            self.send(c);
        }
        Ok(())
    }
}
