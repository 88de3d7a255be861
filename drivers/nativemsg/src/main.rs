//! nativemsg-driver: the neutral load generator of the `nativemsg` workload. It starts a
//! Native Messaging host as Chromium does, runs one trial (SPEC §5) and prints one JSON
//! object: the results (exit 0), or `{"error": "..."}` when the trial failed (exit 1) or the
//! command line was bad (exit 2). The plumbing every driver shares is in drivers/kit.

mod check;
mod cli;
mod frame;
mod host;
mod payload;
mod persistent;
mod report;
mod spawn;
mod trial;

use cli::{Args, Mode};
use driver_kit::error::{Failure, Result};
use host::Launcher;
use std::process::ExitCode;
use trial::Trial;

fn main() -> ExitCode {
    // A host that dies while we write must give EPIPE (a clear failure), not kill the driver.
    // SAFETY: setting a signal disposition before any other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    driver_kit::output::main(run)
}

fn run(args: &Args) -> Result<report::Report> {
    let common = &args.common;
    let deadline = common.deadline()?;
    // The driver pins itself first: the launcher records this mask to return to after each
    // spawn.
    common.pin_driver()?;
    let launcher = Launcher::new(common, common.impl_set()?)?;
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
