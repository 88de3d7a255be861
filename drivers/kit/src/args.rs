//! The command line every driver shares (docs/driver-contract.md):
//!
//! ```text
//! DRIVER SCENARIO_ARGS [--driver-cpus LIST] [--impl-cpus LIST] [--impl-stderr FILE]
//!        [--timeout-s N] [--impl-cwd DIR] [--port N] [--client-json JSON_ARRAY]
//!        [--impl-agent ADDR:PORT] [--impl-host ADDR] -- IMPL_ARGV...
//! ```
//!
//! A driver puts [`CommonArgs`] in its own clap struct with `#[command(flatten)]` and adds its
//! scenario options beside it.

use crate::affinity::CpuSet;
use crate::error::{Failure, Result};
use serde::Serialize;
use std::ffi::OsString;
use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The largest --timeout-s: far beyond any trial, small enough for `Instant` arithmetic.
const MAX_TIMEOUT_S: f64 = 1e9;

#[derive(clap::Args, Debug, Clone)]
pub struct CommonArgs {
    /// Pin the driver (and what runs on its side: load threads, a client program) to these
    /// CPUs, e.g. 0 or 0,2-3; default: no pinning
    #[arg(long, value_name = "CPUS", value_parser = CpuList::parse)]
    pub driver_cpus: Option<CpuList>,

    /// Pin the implementation to these CPUs from its first instruction; default: no pinning
    #[arg(long, value_name = "CPUS", value_parser = CpuList::parse)]
    pub impl_cpus: Option<CpuList>,

    /// Append the implementation's stderr to this file (default: discarded)
    #[arg(long, value_name = "FILE")]
    pub impl_stderr: Option<PathBuf>,

    /// Budget for the whole trial; every wait is bounded by what is left
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0)]
    pub timeout_s: f64,

    /// The implementation's working directory (default: the driver's own choice, see its
    /// --help)
    #[arg(long, value_name = "DIR")]
    pub impl_cwd: Option<PathBuf>,

    /// The port the implementation listens on (TCP on 127.0.0.1 as given in IMPL_ARGV, or as
    /// the driver's help says); drivers whose implementation does not listen ignore it
    #[arg(long, value_name = "N")]
    pub port: Option<u16>,

    /// The host agent of the implementation's host, when it runs on another host than the
    /// driver (docs/hosts.md): the agent starts and measures it; default: the driver starts it
    #[arg(long, value_name = "ADDR:PORT")]
    pub impl_agent: Option<String>,

    /// The address the implementation listens on (its host's; given in IMPL_ARGV too)
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1")]
    pub impl_host: Ipv4Addr,

    /// The implementation's own client program as a JSON list of strings, e.g.
    /// '["/path/client","--port","7600"]'; drivers that run no client program ignore it
    #[arg(long, value_name = "JSON")]
    pub client_json: Option<String>,

    /// The implementation's command line
    #[arg(last = true, required = true, value_name = "IMPL_ARGV")]
    pub impl_argv: Vec<OsString>,
}

impl CommonArgs {
    /// Checks what clap cannot. Returns a message for a usage error.
    pub fn validate(&self) -> std::result::Result<(), String> {
        if !(self.timeout_s.is_finite() && self.timeout_s > 0.0 && self.timeout_s <= MAX_TIMEOUT_S)
        {
            return Err(format!(
                "--timeout-s must be a positive number of seconds, not {}",
                self.timeout_s
            ));
        }
        if self.port == Some(0) {
            return Err("--port must be a TCP port (1..=65535), not 0".to_string());
        }
        if self.impl_argv.first().is_none_or(|p| p.is_empty()) {
            return Err("the implementation's command line after -- is empty".to_string());
        }
        self.client_argv().map(|_| ())
    }

    /// IMPL_ARGV split into the program and its arguments.
    pub fn program(&self) -> Result<(&OsString, &[OsString])> {
        self.impl_argv
            .split_first()
            .ok_or_else(|| Failure::new("no implementation command given after --"))
    }

    /// When every wait of the trial ends: now + --timeout-s.
    pub fn deadline(&self) -> Result<Instant> {
        Instant::now()
            .checked_add(Duration::from_secs_f64(self.timeout_s))
            .ok_or_else(|| Failure::new("--timeout-s is too large"))
    }

    /// The client program's argv from --client-json, if given.
    pub fn client_argv(&self) -> std::result::Result<Option<Vec<String>>, String> {
        let Some(json) = self.client_json.as_deref() else {
            return Ok(None);
        };
        let argv: Vec<String> = serde_json::from_str(json)
            .map_err(|e| format!("--client-json must be a JSON list of strings ({e}): {json}"))?;
        if argv.first().is_none_or(String::is_empty) {
            return Err(format!("--client-json names no program: {json}"));
        }
        Ok(Some(argv))
    }

    /// --driver-cpus as a CPU set (None: not pinned).
    pub fn driver_set(&self) -> Result<Option<CpuSet>> {
        set_of(self.driver_cpus.as_ref(), "--driver-cpus")
    }

    /// --impl-cpus as a CPU set (None: not pinned).
    pub fn impl_set(&self) -> Result<Option<CpuSet>> {
        set_of(self.impl_cpus.as_ref(), "--impl-cpus")
    }

    /// Pins the calling thread (and the threads it starts later) to --driver-cpus, if given.
    pub fn pin_driver(&self) -> Result<()> {
        if let Some(set) = self.driver_set()? {
            set.apply_to_current_thread().map_err(|e| {
                Failure::new(format!(
                    "pinning the driver to {:?}: {e}",
                    self.driver_cpus.as_ref().map(|c| &c.0)
                ))
            })?;
        }
        Ok(())
    }
}

