//! The implementation's long-lived process (a server, a node) while a trial loads and measures
//! it: its CPU clock and peak RSS read while it runs, a check that it still does, how it ended
//! when a load fails, and its stop (SIGTERM, then exit status 0 within a bound). Every failure
//! names it ("the server", "the node at 10.201.0.3") and says where its log went.
//!
//! What is the workload's stays in the driver: its command line, how it says it is ready, what
//! it must print when it stops.

use crate::affinity::CpuSet;
use crate::error::{Failure, Result};
use crate::process::{Child, Exit, Launcher};
use std::process::Command;
use std::time::{Duration, Instant};

pub struct Running {
    child: Child,
    /// How messages name it.
    who: String,
    /// Where its log went, for the end of a message ([`crate::process::log_hint`]).
    hint: String,
}

impl Running {
    /// Starts `command` with [`Launcher::guarded`]: pinned to `cpus` before it execs, in a
    /// process group of its own, dying with the driver. `who` names it in messages ("the
    /// server"); `hint` says where its log went ([`crate::process::log_hint`]). Returns the
    /// std child too, for its pipes.
    pub fn start(
        command: Command,
        cpus: Option<CpuSet>,
        who: impl Into<String>,
        hint: String,
    ) -> Result<(Running, std::process::Child)> {
        let who = who.into();
        let (child, std_child) = Launcher::guarded(command, cpus)
            .spawn()
            .map_err(|f| f.context(format!("starting {who}")))?;
        Ok((Running { child, who, hint }, std_child))
    }

    /// How messages name it.
    pub fn who(&self) -> &str {
        &self.who
    }

    /// " (its stderr: FILE)" or how to keep it, for the end of a message.
    pub fn log_hint(&self) -> &str {
        &self.hint
    }

    pub fn child(&self) -> &Child {
        &self.child
    }

    pub fn child_mut(&mut self) -> &mut Child {
        &mut self.child
    }

    /// Its CPU time so far, all threads: its process CPU clock.
    pub fn cpu_time(&self) -> Result<Duration> {
        self.child
            .cpu_time()
            .map_err(|f| f.context(format!("the CPU time of {}", self.who)))
    }

    /// Its peak RSS in KiB (VmHWM), read while it is alive.
    pub fn peak_rss_kb(&self) -> Result<u64> {
        self.child
            .peak_rss_kb()
            .map_err(|why| Failure::new(format!("reading the peak RSS of {}: {why}", self.who)))
    }

    /// Fails if it is no longer running (it must run until it is told to stop).
    pub fn check_running(&mut self) -> Result<()> {
        if !self.child.has_exited() {
            return Ok(());
        }
        let exit = self.child.reap()?;
        Err(Failure::new(format!(
            "{} {} during the load{}",
            self.who,
            exit.describe(),
            self.hint
        )))
    }

    /// Adds to a load failure how it ended, if it did by `until` (a crash explains a closed
    /// connection or a missing reply better than they do).
    pub fn explain(&mut self, failure: Failure, until: Instant) -> Failure {
        if !self.child.wait_exit(until) {
            return failure;
        }
        match self.child.reap() {
            Ok(exit) => failure.also(format!("{} {}{}", self.who, exit.describe(), self.hint)),
            Err(_) => failure,
        }
    }

    /// The failure of a process that was told to stop and did not exit within `wait`.
    pub fn overstayed(&self, wait: Duration) -> Failure {
        Failure::new(format!(
            "{} did not exit within {} s of SIGTERM (killed it){}",
            self.who,
            wait.as_secs_f64(),
            self.hint
        ))
    }

    /// After SIGTERM: how it ended and whether it exited within `wait` (as
    /// [`Child::reap_by`] and [`Child::stop`] say), required to be a clean stop, exit status 0.
    pub fn stopped(&self, (exit, exited): (Exit, bool), wait: Duration) -> Result<Exit> {
        if !exited {
            return Err(self.overstayed(wait));
        }
        if !exit.success() {
            return Err(Failure::new(format!(
                "after SIGTERM {} {} (a clean stop exits 0){}",
                self.who,
                exit.describe(),
                self.hint
            )));
        }
        Ok(exit)
    }

    /// SIGTERM, then its exit within `wait`, which must be clean ([`Running::stopped`]).
    pub fn stop(mut self, wait: Duration) -> Result<Exit> {
        let ended = self.child.stop(wait)?;
        self.stopped(ended, wait)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::log_hint;

    fn start(script: &str) -> Running {
        let mut command = Command::new("sh");
        command.args(["-c", script]);
        let hint = log_hint("output", Some("/tmp/server.log"));
        Running::start(command, None, "the server", hint).unwrap().0
    }

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(30)
    }

    #[test]
    fn measures_while_it_runs_and_stops_it_cleanly() {
        let mut server = start("trap 'exit 0' TERM; while :; do sleep 0.01; done");
        assert_eq!(server.who(), "the server");
        assert!(server.cpu_time().is_ok());
        assert!(server.peak_rss_kb().unwrap() > 0);
        server.check_running().unwrap();
        let failure = server.explain(Failure::new("no reply"), Instant::now());
        assert_eq!(failure.message(), "no reply", "it still runs");
        // Let the shell install its trap before it is signalled.
        std::thread::sleep(Duration::from_millis(200));
        assert!(server.stop(Duration::from_secs(30)).unwrap().success());
    }

    #[test]
    fn says_how_it_ended() {
        let mut server = start("exit 3");
        assert!(server.child().wait_exit(soon()));
        let failure = server.check_running().unwrap_err();
        assert_eq!(
            failure.message(),
            "the server exited with status 3 during the load (its output: /tmp/server.log)"
        );
        for (failure, start) in [
            (server.cpu_time().err(), "the CPU time of the server: "),
            (
                server.peak_rss_kb().err(),
                "reading the peak RSS of the server: ",
            ),
        ] {
            let message = failure.unwrap().to_string();
            assert!(message.starts_with(start), "{message}");
        }

        let mut crashed = start("kill -USR1 $$");
        let failure = crashed.explain(Failure::new("no reply"), soon());
        assert_eq!(
            failure.message(),
            "no reply; the server was killed by signal 10 (SIGUSR1) (its output: /tmp/server.log)"
        );

        let unclean = start("trap 'exit 4' TERM; while :; do sleep 0.01; done");
        std::thread::sleep(Duration::from_millis(200));
        let failure = unclean.stop(Duration::from_secs(30)).err().unwrap();
        assert_eq!(
            failure.message(),
            "after SIGTERM the server exited with status 4 (a clean stop exits 0) (its output: \
             /tmp/server.log)"
        );

        let stubborn = start("trap '' TERM; while :; do sleep 0.01; done");
        std::thread::sleep(Duration::from_millis(200));
        let failure = stubborn.stop(Duration::from_millis(300)).err().unwrap();
        assert_eq!(
            failure.message(),
            "the server did not exit within 0.3 s of SIGTERM (killed it) (its output: \
             /tmp/server.log)"
        );
    }
}
