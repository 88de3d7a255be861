//! The parts every driver's report shares (docs/driver-contract.md): where the driver and the
//! implementation ran, and the `impl` object, what the trial cost the implementation.

use crate::args::{CommonArgs, CpuList};
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
}
