//! The server under test: started as the SPEC says a harness starts it (by the driver, or by the
//! host agent of its host when --impl-agent is given: docs/hosts.md), awaited until it accepts,
//! measured (its CPU clock, run delay and peak RSS), stopped with SIGTERM.

use crate::procinfo;
use driver_kit::affinity::CpuSet;
use driver_kit::error::{Failure, Result};
use driver_kit::process::{log_hint, open_log};
use driver_kit::running::Running;
use driver_kit::served::Served;
use driver_kit::CommonArgs;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// SIGTERM → exit within this (SPEC §2 gives the server 2 s; the driver allows more before it
/// calls the stop a failure).
pub const STOP_WAIT: Duration = Duration::from_secs(5);
/// Pause between readiness probes.
const PROBE_INTERVAL: Duration = Duration::from_millis(5);
/// After a failure, how long a server that is crashing gets to finish crashing, so the message
/// can say how it ended.
const CRASH_WAIT: Duration = Duration::from_millis(200);

pub struct Server {
    /// Named "the server", its log in --impl-stderr (drivers/kit), or on the agent's host.
    served: Served,
}

impl Server {
    /// Starts IMPL_ARGV in --impl-cwd, its stdout and stderr appended to --impl-stderr (or
    /// discarded), stdin from /dev/null, pinned to `cpus` before it execs, in a process group
    /// of its own; or the same, done by the host agent of --impl-agent.
    pub fn start(common: &CommonArgs, cpus: Option<CpuSet>) -> Result<Server> {
        if let Some(served) = Served::remote(common, "the server")? {
            return Ok(Server { served });
        }
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
        let hint = log_hint("output", log_name.as_deref());
        let (running, _) = Running::start(command, cpus, "the server", hint)?;
        Ok(Server {
            served: Served::Local(running),
        })
    }

    /// Waits until the server accepts on `host`:`port` with a listening socket of its own (a
    /// remote server: until it accepts, as its agent sees it).
    pub fn wait_ready(&mut self, host: Ipv4Addr, port: u16, deadline: Instant) -> Result<()> {
        let running = match &mut self.served {
            Served::Local(running) => running,
            Served::Remote(remote) => return remote.wait_ready(&host.to_string(), port, deadline),
        };
        let address = SocketAddr::from((host, port));
        let mut foreign = false;
        loop {
            let child = running.child_mut();
            if child.has_exited() {
                let exit = child.reap()?;
                return Err(Failure::new(format!(
                    "the server {} before it accepted connections on port {port}{}",
                    exit.describe(),
                    running.log_hint()
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
                return Err(Failure::new(format!("{why}{}", running.log_hint())));
            }
            let probe = TcpStream::connect_timeout(&address, left.min(Duration::from_secs(1)));
            if probe.is_ok() {
                drop(probe);
                if procinfo::group_listens_on(running.child().pid(), port) {
                    return Ok(());
                }
                foreign = true;
            }
            std::thread::sleep(PROBE_INTERVAL.min(left));
        }
    }

    /// The server's CPU clock and run delay, peak RSS, whether it still runs (drivers/kit).
    pub fn served(&mut self) -> &mut Served {
        &mut self.served
    }

    /// Adds to a load failure how the server ended, if it did (a crash explains a closed
    /// connection better than the connection can).
    pub fn explain(&mut self, failure: Failure) -> Failure {
        self.served.explain(failure, Instant::now() + CRASH_WAIT)
    }

    /// SIGTERM, then the exit within [`STOP_WAIT`]; only exit status 0 is a clean stop.
    pub fn stop(self) -> Result<i32> {
        self.served.stop(STOP_WAIT)
    }
}
