//! The command line (README.md beside src/): the scenario's options and the driver contract's
//! common ones (docs/driver-contract.md):
//!
//! ```text
//! echonet-driver --mode faithful|batched|load|discovery|own [--iterations N] [--warmup N]
//!                [--requests N] [--controllers N] [--rounds N] [--request-timeout-ms MS]
//!                [--retries N] [--node-addrs LIST] [--node-netns LIST] [--ctl-addr IP]
//!                [--ctl-netns NAME] [--port 3610] [--client-json JSON]
//!                [--driver-cpus 0] [--impl-cpus 1] [--impl-stderr FILE] [--impl-cwd DIR]
//!                [--timeout-s 60] -- NODE_ARGV...
//! ```

use clap::{Parser, ValueEnum};
use driver_kit::output::DriverArgs;
use driver_kit::CommonArgs;
use serde::Serialize;
use std::net::Ipv4Addr;
use std::time::Duration;

/// The UDP port of ECHONET Lite (SPEC §2), when --port is not given.
pub const DEFAULT_PORT: u16 = 3610;
pub const DEFAULT_REQUEST_TIMEOUT_MS: u64 = 200;
pub const DEFAULT_RETRIES: u32 = 5;
/// Each controller is a socket: far below any open-file limit, far above any scenario.
pub const MAX_CONTROLLERS: u64 = 1024;
/// One bridge holds at most 250 hosts (msgbench.topology).
pub const MAX_NODES: usize = 250;
/// One attempt's wait: beyond a minute a trial is not measuring a node any more.
const MAX_REQUEST_TIMEOUT_MS: u64 = 60_000;
const MAX_RETRIES: u32 = 1000;
/// Requests per faithful iteration: the node profile's 12 properties.
pub const GETS_PER_ITERATION: u64 = 12;

#[derive(Parser, Debug)]
#[command(
    name = "echonet-driver",
    version,
    about = "Measures an ECHONET Lite node (workloads/echonet/SPEC.md): starts it pinned (in a \
             network namespace when asked), loads it over UDP as a controller that checks \
             every reply byte, or runs the implementation's own controller, reads its CPU and \
             peak RSS, stops it, and prints one JSON object",
    after_help = "NODE_ARGV is the node's command line; the driver appends --bind, --ifaddr \
                  and --port. --port is the UDP port of the nodes and of the driver (default \
                  3610, SPEC §2). --client-json is the implementation's controller (--mode \
                  own). --impl-stderr takes the nodes' and the own controller's stderr; --impl-cwd is \
                  their working directory (default: the driver's). \
                  Exit status: 0 with the results on stdout; 1 with {\"error\": \"...\"} on \
                  stdout when the trial failed (a wrong reply, a request unanswered after its \
                  retries, a node that died, hung or misreported its counters, a timeout); 2 \
                  with {\"error\": \"bad command line: ...\"} for a bad command line."
)]
pub struct Args {
    /// faithful: per iteration 12 one-property Gets of the node profile, each awaited;
    /// batched: one 12-property Get per iteration; load: concurrent controllers; discovery:
    /// multicast discovery of every node; own: the implementation's own controller (`bench`)
    #[arg(long, value_enum)]
    pub mode: Mode,

    /// faithful, batched, own: measured iterations
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,

    /// Iterations (load: requests; discovery: rounds) before the measured ones, checked but
    /// not recorded
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub warmup: u64,

    /// load: measured requests, all controllers together
    #[arg(long, value_name = "N")]
    pub requests: Option<u64>,

    /// load: concurrent controllers, each a socket with one request outstanding
    #[arg(long, value_name = "N")]
    pub controllers: Option<u64>,

    /// discovery: discoveries measured
    #[arg(long, value_name = "N")]
    pub rounds: Option<u64>,

    /// How long one attempt waits for its reply [default: 200]
    #[arg(long, value_name = "MS")]
    pub request_timeout_ms: Option<u64>,

    /// Resends of an unanswered request (the same datagram) before the trial fails
    /// [default: 5]
    #[arg(long, value_name = "N")]
    pub retries: Option<u32>,

