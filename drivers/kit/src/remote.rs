//! The implementation on another host (docs/hosts.md): started, measured and stopped by the
//! host agent there (harness/msgbench/hostagent.py), which the driver reaches with
//! `--impl-agent ADDR:PORT`.
//!
//! A driver cannot start a process on another host, nor read its CPU clock, so the agent does
//! both with the same methods a local driver uses (the process CPU clock, VmHWM), and answers
//! over one TCP connection that lives as long as the implementation: if the driver dies, the
//! connection closes and the agent kills what it started. Every request and its reply (one JSON
//! object per line) travel outside the measured window, as a local driver's clock reads do: the
//! window is the load, bracketed by two `cpu` requests.
//!
//! The agent answers only a driver that knows its token (`MSGBENCH_AGENT_TOKEN` in the
//! driver's environment, set by the runner that started both).

use crate::args::CpuList;
use crate::error::{Failure, Result};
use serde_json::{json, Value};
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::{Duration, Instant};

/// The environment variable that carries the agent's token.
pub const TOKEN_ENV: &str = "MSGBENCH_AGENT_TOKEN";
/// The longest reply line accepted (the agent's own limit on requests).
const MAX_LINE: u64 = 1 << 20;
/// A bound on each request that does not wait for the implementation itself.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// One implementation process on the agent's host, while the trial measures it.
pub struct Remote {
    reader: BufReader<TcpStream>,
    writer: TcpStream,
    agent: String,
    /// How messages name it ("the server").
    who: String,
    /// The agent's description of its host, for the report.
    host: Value,
    /// How it ended, once known.
    ended: Option<String>,
}

impl Remote {
    /// Connects to the agent at `agent` (HOST:PORT), greets it with the token, and has it start
    /// `argv` in `cwd`, pinned to `cpus`, its output in the agent's log `log` (a file name).
    pub fn start(
        agent: &str,
        argv: &[OsString],
        cwd: Option<&Path>,
        cpus: Option<&CpuList>,
        log: Option<&str>,
        who: impl Into<String>,
    ) -> Result<Remote> {
        let who = who.into();
        let address = agent
            .to_socket_addrs()
            .map_err(|e| Failure::new(format!("--impl-agent {agent}: {e}")))?
            .next()
            .ok_or_else(|| Failure::new(format!("--impl-agent {agent}: no address")))?;
        let stream = TcpStream::connect_timeout(&address, REQUEST_TIMEOUT)
            .map_err(|e| Failure::new(format!("cannot reach the host agent at {agent}: {e}")))?;
        stream
            .set_read_timeout(Some(REQUEST_TIMEOUT))
            .and_then(|()| stream.set_nodelay(true))
            .map_err(|e| Failure::new(format!("the host agent at {agent}: {e}")))?;
        let writer = stream
            .try_clone()
            .map_err(|e| Failure::new(format!("the host agent at {agent}: {e}")))?;
        let mut remote = Remote {
            reader: BufReader::new(stream),
            writer,
            agent: agent.to_string(),
            who,
            host: Value::Null,
            ended: None,
        };
        let token = std::env::var(TOKEN_ENV).unwrap_or_default();
        let hello = remote.call("hello", json!({ "token": token }))?;
        remote.host = hello.get("host").cloned().unwrap_or(Value::Null);
        let argv: Vec<String> = argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let cwd = cwd.map(|p| p.to_string_lossy().into_owned());
        remote
            .call(
                "start",
                json!({"argv": argv, "cwd": cwd, "cpus": cpus.map(|c| &c.0), "log": log}),
            )
            .map_err(|f| f.context(format!("starting {}", remote.who)))?;
        Ok(remote)
    }

    /// One request and its reply; the agent's own sentence when it failed.
    fn call(&mut self, op: &str, fields: Value) -> Result<Value> {
        let mut request = fields;
        request["op"] = json!(op);
        let mut line = serde_json::to_vec(&request)
            .map_err(|e| Failure::new(format!("encoding a request to the host agent: {e}")))?;
        line.push(b'\n');
        self.writer
            .write_all(&line)
            .map_err(|e| self.lost(op, &e.to_string()))?;
        let mut reply = String::new();
        let read = {
            let mut limited = (&mut self.reader).take(MAX_LINE);
            limited.read_line(&mut reply)
        };
        let read = read.map_err(|e| self.lost(op, &e.to_string()))?;
        if read == 0 {
            return Err(self.lost(op, "it closed the connection"));
        }
        let reply: Value = serde_json::from_str(&reply)
            .map_err(|e| self.lost(op, &format!("its reply is not JSON ({e})")))?;
        if reply["ok"] != json!(true) {
            let why = reply["error"].as_str().unwrap_or("no reason given");
            return Err(Failure::new(format!(
                "the host agent at {}: {why}",
                self.agent
            )));
        }
        Ok(reply)
    }

