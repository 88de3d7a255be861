//! One request to one node, awaited (SPEC §8): sent, resent after each unanswered attempt,
//! its reply matched by TID, source address and ESV among whatever else arrives, then checked
//! byte for byte. What arrives unmatched is ignored and counted.

use crate::expected::Exchange;
use crate::frame::{self, Tids};
use crate::socket::{send_failure, ControllerSocket, Patience, Tally};
use driver_kit::error::{Failure, Result};
use std::net::{SocketAddr, SocketAddrV4};
use std::time::Instant;

pub struct Requester {
    socket: ControllerSocket,
    node: SocketAddrV4,
    patience: Patience,
    tids: Tids,
    /// A request's datagram, TID set per send.
    out: Vec<u8>,
    pub tally: Tally,
}

/// When a request was first sent and when its reply came.
#[derive(Clone, Copy, Debug)]
pub struct RoundTrip {
    pub sent: Instant,
    pub replied: Instant,
}

impl Requester {
    pub fn new(socket: ControllerSocket, node: SocketAddrV4, patience: Patience) -> Self {
        Requester {
            socket,
            node,
            patience,
            tids: Tids::new(),
            out: Vec::new(),
            tally: Tally::default(),
        }
    }

    /// Sends `exchange`'s request with a fresh TID and waits for its reply: matched, checked,
    /// timed from the first send.
    pub fn request(&mut self, exchange: &Exchange) -> Result<RoundTrip> {
        let tid = self.tids.next_tid();
        self.out.clear();
        self.out.extend_from_slice(&exchange.request);
        frame::set_tid(&mut self.out, tid);
        let node = self.node;
        let sent = Instant::now();
        let mut send_error = None;
        for attempt in 0..=self.patience.retries {
            let Some(wait) = self.patience.attempt() else {
                return Err(Failure::new(format!(
                    "{} (TID 0x{tid:04X}) to {node}: --timeout-s ran out waiting for the reply",
                    exchange.what
                )));
            };
            if attempt > 0 {
                self.tally.retries += 1;
            }
            // A failed send is a lost datagram: this attempt waits, the next one resends.
            if let Err(e) = self.socket.send_to(&self.out, node) {
                send_error = Some(e);
            }
            let attempt_end = Instant::now() + wait;
            let mut wait = wait;
            while let Some(got) = self.socket.recv(wait)? {
                let is_reply = got.from.ip() == *node.ip()
                    && frame::tid_and_esv(got.datagram)
                        .is_some_and(|(t, esv)| t == tid && frame::answers_get(esv));
                if !is_reply {
                    self.tally.ignored += 1;
                    // The rest of this attempt's wait.
                    wait = attempt_end.saturating_duration_since(got.at);
                    continue;
                }
                if got.from != SocketAddr::V4(node) {
                    return Err(Failure::new(format!(
                        "the reply to {} (TID 0x{tid:04X}) came from {}, not from the node's \
                         port {} (SPEC §2: a node replies from its socket)",
                        exchange.what,
                        got.from,
                        node.port()
                    )));
                }
                exchange.check(tid, got.datagram).map_err(|why| {
                    Failure::new(format!(
                        "the reply to {} (TID 0x{tid:04X}) from {node} is wrong: {why}",
                        exchange.what
                    ))
                })?;
                return Ok(RoundTrip {
                    sent,
                    replied: got.at,
                });
            }
        }
        Err(Failure::new(format!(
            "{} (TID 0x{tid:04X}) to {node}: no reply after {}{}",
            exchange.what,
            self.patience.describe(),
            send_failure(send_error.as_ref())
        )))
    }
}
