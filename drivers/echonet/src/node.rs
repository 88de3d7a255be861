//! A node under test (SPEC §7): started with the driver's --bind/--ifaddr/--port, pinned, in
//! its network namespace when it has one; awaited until it prints `READY`; measured while it
//! runs; stopped with SIGTERM, after which it must print its JSON counters and exit 0.

use crate::counters::{self, Served};
use crate::netns::Netns;
use driver_kit::affinity::CpuSet;
use driver_kit::error::{Failure, Result};
use driver_kit::poll::{set_nonblocking, wait_ready};
use driver_kit::process::{log_hint, open_log};
use driver_kit::running::Running;
use driver_kit::CommonArgs;
use serde_json::{Map, Value};
use std::io::{self, Read};
use std::net::Ipv4Addr;
use std::os::fd::AsRawFd;
use std::process::{ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// SIGTERM → counters printed and exit 0 within this, or the stop is a failure.
pub const STOP_WAIT: Duration = Duration::from_secs(5);
/// A node prints two short lines; more than this on stdout is a broken node.
const MAX_OUTPUT: usize = 1 << 20;
/// After a failure, how long a node that is crashing gets to finish crashing, so the message
/// can say how it ended.
pub const CRASH_WAIT: Duration = Duration::from_millis(200);

/// Where a node runs.
pub struct Placement<'a> {
    pub addr: Ipv4Addr,
    /// Its network namespace: then it binds 0.0.0.0 (unicast and multicast, SPEC §7).
    pub netns: Option<&'a str>,
    pub port: u16,
}

pub struct Node {
    /// Named "the node at ADDR", its stderr in --impl-stderr (drivers/kit).
    running: Running,
    stdout: ChildStdout,
    /// What the node printed after `READY`.
    output: Vec<u8>,
}

/// How a node ended: its exit status and its checked counters.
pub struct Stopped {
    pub exit_status: i32,
    pub counters: Map<String, Value>,
}

impl Node {
    /// Starts NODE_ARGV + `--bind B --ifaddr ADDR --port P` in --impl-cwd, stdin /dev/null,
    /// stdout a pipe (READY and the counters), stderr appended to --impl-stderr, pinned to
    /// `cpus` before it execs, in a process group of its own that dies with the driver.
    pub fn start(common: &CommonArgs, cpus: Option<CpuSet>, at: &Placement) -> Result<Node> {
        let who = match at.netns {
            Some(ns) => format!("the node at {} (network namespace {ns})", at.addr),
            None => format!("the node at {}", at.addr),
        };
        let (program, args) = common.program()?;
        let (log, log_name) = open_log(common.impl_stderr.as_deref())?;
        let bind = match at.netns {
            Some(_) => Ipv4Addr::UNSPECIFIED,
            None => at.addr,
        };
        let mut command = Command::new(program);
        command
            .args(args)
            .args(["--bind", &bind.to_string()])
            .args(["--ifaddr", &at.addr.to_string()])
            .args(["--port", &at.port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(log);
        if let Some(dir) = &common.impl_cwd {
            command.current_dir(dir);
        }
        if let Some(name) = at.netns {
            Netns::open(name)?.enter_in_child(&mut command)?;
        }
        let hint = log_hint("stderr", log_name.as_deref());
        let (running, mut std_child) = Running::start(command, cpus, who, hint)?;
        let stdout = std_child
            .stdout
            .take()
            .ok_or_else(|| Failure::new("internal error: no stdout pipe"))?;
        // Non-blocking, so every read waits in poll(2) with a deadline.
        set_nonblocking(stdout.as_raw_fd())
            .map_err(|e| Failure::new(format!("{}: its stdout pipe: {e}", running.who())))?;
        Ok(Node {
            running,
            stdout,
            output: Vec::new(),
        })
    }

    /// Waits until the node prints the line `READY` (its socket is bound, SPEC §7).
    pub fn wait_ready(&mut self, deadline: Instant) -> Result<()> {
        loop {
            while let Some(end) = self.output.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = self.output.drain(..=end).collect();
                if String::from_utf8_lossy(&line).trim() == "READY" {
                    return Ok(());
                }
            }
            match self.read_some(deadline) {
                Ok(false) => {}
                Ok(true) => {
                    // End of file: the node ended, or closed its stdout, before it was ready.
                    let child = self.running.child_mut();
                    let exited = child.wait_exit(Instant::now() + CRASH_WAIT);
                    let (exit, _) = child.reap_by(Instant::now())?;
                    let how = match exited {
                        true => exit.describe(),
                        false => "closed its stdout (killed it)".to_string(),
                    };
                    return Err(Failure::new(format!(
                        "{} {how} before it printed READY{}",
                        self.running.who(),
                        self.running.log_hint()
                    )));
                }
                Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                    return Err(Failure::new(format!(
                        "{} did not print READY within --timeout-s{}",
                        self.running.who(),
                        self.running.log_hint()
                    )))
                }
                Err(e) => {
                    return Err(Failure::new(format!(
                        "{}: reading its stdout: {e}",
                        self.running.who()
                    )))
                }
            }
        }
    }

