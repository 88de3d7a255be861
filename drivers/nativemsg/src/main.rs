//! nativemsg-driver: the neutral load generator of the `nativemsg` workload. It starts a
//! Native Messaging host as Chromium does, runs one trial (SPEC §5) and prints one JSON
//! object: the results (exit 0), or `{"error": "..."}` when the trial failed (exit 1).

mod affinity;
mod check;
mod cli;
mod error;
mod frame;
mod host;
mod payload;
mod persistent;
mod report;
mod spawn;
mod trial;

use affinity::CpuSet;
use clap::{CommandFactory, Parser};
use cli::{Args, Mode};
use error::{Failure, Result};
use host::Launcher;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};
use trial::Trial;

fn main() -> ExitCode {
    // A host that dies while we write must give EPIPE (a clear failure), not kill the driver.
    // SAFETY: setting a signal disposition before any other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };

    let args = Args::parse();
    if let Err(message) = args.validate() {
        Args::command()
            .error(clap::error::ErrorKind::ValueValidation, message)
            .exit();
    }
    let (output, status) = match run(&args) {
        Ok(report) => (serde_json::to_string(&report), ExitCode::SUCCESS),
        Err(failure) => (
            serde_json::to_string(&serde_json::json!({"error": failure.message()})),
            ExitCode::FAILURE,
        ),
    };
    let printed = output
        .map_err(std::io::Error::from)
        .and_then(|json| writeln!(std::io::stdout().lock(), "{json}"));
    match printed {
        Ok(()) => status,
        Err(e) => {
            eprintln!("nativemsg-driver: cannot write the result: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<report::Report> {
    let deadline = Instant::now()
        .checked_add(Duration::from_secs_f64(args.timeout_s))
        .ok_or_else(|| Failure::new("--timeout-s is too large"))?;
    // The driver pins itself first: the launcher records this mask to return to after each
    // spawn.
    if let Some(cpus) = &args.driver_cpus {
        cpu_set(cpus, "--driver-cpus")?
            .apply_to_current_thread()
            .map_err(|e| Failure::new(format!("pinning the driver to {cpus:?}: {e}")))?;
    }
    let host_cpus = match &args.host_cpus {
        Some(cpus) => Some(cpu_set(cpus, "--host-cpus")?),
        None => None,
    };
    let launcher = Launcher::new(
        &args.host_argv,
        args.host_cwd.as_deref(),
        args.host_stderr.as_deref(),
        host_cpus,
    )?;
    let request = args.request().map_err(Failure::new)?;
    let request_body_bytes = request.body_len();
    let mut trial = Trial {
        launcher,
        request,
        iterations: args.iterations,
        warmup: args.warmup,
        check_full: args.check_full,
        deadline,
    };
    let measurement = match args.mode {
        Mode::Persistent => persistent::run(&mut trial)?,
        Mode::Spawn => spawn::run(&mut trial)?,
    };
    Ok(report::build(args, request_body_bytes, &measurement))
}

fn cpu_set(cpus: &[usize], flag: &str) -> Result<CpuSet> {
    CpuSet::from_list(cpus).map_err(|e| Failure::new(format!("{flag}: {e}")))
}
