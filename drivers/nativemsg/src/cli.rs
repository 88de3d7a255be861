//! The command line: the scenario's options and the driver contract's common ones
//! (docs/driver-contract.md):
//!
//! ```text
//! nativemsg-driver --mode persistent|spawn --op ping|echo --size BYTES
//!                  --iterations N --warmup N [--check-full 50] [--driver-cpus 0] [--impl-cpus 1]
//!                  [--impl-stderr PATH] [--impl-cwd DIR] [--timeout-s 60] -- HOST_ARGV...
//! ```
//!
//! `--port` and `--client-json` are accepted, as every driver accepts them, and ignored: a
//! host talks over its stdio and has no client program.

use crate::payload::{Request, MAX_REQUEST_BODY};
use clap::{Parser, ValueEnum};
use driver_kit::output::DriverArgs;
use driver_kit::CommonArgs;
use serde::Serialize;

#[derive(Parser, Debug)]
#[command(
    name = "nativemsg-driver",
    version,
    about = "Measures a Native Messaging host: starts it as Chromium does, times round trips \
             and prints one JSON object",
    after_help = "IMPL_ARGV is the host's command line, origin included (e.g. /path/host \
                  chrome-extension://id/); its working directory defaults to the directory of \
                  the program. Exit status: 0 with the results on stdout; 1 with \
                  {\"error\": \"...\"} on stdout when the trial failed (a wrong reply, a host \
                  that died, a timeout); 2 with {\"error\": \"bad command line: ...\"} for a bad \
                  command line."
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

    /// Replies compared in full as JSON (the rest only by length)
    #[arg(long, value_name = "N", default_value_t = 50)]
    pub check_full: u64,

    #[command(flatten)]
    pub common: CommonArgs,
}

impl DriverArgs for Args {
    /// The combinations and ranges clap does not check (a message for a usage error).
    fn validate(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("--iterations must be at least 1".to_string());
        }
        self.common.validate()?;
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
    use driver_kit::CpuList;

    fn parse(line: &str) -> Result<Args, clap::Error> {
        Args::try_parse_from(line.split_whitespace())
    }

    #[test]
    fn parses_the_documented_command_line() {
        let args = parse(
            "d --mode persistent --op echo --size 1024 --iterations 10 --warmup 2 \
             --driver-cpus 0 --impl-cpus 1,0 --impl-stderr /tmp/e --timeout-s 5 \
             --check-full 3 -- /bin/host chrome-extension://x/ extra",
        )
        .unwrap();
        assert_eq!(args.mode, Mode::Persistent);
        assert_eq!(args.op, Op::Echo);
        assert_eq!(args.common.driver_cpus, Some(CpuList(vec![0])));
        assert_eq!(args.common.impl_cpus, Some(CpuList(vec![1, 0])));
        assert_eq!(args.common.impl_argv.len(), 3);
        assert_eq!(args.check_full, 3);
        args.validate().unwrap();
    }

    #[test]
    fn defaults() {
        let args = parse("d --mode spawn --op ping --iterations 1 --warmup 0 -- h").unwrap();
        assert_eq!(args.size, 0);
        assert_eq!(args.common.timeout_s, 60.0);
        assert_eq!(args.check_full, 50);
        assert_eq!(args.common.driver_cpus, None);
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
        // The old names are gone.
        assert!(
            parse("d --mode spawn --op ping --iterations 1 --warmup 0 --host-cpus 1 -- h").is_err()
        );
    }
}
