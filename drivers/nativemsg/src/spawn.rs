//! Spawn mode (`runtime.sendNativeMessage`): one host per operation. Each operation is timed
//! from just before the spawn to the moment the host has been reaped: start, one request,
//! the reply, stdin closed, exit.
//!
//! The hosts' CPU time is wait4's rusage of each reaped host, summed (µs each): a host's
//! process CPU clock cannot be read once it has exited, and reading it just before would put
//! a system call inside the timed operation.

use crate::check::Checker;
use crate::frame::{ReplyBuf, Trailing};
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
    let mut totals = HostTotals::new(CpuClock::Wait4Rusage);
    if trial.warmup == 0 {
        totals.peak_rss.not_read(
            "spawn mode reads the hosts' VmHWM during the warm-up spawns only, and --warmup is 0",
        );
    }

    let mut measured_from = Instant::now();
    for index in 0..trial.warmup + trial.iterations {
        if index == trial.warmup {
            checker.start_measuring();
            measured_from = Instant::now();
        }
        trial.request.set_seq(index);

        let started = Instant::now();
        let mut host = trial
            .launcher
            .spawn()
            .map_err(|f| f.context(trial.label(index)))?;
        let exchanged = host
            .write_all(trial.request.frame(), deadline)
            .and_then(|()| {
                // The browser takes the first reply and ignores anything after it.
                reply.read_frame(|buf| host.read_some(buf, deadline), Trailing::Ignore)
            });
        if let Err(failure) = exchanged {
            return Err(host.fail(failure.context(trial.label(index)), deadline));
        }
        if index < trial.warmup {
            // The host's peak RSS, read while it is alive and has replied (every host does
            // the same work). Only the warm-up hosts are read, so that no timed spawn carries
            // the procfs read.
            totals.peak_rss.record(host.peak_rss_kb());
        }
        host.close_pipes();
        let exit = host
            .reap(deadline)
            .map_err(|f| f.context(trial.label(index)))?;
        let took = started.elapsed();

        totals.add(&exit);
        if !exit.success() {
            return Err(Failure::new(format!(
                "{}: after replying and seeing EOF, the host {} instead of exiting with status 0",
                trial.label(index),
                exit.describe()
            )));
        }
        if index >= trial.warmup {
            latency.saturating_record(nanos(took));
        }
        checker
            .check(reply.body(), &mut trial.request)
            .map_err(|f| f.context(trial.label(index)))?;
    }
    let elapsed = measured_from
        .elapsed()
        .saturating_sub(checker.full_check_time());

    Ok(Measurement {
        ops: trial.iterations,
        elapsed,
        latency,
        host: totals,
        checked: checker.counts(),
    })
}
