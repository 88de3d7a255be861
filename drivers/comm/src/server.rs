//! The server under test: started as the SPEC says a harness starts it, awaited until it
//! accepts, measured from /proc, stopped with SIGTERM.

use crate::procinfo;
use driver_kit::affinity::CpuSet;
use driver_kit::error::{Failure, Result};
use driver_kit::process::{log_hint, open_log, Child, Exit, Launcher};
use driver_kit::CommonArgs;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
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
    /// Starts IMPL_ARGV in --impl-cwd, its stdout and stderr appended to --impl-stderr (or
    /// discarded), stdin from /dev/null, pinned to `cpus` before it execs, in a process group
    /// of its own.
    pub fn start(common: &CommonArgs, cpus: Option<CpuSet>) -> Result<Server> {
        let (program, args) = common.program()?;
        let (out, log_name) = open_log(common.impl_stderr.as_deref())?;
        let err = out
            .try_clone()
            .map_err(|e| Failure::new(format!("duplicating the log file: {e}")))?;
        let mut command = Command::new(program);
        command
            .args(args)
            .stdin(Stdio::null())
            .stdout(out)
            .stderr(err);
        if let Some(dir) = &common.impl_cwd {
            command.current_dir(dir);
        }
        let (child, _) = Launcher::guarded(command, cpus)
            .spawn()
            .map_err(|f| f.context("starting the server"))?;
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

    /// The server's CPU time so far, all threads: its process CPU clock (drivers/kit).
    pub fn cpu_time(&self) -> Result<Duration> {
        self.child
            .cpu_time()
            .map_err(|f| f.context("the server's CPU time"))
    }

    /// The server's peak RSS in KiB (VmHWM), read while it is alive.
    pub fn peak_rss_kb(&self) -> Result<u64> {
        self.child
            .peak_rss_kb()
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
            Ok(exit) => failure.also(format!("the server {}{}", exit.describe(), self.log_hint())),
            Err(_) => failure,
        }
    }

    /// SIGTERM, then the exit within [`STOP_WAIT`]; only exit status 0 is a clean stop.
    pub fn stop(mut self) -> Result<Exit> {
        let (exit, exited) = self.child.stop(STOP_WAIT)?;
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
        log_hint("output", self.log_name.as_deref())
    }
}