    /// The nodes' IPv4 addresses, comma-separated: one node is started per address
    #[arg(
        long,
        value_name = "LIST",
        value_delimiter = ',',
        default_value = "127.0.0.1"
    )]
    pub node_addrs: Vec<Ipv4Addr>,

    /// One network namespace (/run/netns/NAME) per node, comma-separated: each node starts
    /// inside its own with --bind 0.0.0.0 --ifaddr ADDR
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub node_netns: Option<Vec<String>>,

    /// The driver's own address: its sockets bind there
    #[arg(long, value_name = "IP", default_value_t = Ipv4Addr::new(127, 0, 0, 2))]
    pub ctl_addr: Ipv4Addr,

    /// A network namespace the driver enters at start-up (the nodes it starts outside
    /// --node-netns inherit it)
    #[arg(long, value_name = "NAME")]
    pub ctl_netns: Option<String>,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Faithful,
    Batched,
    Load,
    Discovery,
    Own,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Faithful => "faithful",
            Mode::Batched => "batched",
            Mode::Load => "load",
            Mode::Discovery => "discovery",
            Mode::Own => "own",
        }
    }
}

impl DriverArgs for Args {
    /// Checks what clap cannot: ranges and combinations. Returns a message for a usage error.
    fn validate(&self) -> Result<(), String> {
        self.common.validate()?;
        let mode = self.mode;
        let flag = |name: &str, given: bool, modes: &[Mode]| -> Result<(), String> {
            if given && !modes.contains(&mode) {
                let names: Vec<&str> = modes.iter().map(|m| m.name()).collect();
                return Err(format!(
                    "{name} applies to --mode {}, not {}",
                    names.join("|"),
                    mode.name()
                ));
            }
            if !given && modes.contains(&mode) && name != "--warmup" {
                return Err(format!("--mode {} needs {name}", mode.name()));
            }
            Ok(())
        };
        use Mode::*;
        flag(
            "--iterations",
            self.iterations.is_some(),
            &[Faithful, Batched, Own],
        )?;
        flag("--requests", self.requests.is_some(), &[Load])?;
        flag("--controllers", self.controllers.is_some(), &[Load])?;
        flag("--rounds", self.rounds.is_some(), &[Discovery])?;
        for (name, value) in [
            ("--iterations", self.iterations),
            ("--requests", self.requests),
            ("--controllers", self.controllers),
            ("--rounds", self.rounds),
        ] {
            if value == Some(0) {
                return Err(format!("{name} must be at least 1"));
            }
        }
        if let Some(n) = self.controllers.filter(|&n| n > MAX_CONTROLLERS) {
            return Err(format!(
                "--controllers must be 1..={MAX_CONTROLLERS}, not {n}"
            ));
        }
        let total = self.measured().saturating_add(self.warmup);
        total
            .checked_mul(GETS_PER_ITERATION)
            .ok_or("--iterations + --warmup overflows a 64-bit request count")?;
        if mode == Own {
            if self.request_timeout_ms.is_some() || self.retries.is_some() {
                return Err(
                    "--request-timeout-ms and --retries are the driver's own requests; --mode \
                     own runs the controller with its defaults"
                        .to_string(),
                );
            }
            self.client_argv()?;
        }
        if let Some(ms) = self.request_timeout_ms {
            if !(1..=MAX_REQUEST_TIMEOUT_MS).contains(&ms) {
                return Err(format!(
                    "--request-timeout-ms must be 1..={MAX_REQUEST_TIMEOUT_MS}, not {ms}"
                ));
            }
        }
        if self.retries.is_some_and(|n| n > MAX_RETRIES) {
            return Err(format!("--retries must be at most {MAX_RETRIES}"));
        }
        self.validate_hosts()
    }
}

impl Args {
    fn validate_hosts(&self) -> Result<(), String> {
        let nodes = &self.node_addrs;
        if nodes.is_empty() || nodes.len() > MAX_NODES {
            return Err(format!(
                "--node-addrs must name 1..={MAX_NODES} addresses, not {}",
                nodes.len()
            ));
        }
        if self.mode != Mode::Discovery && nodes.len() != 1 {
            return Err(format!(
                "--mode {} loads one node: --node-addrs names {}",
                self.mode.name(),
                nodes.len()
            ));
        }
        for (i, addr) in nodes.iter().chain([&self.ctl_addr]).enumerate() {
            let flag = if i < nodes.len() {
                "--node-addrs"
            } else {
                "--ctl-addr"
            };
            if addr.is_unspecified() || addr.is_multicast() || addr.is_broadcast() {
                return Err(format!(
                    "{flag}: {addr} is not the unicast address of one host"
                ));
            }
        }
        for (i, addr) in nodes.iter().enumerate() {
            if nodes[..i].contains(addr) {
                return Err(format!("--node-addrs names {addr} twice"));
            }
            if *addr == self.ctl_addr {
                return Err(format!(
                    "--ctl-addr {addr} is a node's address too: every program needs an address \
                     of its own on port {} (SPEC §2)",
                    self.port()
                ));
            }
        }
        match &self.node_netns {
            Some(names) if names.len() != nodes.len() => {
                return Err(format!(
                    "--node-netns names {} namespaces for {} --node-addrs",
                    names.len(),
                    nodes.len()
                ))
            }
            None if self.mode == Mode::Discovery => {
                return Err(
                    "--mode discovery needs --node-netns: a node receives multicast only bound \
                     to 0.0.0.0, which needs a network namespace of its own (SPEC §2)"
                        .to_string(),
                )
            }
            _ => {}
        }
        for name in self.node_netns.iter().flatten().chain(&self.ctl_netns) {
            check_netns_name(name)?;
        }
        Ok(())
    }

