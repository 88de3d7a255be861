//! The one JSON object the driver prints (docs/decisions.md, "Drivers").

use crate::cli::{Args, Mode, Op};
use crate::trial::Measurement;
use hdrhistogram::Histogram;
use serde::Serialize;

#[derive(Serialize)]
pub struct Report {
    driver: &'static str,
    mode: Mode,
    op: Op,
    size: usize,
    iterations: u64,
    warmup: u64,
    /// null: not pinned.
    driver_cpus: Option<Vec<usize>>,
    host_cpus: Option<Vec<usize>>,
    ops: u64,
    elapsed_s: f64,
    ops_per_s: f64,
    /// Request body bytes of the measured operations per second, MB = 10^6 bytes.
    mb_per_s: f64,
    latency_us: Latency,
    host: HostUsage,
    checked: Checked,
}

#[derive(Serialize)]
struct Latency {
    min: f64,
    mean: f64,
    stdev: f64,
    p50: f64,
    p90: f64,
    p99: f64,
    p999: f64,
    max: f64,
}

#[derive(Serialize)]
struct HostUsage {
    processes: u64,
    cpu_user_s: f64,
    cpu_sys_s: f64,
    /// The hosts' whole CPU time over every operation sent, warm-up included.
    cpu_us_per_op: f64,
    /// The host's peak resident set in KiB: VmHWM from /proc while the host was alive (the
    /// largest over the warm-up hosts in spawn mode), not wait4's ru_maxrss (see host.rs,
    /// `Exit`). null when it could not be read, with the reason in `maxrss_note`.
    maxrss_kb: Option<u64>,
    /// Only present when there is something to say: why `maxrss_kb` is null, or which hosts
    /// it leaves out.
    #[serde(skip_serializing_if = "Option::is_none")]
    maxrss_note: Option<String>,
    exit_status: Vec<i32>,
}

#[derive(Serialize)]
struct Checked {
    full: u64,
    length: u64,
}

pub fn build(args: &Args, request_body_bytes: usize, m: &Measurement) -> Report {
    let elapsed_s = m.elapsed.as_secs_f64();
    let per_second = |count: f64| {
        if elapsed_s > 0.0 {
            count / elapsed_s
        } else {
            0.0
        }
    };
    let cpu_us = (m.host.user_us + m.host.sys_us) as f64;
    let sent = args.iterations + args.warmup;
    Report {
        driver: "nativemsg",
        mode: args.mode,
        op: args.op,
        size: args.size,
        iterations: args.iterations,
        warmup: args.warmup,
        driver_cpus: args.driver_cpus.clone(),
        host_cpus: args.host_cpus.clone(),
        ops: m.ops,
        elapsed_s: round(elapsed_s, 6),
        ops_per_s: round(per_second(m.ops as f64), 3),
        mb_per_s: round(
            per_second((request_body_bytes as u64 * m.ops) as f64) / 1e6,
            6,
        ),
        latency_us: latency(&m.latency),
        host: HostUsage {
            processes: m.host.processes,
            cpu_user_s: round(m.host.user_us as f64 / 1e6, 6),
            cpu_sys_s: round(m.host.sys_us as f64 / 1e6, 6),
            cpu_us_per_op: round(cpu_us / sent as f64, 3),
            maxrss_kb: m.host.peak_rss.kb(),
            maxrss_note: m.host.peak_rss.note(),
            exit_status: m.host.exit_codes.iter().copied().collect(),
        },
        checked: Checked {
            full: m.checked.0,
            length: m.checked.1,
        },
    }
}

/// Nanosecond samples summarised in µs, to the nanosecond.
fn latency(h: &Histogram<u64>) -> Latency {
    let us = |ns: f64| round(ns / 1e3, 3);
    let at = |q: f64| us(h.value_at_quantile(q) as f64);
    Latency {
        min: us(h.min() as f64),
        mean: us(h.mean()),
        stdev: us(h.stdev()),
        p50: at(0.50),
        p90: at(0.90),
        p99: at(0.99),
        p999: at(0.999),
        max: us(h.max() as f64),
    }
}

fn round(value: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (value * scale).round() / scale
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trial::{new_histogram, HostTotals, PeakRss};
    use clap::Parser;
    use std::time::Duration;

    #[test]
    fn fields_and_arithmetic() {
        let args = Args::try_parse_from(
            "d --mode persistent --op echo --size 1000 --iterations 4 --warmup 1 \
             --host-cpus 1 -- h"
                .split_whitespace(),
        )
        .unwrap();
        let mut latency = new_histogram().unwrap();
        for ns in [10_000, 20_000, 30_000, 40_000] {
            latency.record(ns).unwrap();
        }
        let mut host = HostTotals {
            processes: 1,
            user_us: 300,
            sys_us: 200,
            exit_codes: [0].into(),
            ..HostTotals::default()
        };
        host.peak_rss.record(Ok(1234));
        let mut m = Measurement {
            ops: 4,
            elapsed: Duration::from_millis(2),
            latency,
            host,
            checked: (4, 0),
        };
        let json = serde_json::to_value(build(&args, 1000, &m)).unwrap();
        assert_eq!(json["driver"], "nativemsg");
        assert_eq!(json["mode"], "persistent");
        assert_eq!(json["op"], "echo");
        assert_eq!(json["driver_cpus"], serde_json::Value::Null);
        assert_eq!(json["host_cpus"], serde_json::json!([1]));
        assert_eq!(json["ops_per_s"], 2000.0);
        assert_eq!(json["mb_per_s"], 2.0); // 4 × 1000 B / 2 ms
        assert_eq!(json["host"]["cpu_us_per_op"], 100.0); // 500 µs / (4 + 1)
        assert_eq!(json["host"]["exit_status"], serde_json::json!([0]));
        // HdrHistogram values are exact to 3 significant digits (0.1%).
        let near = |field: &str, want: f64| {
            let got = json["latency_us"][field].as_f64().unwrap();
            assert!(
                (got - want).abs() <= want / 1000.0,
                "{field}: {got} vs {want}"
            );
        };
        near("min", 10.0);
        near("p50", 20.0);
        near("max", 40.0);
        near("mean", 25.0);
        assert_eq!(json["checked"]["full"], 4);
        assert_eq!(json["host"]["maxrss_kb"], 1234);
        assert!(json["host"].get("maxrss_note").is_none(), "{json}");

        // No reading: null and the reason, not a number.
        m.host.peak_rss = PeakRss::default();
        m.host
            .peak_rss
            .record(Err("cannot read /proc/7/status".to_string()));
        let json = serde_json::to_value(build(&args, 1000, &m)).unwrap();
        assert_eq!(json["host"]["maxrss_kb"], serde_json::Value::Null);
        assert!(json["host"]["maxrss_note"]
            .as_str()
            .unwrap()
            .contains("/proc/7/status"));
    }

    #[test]
    fn cpu_lists_are_arrays_of_integers() {
        let args = Args::try_parse_from(
            "d --mode spawn --op ping --iterations 1 --warmup 0 --driver-cpus 0 \
             --host-cpus 1,0 -- h"
                .split_whitespace(),
        )
        .unwrap();
        let m = Measurement {
            ops: 1,
            elapsed: Duration::from_millis(1),
            latency: new_histogram().unwrap(),
            host: HostTotals::default(),
            checked: (1, 0),
        };
        let text = serde_json::to_string(&build(&args, 13, &m)).unwrap();
        assert!(
            text.contains(r#""driver_cpus":[0],"host_cpus":[1,0],"#),
            "{text}"
        );
    }
}
