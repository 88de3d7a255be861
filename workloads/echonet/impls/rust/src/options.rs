//! Command lines of the node (SPEC §7) and the controller (SPEC §8).
//!
//! Options take their value as the next argument or after `=`; they may appear before or
//! after the command's own arguments. Every error names the problem; the programs print it
//! on stderr and exit 2.

use crate::frame::{Eoj, PORT};
use crate::transport::Config;
use std::io::Write;
use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::time::Duration;

pub const NODE_USAGE: &str = "\
usage: echonet-rust-node [--bind IPV4] [--ifaddr IPV4] [--port N]

An ECHONET Lite node (node profile 0x0EF001 and a home air conditioner 0x013001) on UDP.
  --bind IPV4     address to bind (default 0.0.0.0: unicast and multicast)
  --ifaddr IPV4   interface address for multicast and the node's id (default: --bind)
  --port N        UDP port (default 3610)
  --help          this text
Prints READY once listening; SIGTERM or SIGINT prints the counters as JSON and exits 0.";

pub const CONTROLLER_USAGE: &str = "\
usage: echonet-rust-controller [--bind IPV4] [--ifaddr IPV4] [--port N] [--timeout-ms MS]
                               [--retries N] COMMAND ARGS...
commands:
  get HOST EOJ EPCS             one Get, prints the reply
  setc HOST EOJ SETS            one SetC
  seti HOST EOJ SETS            one SetI (sent once; \"esv\": null when no SetI_SNA came)
  setget HOST EOJ SETS EPCS     one SetGet
  inf-req HOST EOJ EPCS         one INF_REQ
  discover [--expect N] [--wait-ms MS]
                                multicast Get 0xD6 to 0x0EF001, list the nodes that answer
  bench HOST --mode faithful|batched --iterations N [--warmup N]
                                the seed's loop of node-profile Gets, timed
EOJ: six hex digits (0ef001); EPCS: 80,82; SETS: 80=30,b3=19.
options: --bind (default 0.0.0.0), --ifaddr (default --bind), --port (default 3610),
         --timeout-ms per attempt (default 500), --retries after the first (default 3)";

/// A parsed command line, or a request for the usage text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Parsed<T> {
    Run(T),
    Help,
}

/// The program's own command line, parsed by `parse`: the options to run with, or the exit
/// status once `--help` printed the usage (0) or a bad command line was reported (2).
pub fn from_command_line<T>(
    name: &str,
    usage: &str,
    parse: fn(&[String]) -> Result<Parsed<T>, String>,
) -> Result<T, ExitCode> {
    let args: Result<Vec<String>, _> = std::env::args_os()
        .skip(1)
        .map(|a| a.into_string())
        .collect();
    let parsed = match args {
        Ok(args) => parse(&args),
        Err(bad) => Err(format!("argument {bad:?} is not UTF-8")),
    };
    match parsed {
        Ok(Parsed::Run(options)) => Ok(options),
        Ok(Parsed::Help) => {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{usage}");
            let _ = out.flush();
            Err(ExitCode::SUCCESS)
        }
        Err(msg) => {
            eprintln!("{name}: {msg}\n{usage}");
            Err(ExitCode::from(2))
        }
    }
}

/// The node's command line.
pub fn parse_node(args: &[String]) -> Result<Parsed<Config>, String> {
    let mut common = Common::default();
    for arg in split(args)? {
        match arg {
            Arg::Help => return Ok(Parsed::Help),
            Arg::Option(name, value) => {
                if !common.take(name, value)? {
                    return Err(format!("unknown option --{name}"));
                }
            }
            Arg::Positional(p) => return Err(format!("unexpected argument '{p}'")),
        }
    }
    Ok(Parsed::Run(common.config()))
}

/// The controller's settings and its command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ControllerOptions {
    pub transport: Config,
    pub timeout: Duration,
    pub retries: u32,
    pub command: Command,
}

/// One property to set: its code and data.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetProperty {
    pub epc: u8,
    pub edt: Vec<u8>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchMode {
    /// 12 one-property Gets per iteration, each awaited.
    Faithful,
    /// One Get of all 12 per iteration.
    Batched,
}

