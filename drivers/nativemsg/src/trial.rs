//! What a mode is given (a host to launch, a request, counts, a deadline) and what it hands
//! back to the report.

use crate::host::Launcher;
use crate::payload::Request;
use driver_kit::clock::CpuClock;
use driver_kit::process::Exit;
use hdrhistogram::Histogram;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

pub struct Trial {
    pub launcher: Launcher,
    pub request: Request,
    pub iterations: u64,
    pub warmup: u64,
    pub check_full: u64,
    /// Start + --timeout-s: every wait of the trial ends by then.
    pub deadline: Instant,
}

impl Trial {
    /// "op 17" or "warm-up op 3", for error messages (1-based, as people count).
    pub fn label(&self, index: u64) -> String {
        if index < self.warmup {
            format!("warm-up op {} of {}", index + 1, self.warmup)
        } else {
            format!("op {} of {}", index - self.warmup + 1, self.iterations)
        }
    }
}

pub struct Measurement {
    /// Measured operations (warm-up excluded).
    pub ops: u64,
    /// Closed-loop time of the measured operations, full reply checks excluded.
    pub elapsed: Duration,
    /// Nanoseconds per measured operation.
    pub latency: Histogram<u64>,
    pub host: HostTotals,
    /// (fully checked, length checked) measured replies.
    pub checked: (u64, u64),
}

/// The host processes' resource usage, warm-up included (they served it).
pub struct HostTotals {
    pub processes: u64,
    /// The hosts' CPU time, measured with `clock`.
    pub cpu: Duration,
    pub clock: CpuClock,
    pub peak_rss: PeakRss,
    pub exit_codes: BTreeSet<i32>,
}

impl HostTotals {
    pub fn new(clock: CpuClock) -> Self {
        HostTotals {
            processes: 0,
            cpu: Duration::ZERO,
            clock,
            peak_rss: PeakRss::default(),
            exit_codes: BTreeSet::new(),
        }
    }

    /// Adds a reaped host's exit status, and its CPU time when the hosts are measured by
    /// wait4 (its peak RSS is read before, while it is alive: [`PeakRss::record`]).
    pub fn add(&mut self, exit: &Exit) {
        self.processes += 1;
        if self.clock == CpuClock::Wait4Rusage {
            self.cpu += exit.cpu();
        }
        self.exit_codes.insert(exit.code());
    }
}

/// The hosts' peak resident set: the largest VmHWM read from the hosts that were read
/// (`Host::peak_rss_kb`), or why there is none.
#[derive(Default)]
pub struct PeakRss {
    max_kb: Option<u64>,
    read: u64,
    failed: u64,
    first_failure: Option<String>,
    not_read: Option<&'static str>,
}

impl PeakRss {
    /// One host's reading.
    pub fn record(&mut self, reading: std::result::Result<u64, String>) {
        match reading {
            Ok(kb) => {
                self.read += 1;
                self.max_kb = Some(self.max_kb.map_or(kb, |max| max.max(kb)));
            }
            Err(why) => {
                self.failed += 1;
                self.first_failure.get_or_insert(why);
            }
        }
    }

    /// No host is read in this trial, for this reason.
    pub fn not_read(&mut self, why: &'static str) {
        self.not_read = Some(why);
    }

    /// The peak in KiB; None rather than a number that is not the hosts' own.
    pub fn kb(&self) -> Option<u64> {
        self.max_kb
    }

    /// Why `kb` is None, or which hosts it leaves out; None when every host tried was read.
    pub fn note(&self) -> Option<String> {
        let tried = self.read + self.failed;
        match (&self.first_failure, self.not_read) {
            (None, _) if self.read > 0 => None,
            (None, Some(why)) => Some(format!("not measured: {why}")),
            (None, None) => Some("not measured: no host was read".to_string()),
            (Some(why), _) if self.read == 0 && tried == 1 => {
                Some(format!("cannot read the host's VmHWM: {why}"))
            }
            (Some(why), _) if self.read == 0 => Some(format!(
                "cannot read the hosts' VmHWM (none of the {tried} tried): {why}"
            )),
            (Some(why), _) => Some(format!(
                "the largest VmHWM of the {} of {tried} hosts that could be read; the first \
                 failure: {why}",
                self.read
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn peak_rss_is_the_largest_reading_or_says_why_there_is_none() {
        let mut all = PeakRss::default();
        all.record(Ok(900));
        all.record(Ok(1200));
        all.record(Ok(1100));
        assert_eq!((all.kb(), all.note()), (Some(1200), None));

        let mut some = PeakRss::default();
        some.record(Ok(900));
        some.record(Err("gone".to_string()));
        some.record(Err("later".to_string()));
        assert_eq!(some.kb(), Some(900));
        let note = some.note().unwrap();
        assert!(note.contains("1 of 3") && note.contains("gone"), "{note}");

        let mut none = PeakRss::default();
        none.record(Err("cannot read /proc/1/status: denied".to_string()));
        assert_eq!(none.kb(), None);
        assert_eq!(
            none.note().unwrap(),
            "cannot read the host's VmHWM: cannot read /proc/1/status: denied"
        );

        let mut skipped = PeakRss::default();
        skipped.not_read("--warmup is 0");
        assert_eq!(skipped.kb(), None);
        assert_eq!(skipped.note().unwrap(), "not measured: --warmup is 0");
    }
}
