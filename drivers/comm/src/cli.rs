//! The command line (README.md beside src/): the scenario's options and the driver
//! contract's common ones (docs/driver-contract.md):
//!
//! ```text
//! comm-driver --mode stream|rtt --clients N --size BYTES --messages M [--warmup K]
//!             [--load neutral|own] [--type T] [--coalesce BYTES] --port P [--client-json JSON]
//!             [--driver-cpus 0] [--impl-cpus 1] [--impl-stderr FILE] [--impl-cwd DIR]
//!             [--timeout-s 60] -- SERVER_ARGV...
//! ```

use crate::frame::{END, QUIT};
use clap::{Parser, ValueEnum};
use driver_kit::output::DriverArgs;
use driver_kit::CommonArgs;
use serde::Serialize;

/// The largest body the driver sends: the servers' default --max-body (SPEC §2).
pub const MAX_SIZE: usize = 64 << 20;
/// Stream mode's default --coalesce: one loopback segment (64 KiB) per write. One frame per
/// write makes the driver, not the server, the bottleneck of Test4 (README.md, "Cost of the
/// load").
pub const DEFAULT_COALESCE: usize = 64 * 1024;
/// Each client is a connection and one or two threads on the driver CPU.
pub const MAX_CLIENTS: u64 = 1024;

#[derive(Parser, Debug)]
#[command(
    name = "comm-driver",
    version,
    about = "Measures a comm server (workloads/comm/SPEC.md): starts it, loads it over TCP \
             with checked echo traffic or with the implementation's own client, reads its CPU \
             and peak RSS, stops it, and prints one JSON object",
    after_help = "IMPL_ARGV is the server's command line; --port (required) is the port it \
                  listens on; --client-json is its own client program (for --load own); \
                  --impl-stderr takes the server's stdout and stderr and the client program's \
                  stderr. Exit status: 0 with the results on stdout; 1 with \
                  {\"error\": \"...\"} on stdout when the trial failed (a wrong reply, a server \
                  that died or did not exit 0 on SIGTERM, a timeout); 2 with \
                  {\"error\": \"bad command line: ...\"} for a bad command line."
)]
pub struct Args {
    /// stream: each client sends its messages without waiting (the seed's Test4); rtt: each
    /// message waits for its reply, round trips recorded (the seed's test3)
    #[arg(long, value_enum, default_value_t = Mode::Stream)]
    pub mode: Mode,

    /// Connections, each with its own send and receive threads (one thread in rtt mode)
    #[arg(long, value_name = "N")]
    pub clients: u64,

    /// Body bytes of every message
    #[arg(long, value_name = "BYTES")]
    pub size: usize,

    /// Measured messages per client
    #[arg(long, value_name = "M")]
    pub messages: u64,

    /// Round trips per client before the measured ones, checked but not recorded (rtt only)
    #[arg(long, value_name = "K", default_value_t = 0)]
    pub warmup: u64,

    /// neutral: the driver's own client threads; own: the implementation's client program
    /// (--client-json)
    #[arg(long, value_enum, default_value_t = Load::Neutral)]
    pub load: Load,

    /// The type byte of every message (not END 4 or QUIT 8, which end a session)
    #[arg(long = "type", value_name = "T", default_value_t = 0)]
    pub kind: u8,

    /// Stream mode: each send thread writes up to this many bytes of whole frames per writev
    /// (at most 512 frames; default 65536, the loopback's segment size); 0 = one frame per
    /// write
    #[arg(long, value_name = "BYTES")]
    pub coalesce: Option<usize>,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Stream,
    Rtt,
}