    fn lost(&self, op: &str, why: &str) -> Failure {
        Failure::new(format!("the host agent at {} ({op}): {why}", self.agent))
    }

    /// How messages name it.
    pub fn who(&self) -> &str {
        &self.who
    }

    /// The agent's description of the implementation's host (hostname, kernel, CPUs).
    pub fn host(&self) -> &Value {
        &self.host
    }

    /// Waits until it accepts on `addr`:`port` (the agent probes from its host).
    pub fn wait_ready(&mut self, addr: &str, port: u16, deadline: Instant) -> Result<()> {
        let left = deadline.saturating_duration_since(Instant::now());
        self.writer
            .set_write_timeout(Some(left + REQUEST_TIMEOUT))
            .and_then(|()| {
                self.reader
                    .get_ref()
                    .set_read_timeout(Some(left + REQUEST_TIMEOUT))
            })
            .map_err(|e| self.lost("ready", &e.to_string()))?;
        let ready = self.call(
            "ready",
            json!({"addr": addr, "port": port, "timeout_s": left.as_secs_f64()}),
        );
        self.reader
            .get_ref()
            .set_read_timeout(Some(REQUEST_TIMEOUT))
            .map_err(|e| self.lost("ready", &e.to_string()))?;
        ready.map(|_| ()).map_err(|f| f.context(self.who.clone()))
    }

    /// Its CPU time so far, all threads (the agent reads its process CPU clock), and the time
    /// its threads waited for a CPU (schedstat's run delay).
    pub fn cpu_and_delay(&mut self) -> Result<(Duration, Duration)> {
        let reply = self
            .call("cpu", json!({}))
            .map_err(|f| f.context(format!("the CPU time of {}", self.who)))?;
        let ns = |field: &str| Duration::from_nanos(reply[field].as_u64().unwrap_or(0));
        Ok((ns("cpu_ns"), ns("run_delay_ns")))
    }

    /// Its peak RSS in KiB (VmHWM), read by the agent while it is alive.
    pub fn peak_rss_kb(&mut self) -> Result<u64> {
        let reply = self
            .call("memory", json!({}))
            .map_err(|f| f.context(format!("reading the peak RSS of {}", self.who)))?;
        reply["vmhwm_kb"]
            .as_u64()
            .ok_or_else(|| Failure::new("the host agent sent no vmhwm_kb"))
    }

    /// How it ended ("exited with status 1"), or None while it runs.
    fn ended(&mut self) -> Result<Option<String>> {
        if self.ended.is_none() {
            let reply = self.call("status", json!({}))?;
            if reply["running"] == json!(false) {
                let how = reply["exit"]["describe"].as_str().unwrap_or("ended");
                self.ended = Some(how.to_string());
            }
        }
        Ok(self.ended.clone())
    }

    /// Fails if it is no longer running.
    pub fn check_running(&mut self) -> Result<()> {
        match self.ended()? {
            None => Ok(()),
            Some(how) => Err(Failure::new(format!(
                "{} {how} during the load (its output: the host agent's log)",
                self.who
            ))),
        }
    }

    /// Adds to a load failure how it ended, if it did by `until`.
    pub fn explain(&mut self, failure: Failure, until: Instant) -> Failure {
        loop {
            match self.ended() {
                Ok(Some(how)) => return failure.also(format!("{} {how}", self.who)),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
                _ => return failure,
            }
        }
    }

    /// SIGTERM, then its exit within `wait`, which must be clean (exit status 0); returns the
    /// exit status.
    pub fn stop(mut self, wait: Duration) -> Result<i32> {
        self.reader
            .get_ref()
            .set_read_timeout(Some(wait + REQUEST_TIMEOUT))
            .map_err(|e| self.lost("stop", &e.to_string()))?;
        let reply = self.call("stop", json!({ "wait_s": wait.as_secs_f64() }))?;
        let how = reply["exit"]["describe"].as_str().unwrap_or("ended");
        if reply["exited"] != json!(true) {
            return Err(Failure::new(format!(
                "{} did not exit within {} s of SIGTERM (killed it)",
                self.who,
                wait.as_secs_f64()
            )));
        }
        match reply["exit"]["code"].as_i64() {
            Some(0) => Ok(0),
            _ => Err(Failure::new(format!(
                "after SIGTERM {} {how} (a clean stop exits 0)",
                self.who
            ))),
        }
    }
}
