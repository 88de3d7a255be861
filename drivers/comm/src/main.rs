//! comm-driver: the neutral load driver of the `comm` workload (workloads/comm/SPEC.md §4).
//! One trial: start the server pinned to the implementation CPUs, wait until it accepts,
//! load it from the driver CPUs (the driver's own checked client threads, or the
//! implementation's own client program), read what the load cost it, stop it with SIGTERM.
//! Prints one JSON object: the results (exit 0), or `{"error": "..."}` (exit 1).

mod cli;
mod frame;
mod load;
mod own;
mod pattern;
mod procinfo;
mod reply;
mod report;
mod server;

use cli::{Args, Load, Mode};
use driver_kit::error::{Failure, Result};
use driver_kit::process::raise_fd_limit;
use report::{Loaded, ServerMeasure};
use server::Server;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    // Rust's runtime already ignores SIGPIPE, so a write to a connection the server closed
    // is an EPIPE error, not the driver's death; std restores the default for the programs
    // the driver starts.
    driver_kit::output::main(run)
}

fn run(args: &Args) -> Result<report::Report> {
    let common = &args.common;
    let deadline = common.deadline()?;
    let impl_cpus = common.impl_set()?;
    raise_fd_limit().map_err(|e| Failure::new(format!("raising the open-file limit: {e}")))?;
    // The bodies, before the server starts: a 64 MiB pattern takes a moment to write.
    let tape = (args.load == Load::Neutral).then(|| pattern::Tape::new(args.size));

    // The server first, so that without --impl-cpus it gets the driver's original mask.
    let mut server = Server::start(common, impl_cpus)?;
    server.wait_ready(common.impl_host, args.port(), deadline)?;
    // The load threads and the client program inherit the driver's mask.
    common.pin_driver()?;

    // The window: from just before the load to just after it, both ends read from the
    // server's process CPU clock (and run delay) while it runs.
    let before = server.served().read()?;
    let loaded = match tape {
        Some(tape) => load::run(&plan(args, deadline), tape).map(Loaded::Neutral),
        None => own_load(args, deadline).map(Loaded::Own),
    };
    let loaded = loaded.map_err(|failure| server.explain(failure))?;
    server.served().check_running()?;
    let spent = server.served().read()?.since(&before);
    let maxrss_kb = server.served().peak_rss_kb()?;
    let host = server.served().host().cloned();
    let exit_status = server.stop()?;
    Ok(report::build(
        args,
        &loaded,
        &ServerMeasure {
            cpu: spent.cpu,
            run_delay: spent.run_delay,
            maxrss_kb,
            exit_status,
            host,
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
        port: args.port(),
        host: args.common.impl_host,
        deadline,
    }
}

fn own_load(args: &Args, deadline: Instant) -> Result<own::Outcome> {
    let request = own::Request {
        clients: args.clients,
        messages: args.messages,
        size: args.size,
        mode: args.mode.name(),
        kind: args.kind,
    };
    own::run(&args.common, &request, deadline)
}
