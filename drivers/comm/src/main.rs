//! comm-driver: the neutral load driver of the `comm` workload (workloads/comm/SPEC.md §4).
//! One trial: start the server pinned to the implementation CPUs, wait until it accepts,
//! load it from the driver CPUs (the driver's own checked client threads, or the
//! implementation's own client program), read what the load cost it, stop it with SIGTERM.
//! Prints one JSON object: the results (exit 0), or `{"error": "..."}` (exit 1).

mod affinity;
mod child;
mod cli;
mod error;
mod frame;
mod load;
mod own;
mod pattern;
mod procinfo;
mod reply;
mod report;
mod server;

use affinity::CpuSet;
use clap::{CommandFactory, Parser};
use cli::{Args, Load, Mode};
use error::{Failure, Result};
use report::{Loaded, ServerMeasure};
use server::Server;
use std::io::Write;
use std::process::ExitCode;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    // Rust's runtime already ignores SIGPIPE, so a write to a connection the server closed
    // is an EPIPE error, not the driver's death; std restores the default for the programs
    // the driver starts.
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
            eprintln!("comm-driver: cannot write the result: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<report::Report> {
    let deadline = Instant::now()
        .checked_add(Duration::from_secs_f64(args.timeout_s))
        .ok_or_else(|| Failure::new("--timeout-s is too large"))?;
    let host_cpus = match &args.host_cpus {
        Some(cpus) => Some(cpu_set(cpus, "--host-cpus")?),
        None => None,
    };
    child::raise_fd_limit()
        .map_err(|e| Failure::new(format!("raising the open-file limit: {e}")))?;
    // The bodies, before the server starts: a 64 MiB pattern takes a moment to write.
    let tape = (args.load == Load::Neutral).then(|| pattern::Tape::new(args.size));

    // The server first, so that without --host-cpus it gets the driver's original mask.
    let mut server = Server::start(
        &args.server_argv,
        args.host_cwd.as_deref(),
        args.host_stderr.as_deref(),
        host_cpus,
    )?;
    server.wait_ready(args.port, deadline)?;
    // The load threads and the client program inherit the driver's mask.
    if let Some(cpus) = &args.driver_cpus {
        cpu_set(cpus, "--driver-cpus")?
            .apply_to_current_thread()
            .map_err(|e| Failure::new(format!("pinning the driver to {cpus:?}: {e}")))?;
    }

    let cpu_before = server.cpu_time()?;
    let loaded = match tape {
        Some(tape) => load::run(&plan(args, deadline), tape).map(Loaded::Neutral),
        None => own_load(args, deadline).map(Loaded::Own),
    };
    let loaded = loaded.map_err(|failure| server.explain(failure))?;
    server.check_running()?;
    let cpu = server.cpu_time()?.saturating_sub(cpu_before);
    let maxrss_kb = server.peak_rss_kb()?;
    let exit = server.stop()?;
    Ok(report::build(
        args,
        &loaded,
        &ServerMeasure {
            cpu,
            maxrss_kb,
            exit_status: exit.code(),
        },
    ))
}

fn plan(args: &Args, deadline: Instant) -> load::Plan {
    load::Plan {
        shape: match args.mode {
            Mode::Stream => load::Shape::Stream,
            Mode::Rtt => load::Shape::RoundTrip,
        },
        clients: args.clients,
        messages: args.messages,
        warmup: args.warmup,
        kind: args.kind,
        coalesce: args.coalesce_bytes(),
        port: args.port,
        deadline,
    }
}

fn own_load(args: &Args, deadline: Instant) -> Result<own::Outcome> {
    let argv = args.client_argv().map_err(Failure::new)?;
    let request = own::Request {
        clients: args.clients,
        messages: args.messages,
        size: args.size,
        mode: args.mode.name(),
        kind: args.kind,
    };
    own::run(
        &argv,
        &request,
        args.host_cwd.as_deref(),
        args.host_stderr.as_deref(),
        deadline,
    )
}

fn cpu_set(cpus: &[usize], flag: &str) -> Result<CpuSet> {
    CpuSet::from_list(cpus).map_err(|e| Failure::new(format!("{flag}: {e}")))
}