fn set_of(list: Option<&CpuList>, flag: &str) -> Result<Option<CpuSet>> {
    list.map(|cpus| CpuSet::from_list(&cpus.0).map_err(|e| Failure::new(format!("{flag}: {e}"))))
        .transpose()
}

/// A CPU list as given on the command line ("0", "1,3", "0-2,5"), kept in the order given
/// and printed as a JSON array of integers.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct CpuList(pub Vec<usize>);

impl CpuList {
    /// Parses comma-separated CPU numbers and inclusive ranges, as taskset and cpusets write
    /// them; refuses an empty list, a reversed range and CPUs beyond what a mask can hold.
    pub fn parse(text: &str) -> std::result::Result<CpuList, String> {
        let mut cpus = Vec::new();
        for part in text.split(',') {
            let part = part.trim();
            let number = |s: &str| {
                s.parse::<usize>()
                    .map_err(|_| format!("{s:?} in {text:?} is not a CPU number"))
            };
            match part.split_once('-') {
                Some((low, high)) => {
                    let (low, high) = (number(low)?, number(high)?);
                    if low > high {
                        return Err(format!("the range {part:?} in {text:?} is reversed"));
                    }
                    cpus.extend(low..=high);
                }
                None => cpus.push(number(part)?),
            }
        }
        let limit = CpuSet::limit();
        if let Some(cpu) = cpus.iter().find(|&&cpu| cpu >= limit) {
            return Err(format!("CPU {cpu} is out of range (0..{limit})"));
        }
        Ok(CpuList(cpus))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser, Debug)]
    struct Driver {
        #[arg(long)]
        size: usize,
        #[command(flatten)]
        common: CommonArgs,
    }

    fn parse(line: &str) -> std::result::Result<Driver, clap::Error> {
        Driver::try_parse_from(line.split_whitespace())
    }

    #[test]
    fn cpu_lists_take_numbers_and_ranges() {
        assert_eq!(CpuList::parse("1"), Ok(CpuList(vec![1])));
        assert_eq!(CpuList::parse("1,0"), Ok(CpuList(vec![1, 0])));
        assert_eq!(CpuList::parse("0-2,5"), Ok(CpuList(vec![0, 1, 2, 5])));
        for bad in ["", "a", "1,", "3-1", "-1", "1-", "100000"] {
            assert!(CpuList::parse(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            serde_json::to_string(&CpuList(vec![0, 1])).unwrap(),
            "[0,1]"
        );
    }

    #[test]
    fn the_contracts_command_line() {
        let d = parse(
            "d --size 3 --driver-cpus 0 --impl-cpus 1 --impl-stderr /tmp/e --timeout-s 5 \
             --impl-cwd /tmp --port 7600 --client-json [\"c\",\"-x\"] -- /bin/impl a -b",
        )
        .unwrap();
        d.common.validate().unwrap();
        assert_eq!(d.size, 3);
        let c = &d.common;
        assert_eq!(c.driver_cpus, Some(CpuList(vec![0])));
        assert_eq!(c.impl_cpus, Some(CpuList(vec![1])));
        assert_eq!(c.impl_stderr, Some(PathBuf::from("/tmp/e")));
        assert_eq!(c.impl_cwd, Some(PathBuf::from("/tmp")));
        assert_eq!((c.timeout_s, c.port), (5.0, Some(7600)));
        assert_eq!(c.impl_argv, ["/bin/impl", "a", "-b"]);
        assert_eq!(
            (c.impl_host, c.impl_agent.as_deref()),
            (Ipv4Addr::LOCALHOST, None)
        );
        let (program, rest) = c.program().unwrap();
        assert_eq!((program.to_str(), rest.len()), (Some("/bin/impl"), 2));
        assert_eq!(
            c.client_argv().unwrap(),
            Some(vec!["c".to_string(), "-x".to_string()])
        );
        assert!(c.deadline().unwrap() > Instant::now());
    }

    #[test]
    fn defaults_and_refusals() {
        let d = parse("d --size 1 -- x").unwrap();
        d.common.validate().unwrap();
        assert_eq!(d.common.timeout_s, 60.0);
        assert_eq!(d.common.driver_cpus, None);
        assert_eq!(d.common.client_argv(), Ok(None));
        assert!(d.common.impl_set().unwrap().is_none());

        let remote =
            parse("d --size 1 --impl-agent 10.0.0.3:4000 --impl-host 10.0.0.3 -- x").unwrap();
        assert_eq!(remote.common.impl_agent.as_deref(), Some("10.0.0.3:4000"));
        assert_eq!(remote.common.impl_host, Ipv4Addr::new(10, 0, 0, 3));
        assert!(parse("d --size 1 --impl-host nope -- x").is_err());

        // Gone: the old nativemsg names.
        assert!(parse("d --size 1 --host-cpus 1 -- x").is_err());
        assert!(parse("d --size 1").is_err(), "IMPL_ARGV is required");
        assert!(parse("d --size 1 --driver-cpus 2-1 -- x").is_err());
        for (line, expect) in [
            ("d --size 1 --timeout-s 0 -- x", "--timeout-s"),
            ("d --size 1 --timeout-s nan -- x", "--timeout-s"),
            ("d --size 1 --port 0 -- x", "--port"),
            ("d --size 1 --client-json [] -- x", "names no program"),
            (
                "d --size 1 --client-json {\"a\":1} -- x",
                "JSON list of strings",
            ),
        ] {
            let err = parse(line).unwrap().common.validate().unwrap_err();
            assert!(err.contains(expect), "{line}: {err}");
        }
    }
}
