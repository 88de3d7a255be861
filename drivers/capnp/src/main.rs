//! capnp-driver: one trial of the capnp workload (workloads/capnp/SPEC.md §9).
//!
//! - object, bytes: `IMPL_ARGV CASE MODE REUSE COMPRESSION ITERS` pinned to --impl-cpus; the
//!   program times its own iterations and prints its report; the driver checks it and adds
//!   the program's whole-life CPU and peak RSS from wait4.
//! - pipe: `IMPL_ARGV CASE server …` pinned to --impl-cpus and the client program
//!   (--client-json, default IMPL_ARGV) `CASE client …` pinned to --driver-cpus, the client's
//!   stdout joined to the server's stdin and the server's stdout to the client's stdin. The
//!   client's report is the last line of its stderr; the server's `{"served": N}` the last of
//!   its. CPU per iteration adds the server's whole-life CPU per request served.

mod cli;
mod program;
mod report;

use cli::{Args, Mode};
use driver_kit::clock::CpuClock;
use driver_kit::usage::{ImplUsage, LoadGenerator};
use driver_kit::{Failure, Result};
use program::{Program, Wiring};
use report::{ClientSide, ImplExtra, ProgramReport, Report};
use serde_json::Value;
use std::ffi::OsString;
use std::process::ExitCode;
use std::time::Duration;

/// After the client ends, how long a server may take to see end of input and exit.
const SERVER_GRACE: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    driver_kit::output::main::<Args, _, _>(trial)
}

fn trial(args: &Args) -> Result<Report> {
    args.common.pin_driver()?;
    match args.mode {
        Mode::Object | Mode::Bytes => alone(args),
        Mode::Pipe => piped(args),
    }
}

fn with_words(argv: &[OsString], words: Vec<String>) -> Vec<OsString> {
    argv.iter()
        .cloned()
        .chain(words.into_iter().map(OsString::from))
        .collect()
}

/// object and bytes: one program, measured by itself.
fn alone(args: &Args) -> Result<Report> {
    let deadline = args.common.deadline()?;
    let log = args.common.impl_stderr.as_deref();
    let mode = cli::word(&args.mode);
    let argv = with_words(&args.common.impl_argv, args.program_words(&mode));
    let started = Program::start(
        "the program",
        &argv,
        args.common.impl_set()?,
        args.common.impl_cwd.as_deref(),
        Wiring::Alone,
    )?;
    let (ended, killed) = started.finish(deadline)?;
    ended.keep_stderr(log);
    if killed {
        return Err(Failure::new(format!(
            "the program did not finish within --timeout-s (killed it): {}",
            ended.shown
        )));
    }
    if !ended.exit.success() {
        return Err(ended.failure(log));
    }
    let line = ended.stdout.trim_ascii();
    let report = ProgramReport::read("the program", line, args, &mode)?;
    let implementation = report::self_timed(
        &report,
        ended.exit.cpu().as_secs_f64(),
        ended.exit.maxrss_kb(),
        args,
    );
    Ok(Report::new(
        args,
        report,
        implementation,
        ended.wall.as_secs_f64(),
        0.0,
    ))
}

/// pipe: a server and a client program joined by two pipes.
fn piped(args: &Args) -> Result<Report> {
    let deadline = args.common.deadline()?;
    let log = args.common.impl_stderr.as_deref();
    let server_argv = with_words(&args.common.impl_argv, args.program_words("server"));
    let client_base: Vec<OsString> = match args.common.client_argv().map_err(Failure::new)? {
        Some(argv) => argv.into_iter().map(OsString::from).collect(),
        None => args.common.impl_argv.clone(),
    };
    let client_argv = with_words(&client_base, args.program_words("client"));
    let cwd = args.common.impl_cwd.as_deref();

    let mut server = Program::start(
        "the server",
        &server_argv,
        args.common.impl_set()?,
        cwd,
        Wiring::Serving,
    )?;
    let (to_server, from_server) = match (server.stdin.take(), server.stdout_pipe.take()) {
        (Some(stdin), Some(stdout)) => (stdin, stdout),
        _ => {
            return Err(Failure::new(
                "internal error: the server's pipes are missing",
            ))
        }
    };
    let client = Program::start(
        "the client",
        &client_argv,
        args.common.driver_set()?,
        cwd,
        Wiring::Client(from_server, to_server),
    )?;
    let (client, client_killed) = client.finish(deadline)?;
    let server_until = (std::time::Instant::now() + SERVER_GRACE).min(deadline);
    let (server, server_killed) = server.finish(server_until)?;
    client.keep_stderr(log);
    server.keep_stderr(log);

    // The first to fail is the one to blame: a server that died makes its client fail too.
    if !server.exit.success() || server_killed {
        let failure = if server_killed {
            Failure::new(format!(
                "the server did not exit after its client ended (killed it): {}",
                server.shown
            ))
        } else {
            server.failure(log)
        };
        return Err(failure.also(format!("the client {}", client.exit.describe())));
    }
    if client_killed {
        return Err(Failure::new(format!(
            "the client did not finish within --timeout-s (killed it): {}",
            client.shown
        )));
    }
    if !client.exit.success() {
        return Err(client.failure(log));
    }
    let report = ProgramReport::read("the client", client.last_stderr_line(), args, "client")?;
    let all = args.iterations + args.warmup();
    let served = match serde_json::from_slice::<Value>(server.last_stderr_line()) {
        Ok(doc) => doc.get("served").and_then(Value::as_u64),
        Err(_) => None,
    };
    if served != Some(all) {
        return Err(Failure::new(format!(
            "the server's last stderr line should be {{\"served\": {all}}}: {}",
            program::excerpt(server.last_stderr_line())
        )));
    }
    let server_cpu = server.exit.cpu();
    let implementation = ImplUsage::new(
        server_cpu,
        CpuClock::Wait4Rusage,
        all,
        Some(server.exit.maxrss_kb()),
        vec![0],
        ImplExtra {
            whole_life_cpu_s: server_cpu.as_secs_f64(),
            served,
        },
    );
    let client_side = ClientSide {
        cpu_s: report.cpu_s,
        maxrss_kb: client.exit.maxrss_kb(),
        wall_s: client.wall.as_secs_f64(),
    };
    let mut out = Report::new(
        args,
        report,
        implementation,
        client.wall.as_secs_f64(),
        server_cpu.as_secs_f64() / all as f64,
    );
    out.load_generator = Some(LoadGenerator::client_timed(&driver_kit::client::Cost {
        argv: client_argv
            .iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        wall: client.wall,
        user: client.exit.user_cpu(),
        system: client.exit.system_cpu(),
    }));
    out.client = Some(client_side);
    Ok(out)
}