impl BenchMode {
    pub fn name(self) -> &'static str {
        match self {
            BenchMode::Faithful => "faithful",
            BenchMode::Batched => "batched",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Command {
    Get {
        host: Ipv4Addr,
        eoj: Eoj,
        epcs: Vec<u8>,
    },
    SetC {
        host: Ipv4Addr,
        eoj: Eoj,
        sets: Vec<SetProperty>,
    },
    SetI {
        host: Ipv4Addr,
        eoj: Eoj,
        sets: Vec<SetProperty>,
    },
    SetGet {
        host: Ipv4Addr,
        eoj: Eoj,
        sets: Vec<SetProperty>,
        epcs: Vec<u8>,
    },
    InfReq {
        host: Ipv4Addr,
        eoj: Eoj,
        epcs: Vec<u8>,
    },
    Discover {
        expect: Option<usize>,
        wait: Duration,
    },
    Bench {
        host: Ipv4Addr,
        mode: BenchMode,
        iterations: u64,
        warmup: u64,
    },
}

/// Longest wait an option may ask for: one day.
const MAX_MS: u64 = 86_400_000;

/// The controller's command line.
pub fn parse_controller(args: &[String]) -> Result<Parsed<ControllerOptions>, String> {
    let mut common = Common::default();
    let mut timeout = Duration::from_millis(500);
    let mut retries = 3u32;
    let mut positional: Vec<&str> = Vec::new();
    // Options only some commands take, checked once the command is known.
    let mut expect = None;
    let mut wait = None;
    let mut mode = None;
    let mut iterations = None;
    let mut warmup = None;
    let mut specific: Vec<&str> = Vec::new();
    for arg in split(args)? {
        match arg {
            Arg::Help => return Ok(Parsed::Help),
            Arg::Positional(p) => positional.push(p),
            Arg::Option(name, value) => {
                if common.take(name, value)? {
                    continue;
                }
                match name {
                    "timeout-ms" => {
                        timeout = Duration::from_millis(number(name, value, 1, MAX_MS)?)
                    }
                    "retries" => retries = number(name, value, 0, u32::MAX.into())?,
                    "expect" => expect = Some(number(name, value, 1, u32::MAX.into())?),
                    "wait-ms" => {
                        wait = Some(Duration::from_millis(number(name, value, 1, MAX_MS)?))
                    }
                    "iterations" => iterations = Some(number(name, value, 1, u64::MAX)?),
                    "warmup" => warmup = Some(number(name, value, 0, u64::MAX)?),
                    "mode" => {
                        mode = Some(match value {
                            "faithful" => BenchMode::Faithful,
                            "batched" => BenchMode::Batched,
                            _ => return Err(format!("bad --mode '{value}' (faithful|batched)")),
                        })
                    }
                    _ => return Err(format!("unknown option --{name}")),
                }
                specific.push(name);
            }
        }
    }
    let Some((&command, rest)) = positional.split_first() else {
        return Err("missing COMMAND".into());
    };
    let allowed: &[&str] = match command {
        "discover" => &["expect", "wait-ms"],
        "bench" => &["mode", "iterations", "warmup"],
        _ => &[],
    };
    if let Some(name) = specific
        .iter()
        .find(|n| !["timeout-ms", "retries"].contains(n) && !allowed.contains(n))
    {
        return Err(format!("--{name} does not apply to '{command}'"));
    }
    let arity = |n: usize| -> Result<(), String> {
        if rest.len() == n {
            Ok(())
        } else {
            Err(format!(
                "'{command}' takes {n} argument(s), got {}",
                rest.len()
            ))
        }
    };
    let command = match command {
        "get" | "inf-req" => {
            arity(3)?;
            let (host, eoj, epcs) = (host(rest[0])?, eoj(rest[1])?, epc_list(rest[2], false)?);
            if command == "get" {
                Command::Get { host, eoj, epcs }
            } else {
                Command::InfReq { host, eoj, epcs }
            }
        }
        "setc" | "seti" => {
            arity(3)?;
            let (host, eoj, sets) = (host(rest[0])?, eoj(rest[1])?, set_list(rest[2], false)?);
            if command == "setc" {
                Command::SetC { host, eoj, sets }
            } else {
                Command::SetI { host, eoj, sets }
            }
        }
        "setget" => {
            arity(4)?;
            // Either part may be empty (""), not both: a SetGet needs one property at least.
            let sets = set_list(rest[2], true)?;
            let epcs = epc_list(rest[3], true)?;
            if sets.is_empty() && epcs.is_empty() {
                return Err("setget needs at least one property".into());
            }
            Command::SetGet {
                host: host(rest[0])?,
                eoj: eoj(rest[1])?,
                sets,
                epcs,
            }
        }
        "discover" => {
            arity(0)?;
            Command::Discover {
                expect,
                wait: wait.unwrap_or(Duration::from_millis(1000)),
            }
        }
        "bench" => {
            arity(1)?;
            Command::Bench {
                host: host(rest[0])?,
                mode: mode.ok_or("bench needs --mode faithful|batched")?,
                iterations: iterations.ok_or("bench needs --iterations N")?,
                warmup: warmup.unwrap_or(0),
            }
        }
        other => return Err(format!("unknown command '{other}'")),
    };
    Ok(Parsed::Run(ControllerOptions {
        transport: common.config(),
        timeout,
        retries,
        command,
    }))
}

/// One argument, split into its kind.
enum Arg<'a> {
    Help,
    Option(&'a str, &'a str),
    Positional(&'a str),
}

/// Splits argv into options (with their values) and positional arguments.
fn split(args: &[String]) -> Result<Vec<Arg<'_>>, String> {
    let mut out = Vec::new();
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        if arg == "--help" || arg == "-h" {
            out.push(Arg::Help);
        } else if let Some(option) = arg.strip_prefix("--") {
            let (name, value) = match option.split_once('=') {
                Some((name, value)) => (name, value),
                None => (
                    option,
                    it.next()
                        .ok_or_else(|| format!("--{option} needs a value"))?
                        .as_str(),
                ),
            };
            out.push(Arg::Option(name, value));
        } else if arg.starts_with('-') && arg.len() > 1 {
            return Err(format!("unknown option {arg}"));
        } else {
            out.push(Arg::Positional(arg));
        }
    }
    Ok(out)
}

