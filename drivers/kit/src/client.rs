//! The implementation's own client program (`--client-json`), for drivers that can let it load
//! the implementation instead of their own threads (comm's `--load own`, echonet's
//! `--mode own`): run it and read the one JSON object it prints.
//!
//! The program runs on the driver's CPUs (it inherits the driver's mask), in `--impl-cwd`,
//! with its stderr appended to `--impl-stderr`, in a process group of its own that dies with
//! the driver ([`Launcher::guarded`]), and is killed at the trial's deadline. A thread reads
//! its stdout, up to [`MAX_OUTPUT`], so the wait is on its exit alone. What it cost is its wall
//! time from spawn to exit and its user and system CPU from wait4
//! ([`crate::clock::CpuClock::Wait4Rusage`]).
//!
//! What its report must say is the workload's: the driver checks [`Run::report`] and refuses
//! one that does not fit with [`Run::misfit`], which shows the output beside the reason.
//! Every message names the program, its argv and how it ended.

use crate::args::CommonArgs;
use crate::error::{Failure, Result};
use crate::process::{log_hint, open_log, Launcher};
use serde_json::{Map, Value};
use std::fmt;
use std::io::Read;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// More than any correct report: stdout beyond this is a broken client program.
pub const MAX_OUTPUT: u64 = 1 << 20;
/// After the program exits, how long its stdout may take to reach end of file.
const DRAIN: Duration = Duration::from_secs(2);
/// Characters of its output that a message shows.
const EXCERPT_CHARS: usize = 300;

/// What running the client program cost: the report's `load_generator`.
#[derive(Clone, Debug, PartialEq)]
pub struct Cost {
    /// The command line it ran with: --client-json's list and the driver's request.
    pub argv: Vec<String>,
    /// Spawn to exit (`time`'s real).
    pub wall: Duration,
    /// CPU time of all its threads over its life (wait4, µs), in user mode.
    pub user: Duration,
    /// The same in the kernel.
    pub system: Duration,
}

impl Cost {
    /// User + system.
    pub fn cpu(&self) -> Duration {
        self.user + self.system
    }
}

/// A client program that exited with status 0 and printed one JSON object, which does not
/// report an error.
#[derive(Debug)]
pub struct Run {
    pub cost: Cost,
    /// Its JSON object, as it printed it.
    pub report: Map<String, Value>,
    /// How messages name it.
    name: String,
    /// Its output, as messages show it.
    excerpt: String,
}

impl Run {
    /// The failure for a report that does not describe the run the driver asked for: "NAME's
    /// JSON WHY: OUTPUT" (WHY as "has no mb_per_s", "reports clients = 8, but …").
    pub fn misfit(&self, why: impl fmt::Display) -> Failure {
        Failure::new(format!("{}'s JSON {why}: {}", self.name, self.excerpt))
    }
}