    /// The UDP port of the nodes and the driver.
    pub fn port(&self) -> u16 {
        self.common.port.unwrap_or(DEFAULT_PORT)
    }

    pub fn request_timeout(&self) -> Duration {
        Duration::from_millis(
            self.request_timeout_ms
                .unwrap_or(DEFAULT_REQUEST_TIMEOUT_MS),
        )
    }

    pub fn retries(&self) -> u32 {
        self.retries.unwrap_or(DEFAULT_RETRIES)
    }

    /// The measured count of the mode: iterations, requests or rounds (validated: present).
    pub fn measured(&self) -> u64 {
        match self.mode {
            Mode::Faithful | Mode::Batched | Mode::Own => self.iterations,
            Mode::Load => self.requests,
            Mode::Discovery => self.rounds,
        }
        .unwrap_or_default()
    }

    /// The own controller's argv from --client-json, which --mode own needs.
    pub fn client_argv(&self) -> Result<Vec<String>, String> {
        self.common.client_argv()?.ok_or_else(|| {
            "--mode own needs --client-json (the implementation's controller)".to_string()
        })
    }

    /// The namespace of node `i`, if nodes run in namespaces.
    pub fn node_netns(&self, i: usize) -> Option<&str> {
        self.node_netns
            .as_ref()
            .and_then(|names| names.get(i))
            .map(String::as_str)
    }
}