/// The options both programs take.
#[derive(Default)]
struct Common {
    bind: Option<Ipv4Addr>,
    ifaddr: Option<Ipv4Addr>,
    port: Option<u16>,
}

impl Common {
    /// Takes the option if it is one of these; false if it is not.
    fn take(&mut self, name: &str, value: &str) -> Result<bool, String> {
        match name {
            "bind" => self.bind = Some(address(name, value)?),
            "ifaddr" => self.ifaddr = Some(address(name, value)?),
            "port" => self.port = Some(number(name, value, 1, u16::MAX.into())?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    fn config(&self) -> Config {
        let bind = self.bind.unwrap_or(Ipv4Addr::UNSPECIFIED);
        Config {
            bind,
            ifaddr: self.ifaddr.unwrap_or(bind),
            port: self.port.unwrap_or(PORT),
        }
    }
}

fn address(name: &str, value: &str) -> Result<Ipv4Addr, String> {
    value
        .parse()
        .map_err(|_| format!("bad --{name} '{value}' (an IPv4 address)"))
}

/// A decimal number from `min` to `max`, converted to the option's type.
fn number<T: TryFrom<u64>>(name: &str, value: &str, min: u64, max: u64) -> Result<T, String> {
    value
        .parse::<u64>()
        .ok()
        .filter(|n| (min..=max).contains(n))
        .and_then(|n| T::try_from(n).ok())
        .ok_or_else(|| format!("bad --{name} '{value}' (an integer from {min} to {max})"))
}

fn host(value: &str) -> Result<Ipv4Addr, String> {
    value
        .parse()
        .map_err(|_| format!("bad HOST '{value}' (an IPv4 address)"))
}

/// Hex digits to bytes (either case); `None` for an odd count or a non-hex character.
pub fn parse_hex(s: &str) -> Option<Vec<u8>> {
    if !s.len().is_multiple_of(2) {
        return None;
    }
    s.as_bytes()
        .chunks_exact(2)
        .map(|pair| {
            let digit = |c: u8| char::from(c).to_digit(16);
            Some((digit(pair[0])? * 16 + digit(pair[1])?) as u8)
        })
        .collect()
}

fn eoj(value: &str) -> Result<Eoj, String> {
    match parse_hex(value).as_deref() {
        Some(&[g, c, i]) => Ok(Eoj::new(g, c, i)),
        _ => Err(format!("bad EOJ '{value}' (six hex digits, e.g. 0ef001)")),
    }
}

fn epc(value: &str) -> Result<u8, String> {
    match parse_hex(value).as_deref() {
        Some(&[e]) => Ok(e),
        _ => Err(format!("bad EPC '{value}' (two hex digits, e.g. 80)")),
    }
}

/// A frame holds at most 255 properties per list (OPC is one byte).
const MAX_PROPERTIES: usize = 255;

fn epc_list(value: &str, may_be_empty: bool) -> Result<Vec<u8>, String> {
    if value.is_empty() {
        return if may_be_empty {
            Ok(Vec::new())
        } else {
            Err("empty EPCS".into())
        };
    }
    let epcs = value.split(',').map(epc).collect::<Result<Vec<u8>, _>>()?;
    if epcs.len() > MAX_PROPERTIES {
        return Err(format!("more than {MAX_PROPERTIES} EPCs"));
    }
    Ok(epcs)
}

fn set_list(value: &str, may_be_empty: bool) -> Result<Vec<SetProperty>, String> {
    if value.is_empty() {
        return if may_be_empty {
            Ok(Vec::new())
        } else {
            Err("empty SETS".into())
        };
    }
    let sets = value
        .split(',')
        .map(|item| {
            let (code, data) = item
                .split_once('=')
                .ok_or_else(|| format!("bad SETS item '{item}' (EPC=HEXDATA)"))?;
            let edt = parse_hex(data)
                .filter(|d| d.len() <= usize::from(u8::MAX))
                .ok_or_else(|| format!("bad data in '{item}' (up to 255 bytes of hex)"))?;
            Ok(SetProperty {
                epc: epc(code)?,
                edt,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    if sets.len() > MAX_PROPERTIES {
        return Err(format!("more than {MAX_PROPERTIES} properties to set"));
    }
    Ok(sets)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    fn node(s: &[&str]) -> Result<Parsed<Config>, String> {
        parse_node(&args(s))
    }

    fn controller(s: &[&str]) -> Result<ControllerOptions, String> {
        match parse_controller(&args(s))? {
            Parsed::Run(o) => Ok(o),
            Parsed::Help => Err("help".into()),
        }
    }

    #[test]
    fn node_defaults_and_options() {
        let any = Ipv4Addr::UNSPECIFIED;
        assert_eq!(
            node(&[]),
            Ok(Parsed::Run(Config {
                bind: any,
                ifaddr: any,
                port: 3610
            }))
        );
        assert_eq!(
            node(&["--bind", "127.0.30.1"]),
            Ok(Parsed::Run(Config {
                bind: Ipv4Addr::new(127, 0, 30, 1),
                ifaddr: Ipv4Addr::new(127, 0, 30, 1),
                port: 3610
            }))
        );
        assert_eq!(
            node(&["--ifaddr=10.0.0.2", "--port", "65535"]),
            Ok(Parsed::Run(Config {
                bind: any,
                ifaddr: Ipv4Addr::new(10, 0, 0, 2),
                port: 65535
            }))
        );
        assert_eq!(node(&["--port", "1", "--help"]), Ok(Parsed::Help));
    }

    #[test]
    fn node_rejects_bad_command_lines() {
        for bad in [
            &["--port", "0"][..],
            &["--port", "65536"],
            &["--port", "-1"],
            &["--port"],
            &["--bind", "256.0.0.1"],
            &["--bind", "localhost"],
            &["--ifaddr", "::1"],
            &["--verbose", "1"],
            &["-x"],
            &["extra"],
        ] {
            assert!(node(bad).is_err(), "{bad:?}");
        }
        let e = node(&["--port", "70000"]).unwrap_err();
        assert!(e.contains("--port") && e.contains("65535"), "{e}");
    }

    #[test]
    fn controller_commands() {
        let o = controller(&[
            "--bind",
            "127.0.30.2",
            "get",
            "127.0.30.1",
            "0EF001",
            "80,d6",
        ])
        .unwrap();
        assert_eq!(o.transport.bind, Ipv4Addr::new(127, 0, 30, 2));
        assert_eq!((o.timeout, o.retries), (Duration::from_millis(500), 3));
        assert_eq!(
            o.command,
            Command::Get {
                host: Ipv4Addr::new(127, 0, 30, 1),
                eoj: Eoj::NODE_PROFILE,
                epcs: vec![0x80, 0xD6]
            }
        );
        let o = controller(&[
            "setc",
            "127.0.30.1",
            "013001",
            "80=30,B3=19",
            "--retries",
            "0",
        ])
        .unwrap();
        assert_eq!(o.retries, 0);
        assert_eq!(
            o.command,
            Command::SetC {
                host: Ipv4Addr::new(127, 0, 30, 1),
                eoj: Eoj::AIR_CONDITIONER,
                sets: vec![
                    SetProperty {
                        epc: 0x80,
                        edt: vec![0x30]
                    },
                    SetProperty {
                        epc: 0xB3,
                        edt: vec![0x19]
                    }
                ]
            }
        );
        let o = controller(&["setget", "127.0.30.1", "013001", "", "80"]).unwrap();
        assert!(matches!(o.command, Command::SetGet { ref sets, .. } if sets.is_empty()));
        let o = controller(&["seti", "127.0.30.1", "013001", "81="]).unwrap();
        assert!(matches!(o.command, Command::SetI { ref sets, .. } if sets[0].edt.is_empty()));
        let o = controller(&["--timeout-ms=20", "discover", "--expect", "8"]).unwrap();
        assert_eq!(o.timeout, Duration::from_millis(20));
        assert_eq!(
            o.command,
            Command::Discover {
                expect: Some(8),
                wait: Duration::from_millis(1000)
            }
        );
        let o = controller(&[
            "bench",
            "127.0.30.1",
            "--mode",
            "batched",
            "--iterations",
            "10",
        ])
        .unwrap();
        assert_eq!(
            o.command,
            Command::Bench {
                host: Ipv4Addr::new(127, 0, 30, 1),
                mode: BenchMode::Batched,
                iterations: 10,
                warmup: 0
            }
        );
        assert!(matches!(
            parse_controller(&args(&["get", "--help"])),
            Ok(Parsed::Help)
        ));
    }

    #[test]
    fn controller_rejects_bad_command_lines() {
        for bad in [
            &[][..],
            &["frobnicate"],
            &["get", "127.0.30.1", "0ef001"],
            &["get", "127.0.30.1", "0ef001", "80", "extra"],
            &["get", "127.0.30.x", "0ef001", "80"],
            &["get", "127.0.30.1", "0ef0011", "80"],
            &["get", "127.0.30.1", "0ef0g1", "80"],
            &["get", "127.0.30.1", "0ef001", ""],
            &["get", "127.0.30.1", "0ef001", "8"],
            &["get", "127.0.30.1", "0ef001", "80,"],
            &["get", "127.0.30.1", "0ef001", "80", "--expect", "1"],
            &["setc", "127.0.30.1", "013001", "80"],
            &["setc", "127.0.30.1", "013001", "80=3"],
            &["setc", "127.0.30.1", "013001", "80=zz"],
            &["setget", "127.0.30.1", "013001", "", ""],
            &["discover", "--expect", "0"],
            &["discover", "extra"],
            &["bench", "127.0.30.1", "--iterations", "10"],
            &[
                "bench",
                "127.0.30.1",
                "--mode",
                "fast",
                "--iterations",
                "10",
            ],
            &["bench", "127.0.30.1", "--mode", "faithful"],
            &[
                "bench",
                "127.0.30.1",
                "--mode",
                "faithful",
                "--iterations",
                "0",
            ],
            &["--timeout-ms", "0", "discover"],
            &["--retries", "-1", "discover"],
            &["--port", "0", "discover"],
        ] {
            assert!(controller(bad).is_err(), "{bad:?}");
        }
        let too_many = vec!["80"; 256].join(",");
        assert!(controller(&["get", "127.0.30.1", "0ef001", &too_many]).is_err());
    }

    #[test]
    fn hex() {
        assert_eq!(parse_hex(""), Some(vec![]));
        assert_eq!(parse_hex("0aFf"), Some(vec![0x0A, 0xFF]));
        assert_eq!(parse_hex("abc"), None);
        assert_eq!(parse_hex("+1"), None);
        assert_eq!(parse_hex("é1"), None);
    }
}
