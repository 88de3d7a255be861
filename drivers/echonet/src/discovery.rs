//! `--mode discovery`: multicast discovery of every node (SPEC §6), round after round. Each
//! round multicasts a Get of 0xD6 (self-node instance list) to the node profile at
//! 224.0.23.0, with a fresh TID, from the driver's socket (IP_MULTICAST_IF = its address, TTL
//! 1, loop on); every node answers by unicast. A round is done when every node has answered
//! with the right bytes; its time runs from the first send to the last node's answer.
//! Unanswered, the same datagram is sent again after each attempt's timeout.

use crate::expected::Exchange;
use crate::frame::{self, Tids, MULTICAST_GROUP};
use crate::socket::{send_failure, ControllerSocket, Outcome, Patience, Tally};
use driver_kit::error::{Failure, Result};
use driver_kit::percentiles::{nanos, new_histogram};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::time::{Duration, Instant};

pub struct Plan {
    pub rounds: u64,
    pub warmup: u64,
    pub nodes: Vec<Ipv4Addr>,
    pub port: u16,
    pub patience: Patience,
    /// The Get of 0xD6 and its answer (the same from every node).
    pub exchange: Exchange,
}

pub fn run(socket: &mut ControllerSocket, plan: &Plan) -> Result<Outcome> {
    let group = SocketAddrV4::new(MULTICAST_GROUP, plan.port);
    let mut tids = Tids::new();
    let mut out = plan.exchange.request.clone();
    let mut answered = vec![false; plan.nodes.len()];
    let mut latency = new_histogram()?;
    let mut tally = Tally::default();
    let mut span = None;
    let mut sent = 0;
    for round in 0..plan.warmup + plan.rounds {
        let measured = round >= plan.warmup;
        if round == plan.warmup {
            tally = Tally::default();
        }
        let which = match measured {
            true => format!("round {} of {}", round - plan.warmup + 1, plan.rounds),
            false => format!("warm-up round {} of {}", round + 1, plan.warmup),
        };
        let tid = tids.next_tid();
        frame::set_tid(&mut out, tid);
        answered.fill(false);
        let mut left = plan.nodes.len();
        let first_sent = Instant::now();
        let mut last_answer = first_sent;
        let mut send_error = None;
        'attempts: for attempt in 0..=plan.patience.retries {
            let Some(wait) = plan.patience.attempt() else {
                return Err(Failure::new(format!(
                    "{which}: --timeout-s ran out with {left} of {} nodes silent",
                    plan.nodes.len()
                )));
            };
            if attempt > 0 {
                tally.retries += 1;
            }
            // A failed send is a lost datagram: this attempt waits, the next one resends.
            if let Err(e) = socket.send_to(&out, group) {
                send_error = Some(e);
            }
            sent += 1;
            let attempt_end = Instant::now() + wait;
            let mut wait = wait;
            while let Some(got) = socket.recv(wait)? {
                wait = attempt_end.saturating_duration_since(got.at);
                let node = plan.nodes.iter().position(|a| got.from.ip() == *a);
                let is_answer = frame::tid_and_esv(got.datagram)
                    .is_some_and(|(t, esv)| t == tid && frame::answers_get(esv));
                let Some(i) = node.filter(|&i| is_answer && !answered[i]) else {
                    // Another TID or source, or a node's duplicate.
                    tally.ignored += 1;
                    continue;
                };
                let from = SocketAddrV4::new(plan.nodes[i], plan.port);
                if got.from != SocketAddr::V4(from) {
                    return Err(Failure::new(format!(
                        "{which}: the answer (TID 0x{tid:04X}) of the node at {} came from \
                         {}, not from port {} (SPEC §2: a node replies from its socket)",
                        plan.nodes[i], got.from, plan.port
                    )));
                }
                plan.exchange.check(tid, got.datagram).map_err(|why| {
                    Failure::new(format!(
                        "{which}: the answer (TID 0x{tid:04X}) of the node at {} is wrong: \
                         {why}",
                        plan.nodes[i]
                    ))
                })?;
                answered[i] = true;
                last_answer = got.at;
                left -= 1;
                if left == 0 {
                    break 'attempts;
                }
            }
        }
        if left > 0 {
            let silent: Vec<String> = plan
                .nodes
                .iter()
                .zip(&answered)
                .filter(|(_, &done)| !done)
                .map(|(addr, _)| addr.to_string())
                .collect();
            return Err(Failure::new(format!(
                "{which}: no answer to the multicast Get of 0xD6 (TID 0x{tid:04X}) from {} \
                 after {}{}",
                silent.join(", "),
                plan.patience.describe(),
                send_failure(send_error.as_ref())
            )));
        }
        if measured {
            latency.saturating_record(nanos(last_answer - first_sent));
            let (first, _) = span.unwrap_or((first_sent, last_answer));
            span = Some((first, last_answer));
        }
    }
    Ok(Outcome {
        elapsed: span.map_or(Duration::ZERO, |(first, last)| last - first),
        latency,
        requests: plan.rounds,
        measured: tally,
        answered: plan.warmup + plan.rounds,
        sent,
    })
}