impl Mode {
    pub fn name(self) -> &'static str {
        match self {
            Mode::Stream => "stream",
            Mode::Rtt => "rtt",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Load {
    Neutral,
    Own,
}

impl DriverArgs for Args {
    /// Checks what clap cannot: ranges and combinations. Returns a message for a usage error.
    fn validate(&self) -> Result<(), String> {
        self.common.validate()?;
        if self.common.port.is_none() {
            return Err("--port is required: the port the server listens on".to_string());
        }
        if !(1..=MAX_CLIENTS).contains(&self.clients) {
            return Err(format!(
                "--clients must be 1..={MAX_CLIENTS}, not {}",
                self.clients
            ));
        }
        if self.messages == 0 {
            return Err("--messages must be at least 1".to_string());
        }
        if self.size > MAX_SIZE {
            return Err(format!(
                "--size must be at most {MAX_SIZE} bytes (the servers' default --max-body), \
                 not {}",
                self.size
            ));
        }
        self.content_bytes()
            .ok_or("--clients × --messages × --size overflows a 64-bit byte count")?;
        if self.kind == END || self.kind == QUIT {
            return Err(format!(
                "--type {} ends a session (END 4 and QUIT 8 are not data messages)",
                self.kind
            ));
        }
        if self.warmup > 0 && self.mode != Mode::Rtt {
            return Err("--warmup applies to --mode rtt only".to_string());
        }
        if self.warmup > 0 && self.load == Load::Own {
            return Err(
                "--warmup needs --load neutral (the client program has no warm-up)".to_string(),
            );
        }
        if self.coalesce.is_some_and(|n| n > 0) && !self.neutral_stream() {
            return Err("--coalesce applies to --mode stream with --load neutral".to_string());
        }
        if self.load == Load::Own {
            self.client_argv()?;
        }
        Ok(())
    }
}

impl Args {
    /// The server's port (validated: present).
    pub fn port(&self) -> u16 {
        self.common.port.unwrap_or_default()
    }

    fn neutral_stream(&self) -> bool {
        self.mode == Mode::Stream && self.load == Load::Neutral
    }

    /// Bytes of whole frames per write in effect (0: one frame per write).
    pub fn coalesce_bytes(&self) -> usize {
        match self.neutral_stream() {
            true => self.coalesce.unwrap_or(DEFAULT_COALESCE),
            false => 0,
        }
    }

    /// Content bytes of the measured messages, all clients.
    pub fn content_bytes(&self) -> Option<u64> {
        self.clients
            .checked_mul(self.messages)?
            .checked_mul(self.size as u64)
    }

    /// The client program's argv from --client-json, which --load own needs.
    pub fn client_argv(&self) -> Result<Vec<String>, String> {
        self.common.client_argv()?.ok_or_else(|| {
            "--load own needs --client-json (the implementation's client program)".to_string()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use driver_kit::CpuList;

    fn parse(line: &str) -> Result<Args, clap::Error> {
        Args::try_parse_from(line.split_whitespace())
    }

    const BASE: &str = "d --clients 16 --size 4096 --messages 1000 --port 7600";

    #[test]
    fn parses_the_harness_command_line() {
        let args = parse(&format!(
            "{BASE} --mode rtt --warmup 5 --type 16 --driver-cpus 0 --impl-cpus 1 \
             --impl-stderr /tmp/e --timeout-s 30 --impl-cwd /tmp \
             --client-json [\"/bin/client\",\"--port\",\"7600\"] \
             -- /bin/server --port 7600"
        ))
        .unwrap();
        args.validate().unwrap();
        assert_eq!(args.mode, Mode::Rtt);
        assert_eq!(args.load, Load::Neutral);
        assert_eq!((args.clients, args.size, args.messages), (16, 4096, 1000));
        assert_eq!((args.warmup, args.kind, args.port()), (5, 16, 7600));
        assert_eq!(args.common.driver_cpus, Some(CpuList(vec![0])));
        assert_eq!(args.common.impl_cpus, Some(CpuList(vec![1])));
        assert_eq!(args.common.timeout_s, 30.0);
        assert_eq!(args.common.impl_argv, ["/bin/server", "--port", "7600"]);
        assert_eq!(
            args.client_argv().unwrap(),
            ["/bin/client", "--port", "7600"]
        );
        assert_eq!(args.content_bytes(), Some(65_536_000));
        assert_eq!(args.coalesce_bytes(), 0, "rtt: one message in flight");
    }

    #[test]
    fn coalesce_applies_to_the_neutral_stream() {
        let bytes = |extra: &str| {
            let args = parse(&format!("{BASE} {extra} -- s")).unwrap();
            args.validate().map(|()| args.coalesce_bytes())
        };
        assert_eq!(bytes(""), Ok(65536));
        assert_eq!(bytes("--coalesce 0"), Ok(0));
        assert_eq!(bytes("--coalesce 1000000"), Ok(1_000_000));
        assert_eq!(bytes("--mode rtt"), Ok(0));
        assert_eq!(bytes("--mode rtt --coalesce 0"), Ok(0));
        assert_eq!(bytes("--load own --client-json [\"c\"]"), Ok(0));
    }

    #[test]
    fn defaults() {
        let args = parse(&format!("{BASE} -- s")).unwrap();
        args.validate().unwrap();
        assert_eq!(args.mode, Mode::Stream);
        assert_eq!(args.load, Load::Neutral);
        assert_eq!((args.warmup, args.kind), (0, 0));
        assert_eq!((args.coalesce, args.coalesce_bytes()), (None, 65536));
        assert_eq!(args.common.timeout_s, 60.0);
        assert_eq!(args.common.driver_cpus, None);
        assert_eq!(args.common.client_json, None);
    }

    #[test]
    fn refuses_bad_values_and_combinations() {
        for (line, expect) in [
            (
                "d --clients 0 --size 1 --messages 1 --port 7600 -- s",
                "--clients",
            ),
            (
                "d --clients 5000 --size 1 --messages 1 --port 7600 -- s",
                "--clients",
            ),
            (
                "d --clients 1 --size 1 --messages 0 --port 7600 -- s",
                "--messages",
            ),
            (
                "d --clients 1 --size 99999999 --messages 1 --port 7600 -- s",
                "--size",
            ),
            (
                "d --clients 1 --size 1 --messages 1 --port 0 -- s",
                "--port",
            ),
            (
                "d --clients 1024 --size 67108864 --messages 18446744073709551615 --port 1 -- s",
                "overflows",
            ),
            (&format!("{BASE} --type 4 -- s"), "ends a session"),
            (&format!("{BASE} --type 8 -- s"), "ends a session"),
            (&format!("{BASE} --timeout-s 0 -- s"), "--timeout-s"),
            (
                "d --clients 1 --size 1 --messages 1 -- s",
                "--port is required",
            ),
            (&format!("{BASE} --timeout-s nan -- s"), "--timeout-s"),
            (&format!("{BASE} --warmup 3 -- s"), "rtt only"),
            (
                &format!("{BASE} --mode rtt --warmup 3 --load own --client-json [\"c\"] -- s"),
                "no warm-up",
            ),
            (&format!("{BASE} --load own -- s"), "needs --client-json"),
            (
                &format!("{BASE} --mode rtt --coalesce 65536 -- s"),
                "--coalesce applies",
            ),
            (
                &format!("{BASE} --load own --coalesce 1 --client-json [\"c\"] -- s"),
                "--coalesce applies",
            ),
            (
                &format!("{BASE} --load own --client-json [] -- s"),
                "names no program",
            ),
            (
                &format!("{BASE} --load own --client-json {{\"a\":1}} -- s"),
                "JSON list of strings",
            ),
        ] {
            let err = parse(line).unwrap().validate().unwrap_err();
            assert!(err.contains(expect), "{line}: {err}");
        }
        // What clap itself refuses.
        for line in [
            BASE,
            &format!("{BASE} --mode burst -- s"),
            &format!("{BASE} --load other -- s"),
            &format!("{BASE} --type 256 -- s"),
            &format!("{BASE} --port 70000 -- s"),
            &format!("{BASE} --host-cpus 1 -- s"),
            "d --size 1 --messages 1 --port 7600 -- s",
        ] {
            assert!(parse(line).is_err(), "{line}");
        }
    }
}
