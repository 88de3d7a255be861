//! The one JSON object the driver prints (docs/driver-contract.md for the common part).

use crate::cli::{Args, Mode, Op};
use crate::trial::Measurement;
use driver_kit::percentiles::{rate, round, Percentiles};
use driver_kit::usage::{ImplUsage, Placement};
use serde::Serialize;

#[derive(Serialize)]
pub struct Report {
    driver: &'static str,
    mode: Mode,
    op: Op,
    size: usize,
    iterations: u64,
    warmup: u64,
    /// driver_cpus, impl_cpus (null: not pinned).
    #[serde(flatten)]
    placement: Placement,
    ops: u64,
    elapsed_s: f64,
    ops_per_s: f64,
    /// Request body bytes of the measured operations per second, MB = 10^6 bytes.
    mb_per_s: f64,
    latency_us: Percentiles,
    /// The hosts' CPU over every operation sent, warm-up included (they served both): the
    /// process CPU clock in persistent mode, wait4 in spawn mode (persistent.rs, spawn.rs).
    /// The peak RSS is VmHWM read from /proc while a host was alive (the largest over the
    /// warm-up hosts in spawn mode).
    #[serde(rename = "impl")]
    usage: ImplUsage<HostExtra>,
    checked: Checked,
}

#[derive(Serialize)]
struct HostExtra {
    processes: u64,
    /// Only present when there is something to say: why `maxrss_kb` is null, or which hosts
    /// it leaves out.
    #[serde(skip_serializing_if = "Option::is_none")]
    maxrss_note: Option<String>,
}

#[derive(Serialize)]
struct Checked {
    full: u64,
    length: u64,
}

pub fn build(args: &Args, request_body_bytes: usize, m: &Measurement) -> Report {
    let elapsed_s = m.elapsed.as_secs_f64();
    let per_second = |count: f64| rate(count, elapsed_s);
    let sent = args.iterations + args.warmup;
    let exit_status: Vec<i32> = m.host.exit_codes.iter().copied().collect();
    Report {
        driver: "nativemsg",
        mode: args.mode,
        op: args.op,
        size: args.size,
        iterations: args.iterations,
        warmup: args.warmup,
        placement: Placement::of(&args.common),
        ops: m.ops,
        elapsed_s: round(elapsed_s, 6),
        ops_per_s: round(per_second(m.ops as f64), 3),
        mb_per_s: round(
            per_second((request_body_bytes as u64 * m.ops) as f64) / 1e6,
            6,
        ),
        latency_us: Percentiles::of(&m.latency),
        usage: ImplUsage::new(
            m.host.cpu,
            m.host.clock,
            sent,
            m.host.peak_rss.kb(),
            exit_status,
            HostExtra {
                processes: m.host.processes,
                maxrss_note: m.host.peak_rss.note(),
            },
        ),
        checked: Checked {
            full: m.checked.0,
            length: m.checked.1,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::trial::{HostTotals, PeakRss};
    use clap::Parser;
    use driver_kit::clock::CpuClock;
    use driver_kit::percentiles::new_histogram;
    use std::time::Duration;

    #[test]
    fn fields_and_arithmetic() {
        let args = Args::try_parse_from(
            "d --mode persistent --op echo --size 1000 --iterations 4 --warmup 1 \
             --impl-cpus 1 -- h"
                .split_whitespace(),
        )
        .unwrap();
        let mut latency = new_histogram().unwrap();
        for ns in [10_000, 20_000, 30_000, 40_000] {
            latency.record(ns).unwrap();
        }
        let mut host = HostTotals::new(CpuClock::ProcessCpuClock);
        host.processes = 1;
        host.cpu = Duration::from_micros(500);
        host.exit_codes.insert(0);
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
        assert_eq!(json["impl_cpus"], serde_json::json!([1]));
        assert_eq!(json["ops_per_s"], 2000.0);
        assert_eq!(json["mb_per_s"], 2.0); // 4 × 1000 B / 2 ms
        assert_eq!(json["impl"]["cpu_us_per_op"], 100.0); // 500 µs / (4 + 1)
        assert_eq!(json["impl"]["cpu_s"], 0.0005);
        assert_eq!(json["impl"]["cpu_clock"], "process-cpu-clock");
        assert_eq!(json["impl"]["processes"], 1);
        assert_eq!(json["impl"]["exit_status"], serde_json::json!([0]));
        assert!(json.get("host").is_none() && json.get("host_cpus").is_none());
        // The kit's summary of the measured histogram (tested there).
        assert_eq!(
            json["latency_us"],
            serde_json::to_value(Percentiles::of(&m.latency)).unwrap()
        );
        assert_eq!(json["latency_us"]["min"], 10.0);
        assert_eq!(json["checked"]["full"], 4);
        assert_eq!(json["impl"]["maxrss_kb"], 1234);
        assert!(json["impl"].get("maxrss_note").is_none(), "{json}");

        // No reading: null and the reason, not a number.
        m.host.peak_rss = PeakRss::default();
        m.host
            .peak_rss
            .record(Err("cannot read /proc/7/status".to_string()));
        let json = serde_json::to_value(build(&args, 1000, &m)).unwrap();
        assert_eq!(json["impl"]["maxrss_kb"], serde_json::Value::Null);
        assert!(json["impl"]["maxrss_note"]
            .as_str()
            .unwrap()
            .contains("/proc/7/status"));
    }

    #[test]
    fn cpu_lists_are_arrays_of_integers() {
        let args = Args::try_parse_from(
            "d --mode spawn --op ping --iterations 1 --warmup 0 --driver-cpus 0 \
             --impl-cpus 1,0 -- h"
                .split_whitespace(),
        )
        .unwrap();
        let m = Measurement {
            ops: 1,
            elapsed: Duration::from_millis(1),
            latency: new_histogram().unwrap(),
            host: HostTotals::new(CpuClock::Wait4Rusage),
            checked: (1, 0),
        };
        let text = serde_json::to_string(&build(&args, 13, &m)).unwrap();
        assert!(
            text.contains(r#""driver_cpus":[0],"impl_cpus":[1,0],"#),
            "{text}"
        );
    }
}
