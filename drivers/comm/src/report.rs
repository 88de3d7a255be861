//! The one JSON object the driver prints (README.md beside src/).

use crate::cli::{Args, Load, Mode};
use crate::load;
use crate::own;
use driver_kit::clock::CpuClock;
use driver_kit::percentiles::{rate, round, Percentiles};
use driver_kit::usage::{ImplUsage, LoadGenerator, Placement};
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

#[derive(Serialize)]
pub struct Report {
    driver: &'static str,
    mode: Mode,
    load: Load,
    clients: u64,
    messages: u64,
    size: usize,
    #[serde(rename = "type")]
    kind: u8,
    warmup: u64,
    /// Stream mode: bytes of whole frames per write (0: one frame per write; always 0 in rtt
    /// mode and with --load own).
    coalesce: usize,
    /// Content bytes of the measured messages (headers excluded), all clients.
    bytes: u64,
    /// First measured send to last measured reply.
    elapsed_s: f64,
    /// bytes / elapsed_s, MB = 10^6 bytes.
    mb_per_s: f64,
    msgs_per_s: f64,
    /// Round trips in µs (rtt only).
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_us: Option<Latency>,
    /// Replies compared byte for byte with what was sent, warm-up included (neutral load).
    #[serde(skip_serializing_if = "Option::is_none")]
    replies_checked: Option<u64>,
    /// The server: CPU time of all its threads from just before the load to just after it
    /// (its process CPU clock), over every message it echoed in that window (warm-up
    /// included); VmHWM read just before SIGTERM; its exit status (always 0 in a result).
    #[serde(rename = "impl")]
    usage: ImplUsage<ServerExtra>,
    /// The driver's threads (their CPU while the load ran) or the client program (its CPU
    /// over its whole run, wait4); without cpu_clock.
    load_generator: LoadGenerator,
    port: u16,
    /// driver_cpus, impl_cpus (null: not pinned).
    #[serde(flatten)]
    placement: Placement,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Latency {
    /// The driver's histogram.
    Measured(Percentiles),
    /// The client program's object, as it reported it.
    Reported(Value),
}

/// What loaded the server.
pub enum Loaded {
    Neutral(load::Outcome),
    Own(own::Outcome),
}

/// What the server's side of the trial measured.
pub struct ServerMeasure {
    pub cpu: Duration,
    /// The time its threads waited for a CPU in the same window (drivers/kit served.rs).
    pub run_delay: Duration,
    pub maxrss_kb: u64,
    pub exit_status: i32,
    /// Its host as its agent describes it, when it ran on another host (docs/hosts.md).
    pub host: Option<Value>,
}

/// The server's fields beyond the contract's.
#[derive(Serialize)]
pub struct ServerExtra {
    /// Run delay in µs over the same messages as cpu_us_per_op: what other processes on its
    /// CPUs took from it while it was loaded.
    run_delay_us_per_op: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<Value>,
}

pub fn build(args: &Args, loaded: &Loaded, server: &ServerMeasure) -> Report {
    let measured = args.clients * args.messages;
    let echoed = args.clients * (args.messages + args.warmup);
    let bytes = args.content_bytes().unwrap_or(u64::MAX);
    let (elapsed_s, mb_per_s, msgs_per_s, latency_us, replies_checked, load_generator) =
        match loaded {
            Loaded::Neutral(outcome) => {
                let elapsed_s = outcome.elapsed.as_secs_f64();
                let per_second = |count: f64| rate(count, elapsed_s);
                (
                    elapsed_s,
                    per_second(bytes as f64) / 1e6,
                    per_second(measured as f64),
                    outcome
                        .latency
                        .as_ref()
                        .map(|h| Latency::Measured(Percentiles::of(h))),
                    Some(outcome.replies_checked),
                    LoadGenerator::driver(outcome.cpu, outcome.threads),
                )
            }
            Loaded::Own(own::Outcome { client, reported }) => {
                // The client's own numbers; elapsed from them when it does not say.
                let elapsed_s = reported.elapsed_s.unwrap_or(if reported.msgs_per_s > 0.0 {
                    measured as f64 / reported.msgs_per_s
                } else {
                    0.0
                });
                (
                    elapsed_s,
                    reported.mb_per_s,
                    reported.msgs_per_s,
                    reported.latency_us.clone().map(Latency::Reported),
                    None,
                    LoadGenerator::client(client),
                )
            }
        };
    let bytes = match loaded {
        Loaded::Own(own::Outcome {
            reported: own::Reported { bytes: Some(b), .. },
            ..
        }) => *b,
        _ => bytes,
    };
    Report {
        driver: "comm",
        mode: args.mode,
        load: args.load,
        clients: args.clients,
        messages: args.messages,
        size: args.size,
        kind: args.kind,
        warmup: args.warmup,
        coalesce: args.coalesce_bytes(),
        bytes,
        elapsed_s: round(elapsed_s, 6),
        mb_per_s: round(mb_per_s, 3),
        msgs_per_s: round(msgs_per_s, 1),
        latency_us,
        replies_checked,
        usage: ImplUsage::new(
            server.cpu,
            CpuClock::ProcessCpuClock,
            echoed,
            Some(server.maxrss_kb),
            server.exit_status,
            ServerExtra {
                run_delay_us_per_op: round(
                    server.run_delay.as_secs_f64() * 1e6 / echoed.max(1) as f64,
                    4,
                ),
                host: server.host.clone(),
            },
        ),
        load_generator,
        port: args.port(),
        placement: Placement::of(&args.common),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use driver_kit::client::Cost;
    use driver_kit::testing::args;
    use serde_json::json;

    fn server() -> ServerMeasure {
        ServerMeasure {
            cpu: Duration::from_millis(80),
            run_delay: Duration::from_millis(16),
            maxrss_kb: 5120,
            exit_status: 0,
            host: None,
        }
    }

    #[test]
    fn neutral_stream_fields_and_arithmetic() {
        let args = args(
            "d --mode stream --clients 16 --size 4096 --messages 1000 --port 7600 \
             --driver-cpus 0 --impl-cpus 1 -- s",
        );
        let loaded = Loaded::Neutral(load::Outcome {
            elapsed: Duration::from_millis(100),
            latency: None,
            replies_checked: 16_000,
            cpu: Duration::from_millis(90),
            threads: 32,
        });
        let json = serde_json::to_value(build(&args, &loaded, &server())).unwrap();
        assert_eq!(json["driver"], "comm");
        assert_eq!(json["mode"], "stream");
        assert_eq!(json["load"], "neutral");
        assert_eq!(json["bytes"], 65_536_000);
        assert_eq!(json["elapsed_s"], 0.1);
        assert_eq!(json["mb_per_s"], 655.36);
        assert_eq!(json["msgs_per_s"], 160_000.0);
        assert!(json.get("latency_us").is_none());
        assert_eq!(json["replies_checked"], 16_000);
        assert_eq!(
            json["impl"],
            json!({"cpu_s": 0.08, "cpu_clock": "process-cpu-clock", "cpu_us_per_op": 5.0,
                   "maxrss_kb": 5120, "exit_status": 0, "run_delay_us_per_op": 1.0})
        );
        assert!(json.get("server").is_none());
        assert_eq!(
            json["load_generator"],
            json!({"kind":"driver","cpu_s":0.09,"threads":32})
        );
        assert_eq!(json["driver_cpus"], json!([0]));
        assert_eq!(json["impl_cpus"], json!([1]));
        assert_eq!(json["type"], 0);
        assert_eq!(json["coalesce"], 65536);
    }

    #[test]
    fn neutral_rtt_latency_and_warmup() {
        let args =
            args("d --mode rtt --clients 1 --size 1024 --messages 4 --warmup 4 --port 7600 -- s");
        let mut h = driver_kit::percentiles::new_histogram().unwrap();
        for ns in [10_000, 20_000, 30_000, 40_000] {
            h.record(ns).unwrap();
        }
        let want = serde_json::to_value(Percentiles::of(&h)).unwrap();
        let loaded = Loaded::Neutral(load::Outcome {
            elapsed: Duration::from_micros(100),
            latency: Some(h),
            replies_checked: 8,
            cpu: Duration::ZERO,
            threads: 1,
        });
        let json = serde_json::to_value(build(&args, &loaded, &server())).unwrap();
        assert_eq!(json["msgs_per_s"], 40_000.0);
        assert_eq!(json["bytes"], 4096);
        assert_eq!(json["coalesce"], 0);
        // 80 ms over the 8 messages echoed, warm-up included.
        assert_eq!(json["impl"]["cpu_us_per_op"], 10_000.0);
        // The driver's histogram, summarised by the kit (tested there).
        assert_eq!(json["latency_us"], want);
        assert_eq!(json["latency_us"]["min"], 10.0);
    }

    #[test]
    fn own_load_passes_the_clients_numbers_through() {
        let args = args(
            "d --clients 16 --size 4096 --messages 1000 --port 7600 --load own \
             --client-json [\"c\"] -- s",
        );
        let loaded = Loaded::Own(own::Outcome {
            client: Cost {
                argv: vec!["c".to_string()],
                wall: Duration::from_millis(300),
                user: Duration::from_millis(200),
                system: Duration::from_millis(50),
            },
            reported: own::Reported {
                mb_per_s: 546.1,
                msgs_per_s: 133_333.3,
                elapsed_s: None,
                bytes: None,
                latency_us: None,
            },
        });
        let json = serde_json::to_value(build(&args, &loaded, &server())).unwrap();
        assert_eq!(json["load"], "own");
        assert_eq!(json["mb_per_s"], 546.1);
        assert_eq!(json["msgs_per_s"], 133_333.3);
        assert_eq!(json["elapsed_s"], 0.12); // 16000 / 133333.3, rounded
        assert_eq!(json["bytes"], 65_536_000);
        assert!(json.get("replies_checked").is_none());
        assert_eq!(
            json["load_generator"],
            json!({"kind":"client","cpu_s":0.25,"argv":["c"]})
        );
    }
}
