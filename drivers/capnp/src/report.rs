//! The programs' reports (SPEC §5), checked against the run the driver asked for, and the
//! driver's own report built from them and from wait4.

use crate::cli::{word, Args, Mode};
use driver_kit::clock::CpuClock;
use driver_kit::percentiles::round;
use driver_kit::usage::{ImplUsage, LoadGenerator, Placement};
use driver_kit::{Failure, Result};
use serde::Serialize;
use serde_json::{Map, Value};

/// A benchmark program's report, read and checked.
pub struct ProgramReport {
    pub doc: Map<String, Value>,
    pub elapsed_s: f64,
    pub cpu_s: f64,
    pub setup_s: f64,
    pub bytes: u64,
}

impl ProgramReport {
    /// Parses `line` (one JSON object) from `who` and checks that it describes the run asked
    /// for: the same five words, the warm-up of SPEC §5, every response checked.
    pub fn read(who: &str, line: &[u8], args: &Args, mode: &str) -> Result<ProgramReport> {
        let shown = crate::program::excerpt(line);
        let doc: Map<String, Value> = match serde_json::from_slice(line) {
            Ok(Value::Object(doc)) => doc,
            _ => {
                return Err(Failure::new(format!(
                    "{who}'s report is not one JSON object: {shown}"
                )))
            }
        };
        let misfit = |why: String| Failure::new(format!("{who}'s report {why}: {shown}"));
        let text = |key: &str| doc.get(key).and_then(Value::as_str).unwrap_or("");
        let expected = [
            ("case", word(&args.case)),
            ("mode", mode.to_string()),
            ("reuse", word(&args.reuse)),
            ("compression", word(&args.compression)),
        ];
        for (key, want) in expected {
            if text(key) != want {
                return Err(misfit(format!("has {key} {:?}, not {want:?}", text(key))));
            }
        }
        let count = |key: &str| doc.get(key).and_then(Value::as_u64);
        let seconds = |key: &str| {
            doc.get(key)
                .and_then(Value::as_f64)
                .filter(|v| v.is_finite() && *v >= 0.0)
        };
        if count("iterations") != Some(args.iterations) {
            return Err(misfit(format!(
                "does not say iterations = {}",
                args.iterations
            )));
        }
        if count("warmup") != Some(args.warmup()) {
            return Err(misfit(format!("does not say warmup = {}", args.warmup())));
        }
        let all = args.iterations + args.warmup();
        if count("checked") != Some(all) {
            return Err(misfit(format!("does not say checked = {all}")));
        }
        let elapsed_s = seconds("elapsed_s")
            .filter(|v| *v > 0.0)
            .ok_or_else(|| misfit("has no positive elapsed_s".into()))?;
        let cpu_s = seconds("cpu_s").ok_or_else(|| misfit("has no cpu_s".into()))?;
        let setup_s = seconds("setup_s").ok_or_else(|| misfit("has no setup_s".into()))?;
        let request =
            count("request_bytes").ok_or_else(|| misfit("has no request_bytes".into()))?;
        let response =
            count("response_bytes").ok_or_else(|| misfit("has no response_bytes".into()))?;
        if args.mode != Mode::Object && (request == 0 || response == 0) {
            return Err(misfit("moved no bytes in a serialising mode".into()));
        }
        Ok(ProgramReport {
            doc,
            elapsed_s,
            cpu_s,
            setup_s,
            bytes: request + response,
        })
    }
}

/// What the driver adds to `impl`: the program's CPU over its whole life (start-up included)
/// beside the timed figure, and in pipe mode the server's count.
#[derive(Serialize)]
pub struct ImplExtra {
    pub whole_life_cpu_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub served: Option<u64>,
}

/// The client's side of a pipe trial.
#[derive(Serialize)]
pub struct ClientSide {
    pub cpu_s: f64,
    pub maxrss_kb: u64,
    pub wall_s: f64,
}

/// The driver's report (docs/driver-contract.md plus this workload's members).
#[derive(Serialize)]
pub struct Report {
    pub driver: &'static str,
    #[serde(flatten)]
    pub placement: Placement,
    pub case: String,
    pub mode: String,
    pub reuse: String,
    pub compression: String,
    pub iterations: u64,
    pub warmup: u64,
    /// Wall time per timed iteration, as the program (the client) timed it.
    pub us_per_iteration: f64,
    /// CPU per timed iteration: the program's (the client's) over its timed iterations, plus
    /// in pipe mode the server's whole-life CPU per request it served.
    pub cpu_us_per_iteration: f64,
    /// Request + response bytes per second of the timed iterations (null in object mode).
    pub mb_per_s: Option<f64>,
    pub bytes_per_iteration: f64,
    /// The program's (the client's) start-up: main's first statement to the warm-up.
    pub setup_s: f64,
    /// Spawn to exit of the program (the client).
    pub wall_s: f64,
    #[serde(rename = "impl")]
    pub implementation: ImplUsage<ImplExtra>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub load_generator: Option<LoadGenerator>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientSide>,
    /// The program's (the client's) own report, as printed.
    pub program: Map<String, Value>,
}

impl Report {
    /// The common part from the program's (the client's) report.
    pub fn new(
        args: &Args,
        report: ProgramReport,
        implementation: ImplUsage<ImplExtra>,
        wall_s: f64,
        extra_cpu_per_iteration_s: f64,
    ) -> Report {
        let iterations = args.iterations as f64;
        let mb_per_s = (args.mode != Mode::Object)
            .then(|| round(report.bytes as f64 / report.elapsed_s / 1e6, 3));
        Report {
            driver: "capnp",
            placement: Placement::of(&args.common),
            case: word(&args.case),
            mode: word(&args.mode),
            reuse: word(&args.reuse),
            compression: word(&args.compression),
            iterations: args.iterations,
            warmup: args.warmup(),
            us_per_iteration: round(report.elapsed_s * 1e6 / iterations, 4),
            cpu_us_per_iteration: round(
                (report.cpu_s / iterations + extra_cpu_per_iteration_s) * 1e6,
                4,
            ),
            mb_per_s,
            bytes_per_iteration: round(report.bytes as f64 / iterations, 1),
            setup_s: round(report.setup_s, 6),
            wall_s: round(wall_s, 6),
            implementation,
            load_generator: None,
            client: None,
            program: report.doc,
        }
    }
}

/// `impl` for a program that measured itself (object, bytes).
pub fn self_timed(
    report: &ProgramReport,
    whole_life_s: f64,
    maxrss_kb: u64,
    args: &Args,
) -> ImplUsage<ImplExtra> {
    ImplUsage::new(
        std::time::Duration::from_secs_f64(report.cpu_s),
        CpuClock::SelfReported,
        args.iterations,
        Some(maxrss_kb),
        vec![0],
        ImplExtra {
            whole_life_cpu_s: round(whole_life_s, 6),
            served: None,
        },
    )
}
