//! Persistent mode (`runtime.connectNative`): one host for the whole trial. Each operation is
//! timed from just before the request is written to the moment the whole reply is in.
//!
//! The host's CPU time is read from its process CPU clock (ns) after its last reply and just
//! before its stdin is closed: the span is the host's life from its exec to its last reply
//! (start-up, warm-up and measured operations); the exit after EOF is outside it.

use crate::check::Checker;
use crate::frame::{ReplyBuf, Trailing};
use crate::host::Host;
use crate::trial::{HostTotals, Measurement, Trial};
use driver_kit::clock::CpuClock;
use driver_kit::error::{Failure, Result};
use driver_kit::percentiles::{nanos, new_histogram};
use std::time::Instant;

pub fn run(trial: &mut Trial) -> Result<Measurement> {
    let deadline = trial.deadline;
    let mut latency = new_histogram()?;
    let mut reply = ReplyBuf::new();
    let mut checker = Checker::new(trial.check_full);
    let mut host = trial.launcher.spawn()?;

    let mut measured_from = Instant::now();
    for index in 0..trial.warmup + trial.iterations {
        if index == trial.warmup {
            checker.start_measuring();
            measured_from = Instant::now();
        }
        trial.request.set_seq(index);

        let started = Instant::now();
        let exchanged = round_trip(&mut host, &mut reply, trial.request.frame(), deadline);
        let took = started.elapsed();

        if let Err(failure) = exchanged {
            return Err(host.fail(failure.context(trial.label(index)), deadline));
        }
        if index >= trial.warmup {
            latency.saturating_record(nanos(took));
        }
        if let Err(failure) = checker.check(reply.body(), &mut trial.request) {
            return Err(host.fail(failure.context(trial.label(index)), deadline));
        }
    }
    // Full reply checks are not part of the closed loop a browser would run.
    let elapsed = measured_from
        .elapsed()
        .saturating_sub(checker.full_check_time());

    // The host's CPU time and peak RSS, read while it is still alive, with all its work done
    // and outside the timed loop.
    let cpu = host.cpu_time().map_err(|f| host.fail(f, deadline))?;
    let peak_rss = host.peak_rss_kb();

    // Disconnect as the browser does; a correct host sees EOF at a frame boundary and exits 0.
    host.close_pipes();
    let exit = host.reap(deadline)?;
    if !exit.success() {
        return Err(Failure::new(format!(
            "after the last reply, when its stdin was closed, the host {} instead of exiting \
             with status 0",
            exit.describe()
        )));
    }
    let mut totals = HostTotals::new(CpuClock::ProcessCpuClock);
    totals.add(&exit);
    totals.cpu = cpu;
    totals.peak_rss.record(peak_rss);
    Ok(Measurement {
        ops: trial.iterations,
        elapsed,
        latency,
        host: totals,
        checked: checker.counts(),
    })
}

/// One request written with one write, one reply frame read (nothing after it allowed).
fn round_trip(
    host: &mut Host,
    reply: &mut ReplyBuf,
    request: &[u8],
    deadline: Instant,
) -> Result<()> {
    host.write_all(request, deadline)?;
    reply.read_frame(|buf| host.read_some(buf, deadline), Trailing::Reject)?;
    Ok(())
}
