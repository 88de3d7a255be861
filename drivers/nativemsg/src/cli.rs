//! The command line (docs/decisions.md, "Drivers"):
//!
//! ```text
//! nativemsg-driver --mode persistent|spawn --op ping|echo --size BYTES
//!                  --iterations N --warmup N [--driver-cpus 0] [--host-cpus 1]
//!                  [--host-stderr PATH] [--host-cwd DIR] [--timeout-s 60] [--check-full 50]
//!                  -- HOST_ARGV...
//! ```

use crate::payload::{Request, MAX_REQUEST_BODY};
use clap::{Parser, ValueEnum};
use serde::Serialize;
use std::ffi::OsString;
use std::path::PathBuf;

#[derive(Parser, Debug)]
#[command(
    name = "nativemsg-driver",
    version,
    about = "Measures a Native Messaging host: starts it as Chromium does, times round trips \
             and prints one JSON object",
    after_help = "Exit status: 0 with the results on stdout; 1 with {\"error\": \"...\"} on \
                  stdout when the trial failed (a wrong reply, a host that died, a timeout); \
                  2 for a bad command line."
)]
pub struct Args {
    /// persistent: one host serves the whole trial (runtime.connectNative); spawn: one host
    /// per operation (runtime.sendNativeMessage), timed from spawn to reaped exit
    #[arg(long, value_enum)]
    pub mode: Mode,

    /// ping sends {"op":"ping"} (13 bytes); echo sends the SPEC §5 echo payload of --size bytes
    #[arg(long, value_enum)]
    pub op: Op,

    /// Request body size in bytes: the exact echo body size; must be 0 for ping
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    pub size: usize,

    /// Measured operations
    #[arg(long, value_name = "N")]
    pub iterations: u64,

    /// Operations before the measured ones, checked but not recorded
    #[arg(long, value_name = "N")]
    pub warmup: u64,

    /// Pin the driver to these CPUs (comma-separated); default: no pinning
    #[arg(long, value_name = "CPUS", value_delimiter = ',')]
    pub driver_cpus: Option<Vec<usize>>,

    /// Pin the host to these CPUs (comma-separated), from its first instruction; default: no
    /// pinning
    #[arg(long, value_name = "CPUS", value_delimiter = ',')]
    pub host_cpus: Option<Vec<usize>>,

    /// Append the host's stderr to this file (default: /dev/null)
    #[arg(long, value_name = "PATH")]
    pub host_stderr: Option<PathBuf>,

    /// The host's working directory (default: the directory of HOST_ARGV[0])
    #[arg(long, value_name = "DIR")]
    pub host_cwd: Option<PathBuf>,

    /// Budget for the whole trial, start-up to last exit; every wait is bounded by what is left
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub timeout_s: f64,

    /// Replies compared in full as JSON (the rest only by length)
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub check_full: u64,

    /// The host's command line, origin included (e.g. /path/host chrome-extension://id/)
    #[arg(last = true, required = true, value_name = "HOST_ARGV")]
    pub host_argv: Vec<OsString>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Persistent,
    Spawn,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Ping,
    Echo,
}

impl Args {
    /// Checks what clap cannot: combinations and ranges. Returns a message for a usage error.
    pub fn validate(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("--iterations must be at least 1".to_string());
        }
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0 && self.timeout_s <= 1e9) {
            return Err(format!(
                "--timeout-s must be a positive number of seconds, not {}",
                self.timeout_s
            ));
        }
        match self.op {
            Op::Ping if self.size != 0 => Err(format!(
                "--size applies to echo; ping always sends the 13-byte {{\"op\":\"ping\"}} \
                 (got --size {})",
                self.size
            )),
            Op::Echo if self.size < Request::min_echo_size() || self.size > MAX_REQUEST_BODY => {
                Err(format!(
                    "--size for echo must be {}..={MAX_REQUEST_BODY} bytes, not {}",
                    Request::min_echo_size(),
                    self.size
                ))
            }
            _ => Ok(()),
        }
    }

    pub fn request(&self) -> Result<Request, String> {
        match self.op {
            Op::Ping => Ok(Request::ping()),
            Op::Echo => Request::echo(self.size),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(line: &str) -> Result<Args, clap::Error> {
        Args::try_parse_from(line.split_whitespace())
    }

    #[test]
    fn parses_the_documented_command_line() {
        let args = parse(
            "d --mode persistent --op echo --size 1024 --iterations 10 --warmup 2 \
             --driver-cpus 0 --host-cpus 1,0 --host-stderr /tmp/e --timeout-s 5 \
             --check-full 3 -- /bin/host chrome-extension://x/ extra",
        )
        .unwrap();
        assert_eq!(args.mode, Mode::Persistent);
        assert_eq!(args.op, Op::Echo);
        assert_eq!(args.driver_cpus, Some(vec![0]));
        assert_eq!(args.host_cpus, Some(vec![1, 0]));
        assert_eq!(args.host_argv.len(), 3);
        assert_eq!(args.check_full, 3);
        args.validate().unwrap();
    }

    #[test]
    fn defaults() {
        let args = parse("d --mode spawn --op ping --iterations 1 --warmup 0 -- h").unwrap();
        assert_eq!(args.size, 0);
        assert_eq!(args.timeout_s, 60.0);
        assert_eq!(args.check_full, 50);
        assert_eq!(args.driver_cpus, None);
        args.validate().unwrap();
    }

    #[test]
    fn refuses_bad_combinations() {
        for line in [
            "d --mode spawn --op ping --size 5 --iterations 1 --warmup 0 -- h",
            "d --mode spawn --op echo --size 10 --iterations 1 --warmup 0 -- h",
            "d --mode spawn --op echo --size 99999999 --iterations 1 --warmup 0 -- h",
            "d --mode spawn --op ping --iterations 0 --warmup 0 -- h",
            "d --mode spawn --op ping --iterations 1 --warmup 0 --timeout-s 0 -- h",
        ] {
            assert!(parse(line).unwrap().validate().is_err(), "{line}");
        }
        assert!(parse("d --mode spawn --op ping --iterations 1 --warmup 0").is_err());
        assert!(parse("d --mode other --op ping --iterations 1 --warmup 0 -- h").is_err());
    }
}