/// Runs the client program of `common`'s --client-json with `options` (what the driver asks
/// of it) appended, in --impl-cwd, its stderr to --impl-stderr, until `deadline`, and reads
/// its report. `name` is how messages call it: "the client program", "the controller". (A
/// driver that runs one requires --client-json when it validates its command line.)
///
/// Fails, saying so with its argv and where its stderr went, when it cannot start, does not
/// finish by the deadline (it is killed), exits other than with status 0 (with its `error`
/// when it printed one, else its output), prints more than [`MAX_OUTPUT`] or anything but
/// one JSON object, or reports an `error` with status 0.
pub fn run(
    name: &str,
    common: &CommonArgs,
    options: impl IntoIterator<Item = String>,
    deadline: Instant,
) -> Result<Run> {
    let mut argv = common
        .client_argv()
        .map_err(Failure::new)?
        .ok_or_else(|| Failure::new(format!("no --client-json: {name} is not known")))?;
    argv.extend(options);
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| Failure::new("--client-json is an empty list"))?;
    let (stderr, log_name) = open_log(common.impl_stderr.as_deref())?;
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    if let Some(dir) = &common.impl_cwd {
        command.current_dir(dir);
    }
    let shown = argv.join(" ");
    let hint = log_hint("stderr", log_name.as_deref());
    let started = Instant::now();
    let (mut child, mut std_child) = Launcher::guarded(command, None)
        .spawn()
        .map_err(|f| f.context(format!("starting {name} {shown}")))?;

    // A thread reads stdout, so the wait below is on the exit alone, with the deadline.
    let mut stdout = std_child
        .stdout
        .take()
        .ok_or_else(|| Failure::new("internal error: no stdout pipe"))?;
    let (output_tx, output_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut out = Vec::new();
        let read = (&mut stdout).take(MAX_OUTPUT + 1).read_to_end(&mut out);
        let _ = output_tx.send(read.map(|_| out));
    });

    let exited = child.wait_exit(deadline);
    let wall = started.elapsed();
    // Reaping kills what is left of its group, which also closes any inherited stdout.
    let (exit, _) = child.reap_by(Instant::now())?;
    if !exited {
        return Err(Failure::new(format!(
            "{name} did not finish within --timeout-s (killed it): {shown}{hint}"
        )));
    }
    let output = match output_rx.recv_timeout(DRAIN) {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(Failure::new(format!("reading {name}'s stdout: {e}"))),
        Err(_) => {
            return Err(Failure::new(format!(
                "{name}'s stdout did not reach end of file ({shown})"
            )))
        }
    };
    let excerpt = excerpt(&String::from_utf8_lossy(&output));
    if !exit.success() {
        let said = match parse(&output) {
            Ok(doc) => match doc.get("error") {
                Some(Value::String(e)) => format!("it reported: {e}"),
                _ => format!("its output: {excerpt}"),
            },
            Err(_) => format!("its output: {excerpt}"),
        };
        return Err(Failure::new(format!(
            "{name} {} ({shown}); {said}{hint}",
            exit.describe()
        )));
    }
    let report = parse(&output).map_err(|why| {
        Failure::new(format!(
            "{name}'s output is not one JSON object ({why}): {excerpt}{hint}"
        ))
    })?;
    let run = Run {
        cost: Cost {
            argv,
            wall,
            user: exit.user_cpu(),
            system: exit.system_cpu(),
        },
        report,
        name: name.to_string(),
        excerpt,
    };
    if let Some(error) = run.report.get("error") {
        return Err(run.misfit(format_args!(
            "reports an error ({error}) with exit status 0"
        )));
    }
    Ok(run)
}

/// The one JSON object of the output (white space around it allowed).
fn parse(output: &[u8]) -> std::result::Result<Map<String, Value>, String> {
    if output.len() as u64 > MAX_OUTPUT {
        return Err(format!("more than {MAX_OUTPUT} bytes"));
    }
    match serde_json::from_slice(output) {
        Ok(Value::Object(doc)) => Ok(doc),
        Ok(_) => Err("not an object".to_string()),
        Err(e) => Err(e.to_string()),
    }
}