/// A name `ip netns` could have made: a file name in /run/netns.
fn check_netns_name(name: &str) -> Result<(), String> {
    if name.is_empty() || name == "." || name == ".." || name.contains('/') || name.contains('\0') {
        return Err(format!(
            "{name:?} is not a network namespace name (a file in /run/netns)"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use driver_kit::CpuList;

    fn parse(line: &str) -> Result<Args, clap::Error> {
        Args::try_parse_from(line.split_whitespace())
    }

    fn refused(line: &str) -> String {
        parse(line).unwrap().validate().unwrap_err()
    }

    #[test]
    fn parses_the_harness_command_line() {
        let args = parse(
            "d --mode faithful --iterations 50 --warmup 5 --port 3610 \
             --node-addrs 127.200.1.2 --ctl-addr 127.200.1.3 --driver-cpus 0 --impl-cpus 1 \
             --impl-stderr /tmp/e --timeout-s 30 -- /bin/node --flag",
        )
        .unwrap();
        args.validate().unwrap();
        assert_eq!(args.mode, Mode::Faithful);
        assert_eq!(
            (args.iterations, args.warmup, args.measured()),
            (Some(50), 5, 50)
        );
        assert_eq!(args.node_addrs, [Ipv4Addr::new(127, 200, 1, 2)]);
        assert_eq!(args.ctl_addr, Ipv4Addr::new(127, 200, 1, 3));
        assert_eq!(args.port(), 3610);
        assert_eq!(args.common.driver_cpus, Some(CpuList(vec![0])));
        assert_eq!(args.common.impl_argv, ["/bin/node", "--flag"]);
        assert_eq!(args.request_timeout(), Duration::from_millis(200));
        assert_eq!(args.retries(), 5);
        assert_eq!(args.node_netns(0), None);

        let discovery = parse(
            "d --mode discovery --rounds 20 --node-addrs 10.201.0.3,10.201.0.4 \
             --node-netns mb-1-0-1,mb-1-0-2 --ctl-addr 10.201.0.2 --ctl-netns mb-1-0-0 \
             --request-timeout-ms 20 --retries 30 --port 3610 -- n",
        )
        .unwrap();
        discovery.validate().unwrap();
        assert_eq!(discovery.node_addrs.len(), 2);
        assert_eq!(discovery.node_netns(1), Some("mb-1-0-2"));
        assert_eq!(discovery.ctl_netns.as_deref(), Some("mb-1-0-0"));
        assert_eq!(discovery.request_timeout(), Duration::from_millis(20));
        assert_eq!((discovery.retries(), discovery.measured()), (30, 20));

        let load = parse("d --mode load --controllers 8 --requests 500 --warmup 50 -- n").unwrap();
        load.validate().unwrap();
        assert_eq!((load.controllers, load.measured()), (Some(8), 500));
        assert_eq!(load.node_addrs, [Ipv4Addr::new(127, 0, 0, 1)]);
        assert_eq!(load.ctl_addr, Ipv4Addr::new(127, 0, 0, 2));

        let own = parse(
            "d --mode own --iterations 100 --warmup 0 --port 3610 \
             --client-json [\"/bin/ctl\",\"-v\"] -- n",
        )
        .unwrap();
        own.validate().unwrap();
        assert_eq!(own.client_argv().unwrap(), ["/bin/ctl", "-v"]);
    }

    #[test]
    fn refuses_bad_values_and_combinations() {
        for (line, expect) in [
            (
                "d --mode faithful -- n",
                "--mode faithful needs --iterations",
            ),
            ("d --mode load --controllers 1 -- n", "needs --requests"),
            ("d --mode load --requests 1 -- n", "needs --controllers"),
            ("d --mode discovery --node-netns a -- n", "needs --rounds"),
            ("d --mode own -- n", "needs --iterations"),
            (
                "d --mode batched --iterations 1 --rounds 3 -- n",
                "--rounds applies to --mode discovery, not batched",
            ),
            (
                "d --mode load --controllers 1 --requests 1 --iterations 1 -- n",
                "--iterations applies to --mode faithful|batched|own",
            ),
            ("d --mode faithful --iterations 0 -- n", "at least 1"),
            (
                "d --mode load --controllers 2000 --requests 1 -- n",
                "--controllers must be 1..=1024",
            ),
            (
                "d --mode faithful --iterations 18446744073709551615 -- n",
                "overflows",
            ),
            (
                "d --mode faithful --iterations 1 --request-timeout-ms 0 -- n",
                "--request-timeout-ms",
            ),
            (
                "d --mode faithful --iterations 1 --retries 5000 -- n",
                "--retries",
            ),
            ("d --mode own --iterations 1 -- n", "needs --client-json"),
            (
                "d --mode own --iterations 1 --retries 1 --client-json [\"c\"] -- n",
                "--mode own runs the controller",
            ),
            (
                "d --mode faithful --iterations 1 --node-addrs 127.0.0.5,127.0.0.6 -- n",
                "loads one node",
            ),
            (
                "d --mode discovery --rounds 1 --node-addrs 10.0.0.1,10.0.0.1 \
                 --node-netns a,b -- n",
                "names 10.0.0.1 twice",
            ),
            (
                "d --mode faithful --iterations 1 --node-addrs 127.0.0.2 -- n",
                "an address of its own",
            ),
            (
                "d --mode faithful --iterations 1 --node-addrs 224.0.23.0 -- n",
                "not the unicast address",
            ),
            (
                "d --mode faithful --iterations 1 --ctl-addr 0.0.0.0 -- n",
                "--ctl-addr: 0.0.0.0",
            ),
            ("d --mode discovery --rounds 1 -- n", "needs --node-netns"),
            (
                "d --mode discovery --rounds 1 --node-addrs 10.0.0.1,10.0.0.2 \
                 --node-netns a -- n",
                "1 namespaces for 2",
            ),
            (
                "d --mode faithful --iterations 1 --ctl-netns ../x -- n",
                "not a network namespace name",
            ),
            (
                "d --mode faithful --iterations 1 --timeout-s 0 -- n",
                "--timeout-s",
            ),
            ("d --mode faithful --iterations 1 --port 0 -- n", "--port"),
        ] {
            let err = refused(line);
            assert!(err.contains(expect), "{line}: {err}");
        }
        // What clap itself refuses.
        for line in [
            "d --mode faithful --iterations 1",
            "d --mode burst --iterations 1 -- n",
            "d --iterations 1 -- n",
            "d --mode faithful --iterations 1 --node-addrs 127.0.0.300 -- n",
            "d --mode faithful --iterations 1 --ctl-addr ::1 -- n",
            "d --mode faithful --iterations 1 --port 70000 -- n",
            "d --mode faithful --iterations 1 --host-cpus 1 -- n",
        ] {
            assert!(parse(line).is_err(), "{line}");
        }
    }
}
