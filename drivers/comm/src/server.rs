//! The server under test: started as the SPEC says a harness starts it, awaited until it
//! accepts, measured from /proc, stopped with SIGTERM.

use crate::affinity::CpuSet;
use crate::child::{Child, Exit};
use crate::error::{Failure, Result};
use crate::procinfo;
use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// SIGTERM → exit within this (SPEC §2 gives the server 2 s; the driver allows more before it
/// calls the stop a failure).
pub const STOP_WAIT: Duration = Duration::from_secs(5);
/// Pause between readiness probes.
const PROBE_INTERVAL: Duration = Duration::from_millis(5);

pub struct Server {
    child: Child,
    log_name: Option<String>,
}

impl Server {
    /// Starts SERVER_ARGV in `cwd`, its stdout and stderr appended to `log` (or discarded),
    /// stdin from /dev/null, pinned to `cpus` before it execs, in a process group of its own.
    pub fn start(
        argv: &[OsString],
        cwd: Option<&Path>,
        log: Option<&Path>,
        cpus: Option<CpuSet>,
    ) -> Result<Server> {
        let (program, args) = argv
            .split_first()
            .ok_or_else(|| Failure::new("no server command given after --"))?;
        let (out, log_name) = open_log(log)?;
        let err = out
            .try_clone()
            .map_err(|e| Failure::new(format!("duplicating the log file: {e}")))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        if let Some(dir) = cwd {
            command.current_dir(dir);
        }
        let (child, _) = Child::spawn(&mut command, cpus)
            .map_err(|e| Failure::new(format!("cannot start the server {program:?}: {e}")))?;
        Ok(Server { child, log_name })
    }

    /// Waits until the server accepts on 127.0.0.1:`port` with a listening socket of its own.
    pub fn wait_ready(&mut self, port: u16, deadline: Instant) -> Result<()> {
        let address = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
        let mut foreign = false;
        loop {
            if self.child.has_exited() {
                let exit = self.child.reap()?;
                return Err(Failure::new(format!(
                    "the server {} before it accepted connections on port {port}{}",
                    exit.describe(),
                    self.log_hint()
                )));
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                let why = if foreign {
                    format!(
                        "port {port} accepts connections, but no listening socket on it is the \
                         server's (another program holds the port?); waited --timeout-s"
                    )
                } else {
                    format!(
                        "the server did not accept connections on port {port} within --timeout-s"
                    )
                };
                return Err(Failure::new(format!("{why}{}", self.log_hint())));
            }
            let probe = TcpStream::connect_timeout(&address, left.min(Duration::from_secs(1)));
            if probe.is_ok() {
                drop(probe);
                if procinfo::group_listens_on(self.child.pid(), port) {
                    return Ok(());
                }
                foreign = true;
            }
            std::thread::sleep(PROBE_INTERVAL.min(left));
        }
    }

    /// The server's CPU time so far, all threads (see [`procinfo::process_cpu_time`]).
    pub fn cpu_time(&self) -> Result<Duration> {
        procinfo::process_cpu_time(self.child.pid())
            .map_err(|e| Failure::new(format!("reading the server's CPU clock: {e}")))
    }

    /// The server's peak RSS in KiB (VmHWM), read while it is alive.
    pub fn peak_rss_kb(&self) -> Result<u64> {
        procinfo::peak_rss_kb(self.child.pid())
            .map_err(|why| Failure::new(format!("reading the server's peak RSS: {why}")))
    }

    /// Fails if the server is no longer running (it must run until it is told to stop).
    pub fn check_running(&mut self) -> Result<()> {
        if !self.child.has_exited() {
            return Ok(());
        }
        let exit = self.child.reap()?;
        Err(Failure::new(format!(
            "the server {} during the load{}",
            exit.describe(),
            self.log_hint()
        )))
    }

    /// Adds to a load failure how the server ended, if it did (a crash explains a closed
    /// connection better than the connection can).
    pub fn explain(&mut self, failure: Failure) -> Failure {
        // A moment for a crashing server to finish crashing.
        if !self
            .child
            .wait_exit(Instant::now() + Duration::from_millis(200))
        {
            return failure;
        }
        match self.child.reap() {
            Ok(exit) => failure.add(format!("the server {}{}", exit.describe(), self.log_hint())),
            Err(_) => failure,
        }
    }

    /// SIGTERM, then the exit within [`STOP_WAIT`]; only exit status 0 is a clean stop.
    pub fn stop(mut self) -> Result<Exit> {
        self.child.signal(libc::SIGTERM);
        let exited = self.child.wait_exit(Instant::now() + STOP_WAIT);
        let exit = self.child.reap()?;
        if !exited {
            return Err(Failure::new(format!(
                "the server did not exit within {} s of SIGTERM (killed it){}",
                STOP_WAIT.as_secs(),
                self.log_hint()
            )));
        }
        if !exit.success() {
            return Err(Failure::new(format!(
                "after SIGTERM the server {} (a clean stop exits 0){}",
                exit.describe(),
                self.log_hint()
            )));
        }
        Ok(exit)
    }

    fn log_hint(&self) -> String {
        match &self.log_name {
            Some(name) => format!(" (its output: {name})"),
            None => " (its output was not kept: pass --host-stderr)".to_string(),
        }
    }
}

fn open_log(path: Option<&Path>) -> Result<(File, Option<String>)> {
    let target = path.unwrap_or(Path::new("/dev/null"));
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(target)
        .map_err(|e| Failure::new(format!("--host-stderr {}: {e}", target.display())))?;
    Ok((file, path.map(|p| p.display().to_string())))
}