/// The output, trimmed, quoted and cut to [`EXCERPT_CHARS`] characters ("…" where cut).
fn excerpt(text: &str) -> String {
    let trimmed = text.trim();
    let shown: String = trimmed.chars().take(EXCERPT_CHARS).collect();
    if shown.len() < trimmed.len() {
        format!("{shown:?}…")
    } else {
        format!("{shown:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;
    use serde_json::json;

    #[derive(Parser)]
    struct Driver {
        #[command(flatten)]
        common: CommonArgs,
    }

    /// The common arguments of `flags`, with --client-json `sh -c SCRIPT client`.
    fn common(script: &str, flags: &str) -> CommonArgs {
        let line = format!("d {flags} -- impl");
        let mut common = Driver::try_parse_from(line.split_whitespace())
            .unwrap()
            .common;
        common.client_json = Some(json!(["sh", "-c", script, "client"]).to_string());
        common
    }

    fn in_a_while() -> Instant {
        Instant::now() + Duration::from_secs(30)
    }

    fn failure(common: &CommonArgs, deadline: Instant) -> String {
        run("the client program", common, [], deadline)
            .unwrap_err()
            .message()
            .to_string()
    }

    #[test]
    fn takes_the_report_and_what_the_run_cost() {
        let script = "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done; \
                      echo ' {\"mb_per_s\": 1.5, \"args\": \"'\"$*\"'\"}'";
        let options = ["--size".to_string(), "3".to_string()];
        let run = run(
            "the client program",
            &common(script, ""),
            options,
            in_a_while(),
        )
        .unwrap();
        assert_eq!(run.report["mb_per_s"], 1.5);
        assert_eq!(run.report["args"], "--size 3");
        assert_eq!(run.cost.argv, ["sh", "-c", script, "client", "--size", "3"]);
        assert!(
            run.cost.user > Duration::ZERO,
            "a busy loop runs in user mode"
        );
        assert_eq!(run.cost.cpu(), run.cost.user + run.cost.system);
        assert!(run.cost.wall > Duration::ZERO);
        assert_eq!(
            run.misfit("has no msgs_per_s").message(),
            "the client program's JSON has no msgs_per_s: \
             \"{\\\"mb_per_s\\\": 1.5, \\\"args\\\": \\\"--size 3\\\"}\""
        );
    }

    #[test]
    fn runs_in_impl_cwd_with_its_stderr_in_the_log() {
        let dir = std::env::temp_dir().join(format!("driver-kit-client-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let log = dir.join("stderr.log");
        let flags = format!(
            "--impl-cwd {} --impl-stderr {}",
            dir.display(),
            log.display()
        );
        let script = "echo on stderr >&2; printf '{\"cwd\": \"%s\"}' \"$(pwd)\"";
        let run = run("the controller", &common(script, &flags), [], in_a_while()).unwrap();
        assert_eq!(run.report["cwd"], dir.to_str().unwrap());
        assert_eq!(std::fs::read_to_string(&log).unwrap(), "on stderr\n");

        let error = failure(&common("exit 4", &flags), in_a_while());
        assert!(
            error.ends_with(&format!("(its stderr: {})", log.display())),
            "{error}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn says_how_a_failed_run_ended() {
        for (script, expect) in [
            (
                "echo '{\"error\": \"client 2: a short reply\"}'; exit 1",
                "the client program exited with status 1 (sh -c echo '{\"error\": \"client 2: \
                 a short reply\"}'; exit 1 client); it reported: client 2: a short reply (its \
                 stderr was not kept: pass --impl-stderr)",
            ),
            ("echo oops; kill -9 $$", "was killed by signal 9 (SIGKILL)"),
            ("echo oops; kill -9 $$", "its output: \"oops\""),
            (
                "echo '[1]'",
                "output is not one JSON object (not an object): \"[1]\"",
            ),
            (
                "echo '{} {}'",
                "output is not one JSON object (trailing characters",
            ),
            ("echo", "output is not one JSON object (EOF while parsing"),
            (
                "echo '{\"error\": \"x\", \"mb_per_s\": 1}'",
                "the client program's JSON reports an error (\"x\") with exit status 0: ",
            ),
            (
                "head -c 1048577 /dev/zero | tr '\\0' ' '",
                &format!("(more than {MAX_OUTPUT} bytes)"),
            ),
        ] {
            let error = failure(&common(script, ""), in_a_while());
            assert!(error.contains(expect), "{script}: {error}");
        }
        let long = failure(
            &common("printf 'x%.0s' $(seq 400); exit 2", ""),
            in_a_while(),
        );
        assert!(
            long.contains(&format!("its output: \"{}\"…", "x".repeat(EXCERPT_CHARS))),
            "{long}"
        );
        let mut none = common("", "");
        none.client_json = None;
        let error = failure(&none, in_a_while());
        assert_eq!(error, "no --client-json: the client program is not known");
        none.client_json = Some("[\"/nonexistent/client\"]".to_string());
        let error = failure(&none, in_a_while());
        assert!(
            error.starts_with("starting the client program /nonexistent/client: cannot start"),
            "{error}"
        );
    }

    #[test]
    fn a_client_that_overstays_is_killed_at_the_deadline() {
        let started = Instant::now();
        // Its grandchild holds stdout open: killing the group closes it.
        let error = failure(
            &common("sleep 60 & sleep 60", ""),
            Instant::now() + Duration::from_millis(200),
        );
        assert!(
            error.starts_with(
                "the client program did not finish within --timeout-s (killed it): sh -c"
            ),
            "{error}"
        );
        assert!(started.elapsed() < Duration::from_secs(20));
    }
}
