//! The implementation under load, wherever it runs: a child of the driver ([`Running`]) or a
//! process on another host that the host agent started ([`Remote`], docs/hosts.md). A driver
//! holds a [`Served`] and asks the same questions of either: its CPU clock, the time it waited
//! for a CPU, its peak RSS, whether it still runs, how it ended, its clean stop.

use crate::args::CommonArgs;
use crate::error::{Failure, Result};
use crate::remote::Remote;
use crate::running::Running;
use serde_json::Value;
use std::path::Path;
use std::time::{Duration, Instant};

pub enum Served {
    Local(Running),
    Remote(Remote),
}

/// What a trial reads from the implementation at each end of its window.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Reading {
    /// Its CPU time so far, every thread (the process CPU clock).
    pub cpu: Duration,
    /// The time its live threads have waited on a run queue: what other processes on its
    /// CPUs took from it (schedstat's run delay).
    pub run_delay: Duration,
}

impl Reading {
    /// What was spent between `before` and this reading.
    pub fn since(&self, before: &Reading) -> Reading {
        Reading {
            cpu: self.cpu.saturating_sub(before.cpu),
            run_delay: self.run_delay.saturating_sub(before.run_delay),
        }
    }
}

impl Served {
    /// A remote implementation if `--impl-agent` was given: started there with IMPL_ARGV,
    /// --impl-cwd and --impl-cpus, its output in the agent's log named after --impl-stderr.
    pub fn remote(common: &CommonArgs, who: &str) -> Result<Option<Served>> {
        let Some(agent) = common.impl_agent.as_deref() else {
            return Ok(None);
        };
        let log = common
            .impl_stderr
            .as_deref()
            .and_then(Path::file_name)
            .map(|n| n.to_string_lossy().into_owned());
        let remote = Remote::start(
            agent,
            &common.impl_argv,
            common.impl_cwd.as_deref(),
            common.impl_cpus.as_ref(),
            log.as_deref(),
            who,
        )?;
        Ok(Some(Served::Remote(remote)))
    }

    pub fn who(&self) -> &str {
        match self {
            Served::Local(r) => r.who(),
            Served::Remote(r) => r.who(),
        }
    }

    /// The host it runs on as the agent describes it; None for a local child.
    pub fn host(&self) -> Option<&Value> {
        match self {
            Served::Local(_) => None,
            Served::Remote(r) => Some(r.host()),
        }
    }

    pub fn read(&mut self) -> Result<Reading> {
        match self {
            Served::Local(r) => Ok(Reading {
                cpu: r.cpu_time()?,
                run_delay: run_delay(r.child().pid()),
            }),
            Served::Remote(r) => {
                let (cpu, run_delay) = r.cpu_and_delay()?;
                Ok(Reading { cpu, run_delay })
            }
        }
    }

    pub fn peak_rss_kb(&mut self) -> Result<u64> {
        match self {
            Served::Local(r) => r.peak_rss_kb(),
            Served::Remote(r) => r.peak_rss_kb(),
        }
    }

    pub fn check_running(&mut self) -> Result<()> {
        match self {
            Served::Local(r) => r.check_running(),
            Served::Remote(r) => r.check_running(),
        }
    }

    pub fn explain(&mut self, failure: Failure, until: Instant) -> Failure {
        match self {
            Served::Local(r) => r.explain(failure, until),
            Served::Remote(r) => r.explain(failure, until),
        }
    }

    /// SIGTERM, then a clean exit within `wait`; its exit status.
    pub fn stop(self, wait: Duration) -> Result<i32> {
        match self {
            Served::Local(r) => r.stop(wait).map(|exit| exit.code()),
            Served::Remote(r) => r.stop(wait),
        }
    }
}

/// The run delay of the live threads of `pid` (/proc/<pid>/task/*/schedstat, second field, in
/// ns); zero where the kernel does not keep schedstats.
pub fn run_delay(pid: libc::pid_t) -> Duration {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return Duration::ZERO;
    };
    let ns: u64 = tasks
        .flatten()
        .filter_map(|task| std::fs::read_to_string(task.path().join("schedstat")).ok())
        .filter_map(|text| text.split_whitespace().nth(1)?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readings_subtract_without_going_negative() {
        let before = Reading {
            cpu: Duration::from_millis(5),
            run_delay: Duration::from_millis(2),
        };
        let after = Reading {
            cpu: Duration::from_millis(9),
            run_delay: Duration::from_millis(1),
        };
        assert_eq!(
            after.since(&before),
            Reading {
                cpu: Duration::from_millis(4),
                run_delay: Duration::ZERO
            }
        );
    }

    #[test]
    fn this_process_has_a_run_delay_figure() {
        // The kernel keeps schedstats for every task here; the figure is a sum, never an error.
        let pid = std::process::id() as libc::pid_t;
        let _ = run_delay(pid);
        assert_eq!(run_delay(-1), Duration::ZERO);
    }
}
