//! `--mode faithful` and `--mode batched`: the seed's loop done as it meant (SPEC §8 `bench`),
//! by the driver. One socket on the driver's address and port 3610 (peers answer there, SPEC
//! §2); each iteration is 12 one-property Gets of the node profile, each awaited (faithful),
//! or one Get of all 12 (batched). Every reply is checked byte for byte; warm-up iterations
//! run first and are not recorded.

use crate::expected::Exchange;
use crate::requester::Requester;
use crate::socket::Outcome;
use driver_kit::error::Result;
use driver_kit::percentiles::{nanos, new_histogram};
use std::time::Duration;

pub struct Plan {
    /// The requests of one iteration, in order.
    pub exchanges: Vec<Exchange>,
    pub iterations: u64,
    pub warmup: u64,
}

pub fn run(requester: &mut Requester, plan: &Plan) -> Result<Outcome> {
    let per_iteration = plan.exchanges.len() as u64;
    for i in 0..plan.warmup {
        for exchange in &plan.exchanges {
            requester.request(exchange).map_err(|f| {
                f.context(format!("warm-up iteration {} of {}", i + 1, plan.warmup))
            })?;
        }
    }
    let warmup_tally = std::mem::take(&mut requester.tally);
    let mut latency = new_histogram()?;
    let mut span = None;
    for i in 0..plan.iterations {
        for exchange in &plan.exchanges {
            let trip = requester.request(exchange).map_err(|f| {
                f.context(format!(
                    "measured iteration {} of {}",
                    i + 1,
                    plan.iterations
                ))
            })?;
            latency.saturating_record(nanos(trip.replied - trip.sent));
            let (first, _) = span.unwrap_or((trip.sent, trip.replied));
            span = Some((first, trip.replied));
        }
    }
    let requests = plan.iterations * per_iteration;
    let answered = (plan.warmup + plan.iterations) * per_iteration;
    let measured = requester.tally;
    Ok(Outcome {
        elapsed: span.map_or(Duration::ZERO, |(first, last)| last - first),
        latency,
        requests,
        measured,
        answered,
        sent: answered + warmup_tally.retries + measured.retries,
    })
}