    /// Reads what the pipe holds, first waiting until it holds something or `until`; true at
    /// end of file.
    fn read_some(&mut self, until: Instant) -> io::Result<bool> {
        wait_ready(self.stdout.as_raw_fd(), libc::POLLIN, until)?;
        let mut buf = [0u8; 4096];
        loop {
            match self.stdout.read(&mut buf) {
                Ok(0) => return Ok(true),
                Ok(n) => {
                    self.output.extend_from_slice(&buf[..n]);
                    if self.output.len() > MAX_OUTPUT {
                        return Err(io::Error::other(format!(
                            "it wrote more than {MAX_OUTPUT} bytes (SPEC §7: READY, then one \
                             line of counters)"
                        )));
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(false),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// The node's CPU time, peak RSS, whether it still runs, how it ended (drivers/kit).
    pub fn running(&self) -> &Running {
        &self.running
    }

    pub fn running_mut(&mut self) -> &mut Running {
        &mut self.running
    }

    /// Sends SIGTERM (see [`Node::finish`]); several nodes stop side by side this way.
    pub fn terminate(&self) {
        self.running.child().signal(libc::SIGTERM);
    }

    /// After [`Node::terminate`]: reads the node's stdout to its end and its exit, both by
    /// `until`; requires exit status 0 and the counters of SPEC §7 on its last line,
    /// consistent with what the driver `served` it.
    pub fn finish(mut self, until: Instant, served: Served) -> Result<Stopped> {
        loop {
            match self.read_some(until) {
                Ok(true) => break,
                Ok(false) => {}
                Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                    return Err(self.running.overstayed(STOP_WAIT))
                }
                Err(e) => {
                    return Err(Failure::new(format!(
                        "{} after SIGTERM: reading its stdout: {e}",
                        self.running.who()
                    )))
                }
            }
        }
        let ended = self.running.child_mut().reap_by(until)?;
        let exit = self.running.stopped(ended, STOP_WAIT)?;
        let who = self.running.who();
        let text = String::from_utf8_lossy(&self.output);
        let Some(last) = text.lines().map(str::trim).rfind(|l| !l.is_empty()) else {
            return Err(Failure::new(format!(
                "{who} printed nothing after SIGTERM (SPEC §7: one line of JSON counters){}",
                self.running.log_hint()
            )));
        };
        let counters = counters::parse(last, served).map_err(|why| {
            Failure::new(format!(
                "{who}: its last line after SIGTERM {why}: {}",
                excerpt(last)
            ))
        })?;
        Ok(Stopped {
            exit_status: exit.code(),
            counters,
        })
    }
}

/// The line as printed (JSON reads badly escaped again), the first 300 characters of a long
/// one.
fn excerpt(text: &str) -> String {
    let shown: String = text.chars().take(300).collect();
    match shown.len() < text.len() {
        true => format!("{shown}…"),
        false => shown,
    }
}
