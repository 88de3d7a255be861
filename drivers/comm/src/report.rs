//! The one JSON object the driver prints (README.md beside src/).

use crate::cli::{Args, Load, Mode};
use crate::load;
use crate::own;
use hdrhistogram::Histogram;
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
    server: ServerUsage,
    load_generator: LoadGenerator,
    port: u16,
    /// null: not pinned.
    driver_cpus: Option<Vec<usize>>,
    host_cpus: Option<Vec<usize>>,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Latency {
    /// The driver's histogram.
    Measured(Percentiles),
    /// The client program's object, as it reported it.
    Reported(Value),
}

#[derive(Serialize)]
struct Percentiles {
    p50: f64,
    p90: f64,
    p99: f64,
    p999: f64,
    max: f64,
    min: f64,
    mean: f64,
    stdev: f64,
}

#[derive(Serialize)]
struct ServerUsage {
    /// CPU time of all the server's threads from just before the load to just after it.
    cpu_s: f64,
    /// cpu_s over every message it echoed in that window (warm-up included).
    cpu_us_per_msg: f64,
    /// VmHWM: the server's peak resident set over its life, read just before SIGTERM.
    maxrss_kb: u64,
    exit_status: i32,
}

#[derive(Serialize)]
struct LoadGenerator {
    /// "driver" (the driver's own threads) or "client" (the implementation's program).
    kind: &'static str,
    /// The driver's CPU while the load ran, or the client program's over its whole run.
    cpu_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    threads: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    argv: Option<Vec<String>>,
}

/// What loaded the server.
pub enum Loaded {
    Neutral(load::Outcome),
    Own(own::Outcome),
}

/// What the server's side of the trial measured.
pub struct ServerMeasure {
    pub cpu: Duration,
    pub maxrss_kb: u64,
    pub exit_status: i32,
}

pub fn build(args: &Args, loaded: &Loaded, server: &ServerMeasure) -> Report {
    let measured = args.clients * args.messages;
    let echoed = args.clients * (args.messages + args.warmup);
    let bytes = args.content_bytes().unwrap_or(u64::MAX);
    let (elapsed_s, mb_per_s, msgs_per_s, latency_us, replies_checked, load_generator) =
        match loaded {
            Loaded::Neutral(outcome) => {
                let elapsed_s = outcome.elapsed.as_secs_f64();
                let per_second = |count: f64| {
                    if elapsed_s > 0.0 {
                        count / elapsed_s
                    } else {
                        0.0
                    }
                };
                (
                    elapsed_s,
                    per_second(bytes as f64) / 1e6,
                    per_second(measured as f64),
                    outcome
                        .latency
                        .as_ref()
                        .map(|h| Latency::Measured(percentiles(h))),
                    Some(outcome.replies_checked),
                    LoadGenerator {
                        kind: "driver",
                        cpu_s: round(outcome.cpu.as_secs_f64(), 6),
                        threads: Some(outcome.threads),
                        argv: None,
                    },
                )
            }
            Loaded::Own(outcome) => {
                // The client's own numbers; elapsed from them when it does not say.
                let elapsed_s = outcome.elapsed_s.unwrap_or(if outcome.msgs_per_s > 0.0 {
                    measured as f64 / outcome.msgs_per_s
                } else {
                    0.0
                });
                (
                    elapsed_s,
                    outcome.mb_per_s,
                    outcome.msgs_per_s,
                    outcome.latency_us.clone().map(Latency::Reported),
                    None,
                    LoadGenerator {
                        kind: "client",
                        cpu_s: round(outcome.cpu.as_secs_f64(), 6),
                        threads: None,
                        argv: Some(outcome.argv.clone()),
                    },
                )
            }
        };
    let bytes = match loaded {
        Loaded::Own(own::Outcome { bytes: Some(b), .. }) => *b,
        _ => bytes,
    };
    let cpu_us = server.cpu.as_secs_f64() * 1e6;
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
        server: ServerUsage {
            cpu_s: round(server.cpu.as_secs_f64(), 6),
            cpu_us_per_msg: round(cpu_us / echoed.max(1) as f64, 4),
            maxrss_kb: server.maxrss_kb,
            exit_status: server.exit_status,
        },
        load_generator,
        port: args.port,
        driver_cpus: args.driver_cpus.clone(),
        host_cpus: args.host_cpus.clone(),
    }
}

/// Nanosecond samples summarised in µs, to the nanosecond.
fn percentiles(h: &Histogram<u64>) -> Percentiles {
    let us = |ns: f64| round(ns / 1e3, 3);
    let at = |q: f64| us(h.value_at_quantile(q) as f64);
    Percentiles {
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        p999: at(0.999),
        max: us(h.max() as f64),
        min: us(h.min() as f64),
        mean: us(h.mean()),
        stdev: us(h.stdev()),
    }
}

fn round(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use serde_json::json;

    fn args(line: &str) -> Args {
        let args = Args::try_parse_from(line.split_whitespace()).unwrap();
        args.validate().unwrap();
        args
    }

    fn server() -> ServerMeasure {
        ServerMeasure {
            cpu: Duration::from_millis(80),
            maxrss_kb: 5120,
            exit_status: 0,
        }
    }

    #[test]
    fn neutral_stream_fields_and_arithmetic() {
        let args = args(
            "d --mode stream --clients 16 --size 4096 --messages 1000 --port 7600 \
             --driver-cpus 0 --host-cpus 1 -- s",
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
        assert_eq!(json["server"]["cpu_s"], 0.08);
        assert_eq!(json["server"]["cpu_us_per_msg"], 5.0);
        assert_eq!(json["server"]["maxrss_kb"], 5120);
        assert_eq!(json["server"]["exit_status"], 0);
        assert_eq!(
            json["load_generator"],
            json!({"kind":"driver","cpu_s":0.09,"threads":32})
        );
        assert_eq!(json["driver_cpus"], json!([0]));
        assert_eq!(json["host_cpus"], json!([1]));
        assert_eq!(json["type"], 0);
        assert_eq!(json["coalesce"], 65536);
    }

    #[test]
    fn neutral_rtt_latency_and_warmup() {
        let args =
            args("d --mode rtt --clients 1 --size 1024 --messages 4 --warmup 4 --port 7600 -- s");
        let mut h = load::new_histogram().unwrap();
        for ns in [10_000, 20_000, 30_000, 40_000] {
            h.record(ns).unwrap();
        }
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
        assert_eq!(json["server"]["cpu_us_per_msg"], 10_000.0);
        let near = |field: &str, want: f64| {
            let got = json["latency_us"][field].as_f64().unwrap();
            assert!(
                (got - want).abs() <= want / 1000.0,
                "{field}: {got} vs {want}"
            );
        };
        near("p50", 20.0);
        near("p90", 40.0);
        near("p999", 40.0);
        near("max", 40.0);
        near("min", 10.0);
    }

    #[test]
    fn own_load_passes_the_clients_numbers_through() {
        let args = args(
            "d --clients 16 --size 4096 --messages 1000 --port 7600 --load own \
             --client-json [\"c\"] -- s",
        );
        let loaded = Loaded::Own(own::Outcome {
            argv: vec!["c".to_string()],
            mb_per_s: 546.1,
            msgs_per_s: 133_333.3,
            elapsed_s: None,
            bytes: None,
            latency_us: None,
            cpu: Duration::from_millis(250),
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
