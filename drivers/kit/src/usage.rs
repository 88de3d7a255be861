//! The parts every driver's report shares (docs/driver-contract.md): where the driver and the
//! implementation ran, the `impl` object, what the trial cost the implementation, and the
//! `load_generator` object, what loading it cost.

use crate::args::{CommonArgs, CpuList};
use crate::client::Cost;
use crate::clock::CpuClock;
use crate::percentiles::round;
use serde::Serialize;
use serde_json::Value;
use std::time::Duration;

/// `driver_cpus` and `impl_cpus` of a report, flattened into it (null: not pinned).
#[derive(Clone, Debug, Serialize)]
pub struct Placement {
    pub driver_cpus: Option<CpuList>,
    pub impl_cpus: Option<CpuList>,
}

impl Placement {
    pub fn of(args: &CommonArgs) -> Placement {
        Placement {
            driver_cpus: args.driver_cpus.clone(),
            impl_cpus: args.impl_cpus.clone(),
        }
    }
}

/// The `impl` object: the implementation's CPU time, how it was measured, the CPU per unit of
/// work, its peak RSS and how it ended, plus the workload's own fields (`extra`, flattened).
#[derive(Clone, Debug, Serialize)]
pub struct ImplUsage<X: Serialize> {
    pub cpu_s: f64,
    pub cpu_clock: CpuClock,
    /// cpu_s in µs over the operations the implementation served in that time.
    pub cpu_us_per_op: f64,
    /// VmHWM in KiB (memory.rs); null when it could not be read.
    pub maxrss_kb: Option<u64>,
    /// The workload's convention: one status, or the distinct statuses of many processes.
    pub exit_status: Value,
    #[serde(flatten)]
    pub extra: X,
}

impl<X: Serialize> ImplUsage<X> {
    /// `cpu` spent on `ops` operations (at least one is assumed, so a zero never divides).
    pub fn new(
        cpu: Duration,
        cpu_clock: CpuClock,
        ops: u64,
        maxrss_kb: Option<u64>,
        exit_status: impl Into<Value>,
        extra: X,
    ) -> Self {
        let cpu_s = cpu.as_secs_f64();
        ImplUsage {
            // ns where the clock gives them.
            cpu_s: round(cpu_s, 9),
            cpu_clock,
            cpu_us_per_op: round(cpu_s * 1e6 / ops.max(1) as f64, 4),
            maxrss_kb,
            exit_status: exit_status.into(),
            extra,
        }
    }
}

/// No workload fields.
#[derive(Clone, Debug, Serialize)]
pub struct NoExtra {}

/// The `load_generator` object: what loaded the implementation, the driver's own threads or
/// the implementation's client program, and its CPU time (s, µs resolution).
#[derive(Clone, Debug, Serialize)]
pub struct LoadGenerator {
    /// "driver" (the driver's own threads) or "client" (the implementation's program).
    pub kind: &'static str,
    /// The driver's CPU while the load ran, or the client program's over its whole run.
    pub cpu_s: f64,
    /// How cpu_s was measured, where the workload's report says it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_clock: Option<CpuClock>,
    /// A client program's user and system parts of cpu_s (`time`'s), where the report says
    /// them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_user_s: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_sys_s: Option<f64>,
    /// The driver's load threads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// The client program's command line.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub argv: Option<Vec<String>>,
}

impl LoadGenerator {
    /// The driver's own `threads`, which used `cpu` while the load ran.
    pub fn driver(cpu: Duration, threads: usize) -> Self {
        LoadGenerator {
            kind: "driver",
            cpu_s: round(cpu.as_secs_f64(), 6),
            cpu_clock: None,
            cpu_user_s: None,
            cpu_sys_s: None,
            threads: Some(threads),
            argv: None,
        }
    }

    /// The implementation's client program: its CPU over its whole run (wait4) and its argv.
    pub fn client(cost: &Cost) -> Self {
        LoadGenerator {
            kind: "client",
            cpu_s: round(cost.cpu().as_secs_f64(), 6),
            cpu_clock: None,
            cpu_user_s: None,
            cpu_sys_s: None,
            threads: None,
            argv: Some(cost.argv.clone()),
        }
    }

    /// [`LoadGenerator::client`] with `cpu_clock` and the user/system split, as `time` shows
    /// a program's cost.
    pub fn client_timed(cost: &Cost) -> Self {
        LoadGenerator {
            cpu_clock: Some(CpuClock::Wait4Rusage),
            cpu_user_s: Some(round(cost.user.as_secs_f64(), 6)),
            cpu_sys_s: Some(round(cost.system.as_secs_f64(), 6)),
            ..LoadGenerator::client(cost)
        }
    }

    /// Names how cpu_s was measured.
    pub fn with_clock(self, clock: CpuClock) -> Self {
        LoadGenerator {
            cpu_clock: Some(clock),
            ..self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Serialize)]
    struct Extra {
        processes: u64,
    }

    #[test]
    fn the_impl_object_has_the_contracts_fields() {
        let usage = ImplUsage::new(
            Duration::from_nanos(1_500_000_001),
            CpuClock::ProcessCpuClock,
            3,
            Some(2048),
            json!([0]),
            Extra { processes: 1 },
        );
        assert_eq!(
            serde_json::to_value(&usage).unwrap(),
            json!({"cpu_s": 1.500000001, "cpu_clock": "process-cpu-clock",
                   "cpu_us_per_op": 500000.0003, "maxrss_kb": 2048, "exit_status": [0],
                   "processes": 1})
        );
        let none = ImplUsage::new(
            Duration::ZERO,
            CpuClock::Wait4Rusage,
            0,
            None,
            0,
            NoExtra {},
        );
        let json = serde_json::to_value(&none).unwrap();
        assert_eq!(json["cpu_us_per_op"], 0.0);
        assert_eq!(json["maxrss_kb"], Value::Null);
        assert_eq!(json["exit_status"], 0);
        assert_eq!(json.as_object().unwrap().len(), 5);
    }

    #[test]
    fn the_load_generator_says_only_what_the_report_asks_for() {
        let driver = LoadGenerator::driver(Duration::from_micros(90_000_400), 32);
        assert_eq!(
            serde_json::to_string(&driver).unwrap(),
            r#"{"kind":"driver","cpu_s":90.0004,"threads":32}"#
        );
        let clocked = driver.with_clock(CpuClock::ProcessCpuClock);
        assert_eq!(
            serde_json::to_value(&clocked).unwrap()["cpu_clock"],
            "process-cpu-clock"
        );
        let cost = Cost {
            argv: vec!["c".to_string(), "-x".to_string()],
            wall: Duration::from_millis(400),
            user: Duration::from_micros(120_001),
            system: Duration::from_millis(80),
        };
        assert_eq!(
            serde_json::to_string(&LoadGenerator::client(&cost)).unwrap(),
            r#"{"kind":"client","cpu_s":0.200001,"argv":["c","-x"]}"#
        );
        assert_eq!(
            serde_json::to_string(&LoadGenerator::client_timed(&cost)).unwrap(),
            r#"{"kind":"client","cpu_s":0.200001,"cpu_clock":"wait4-rusage","cpu_user_s":0.120001,"cpu_sys_s":0.08,"argv":["c","-x"]}"#
        );
    }
}
