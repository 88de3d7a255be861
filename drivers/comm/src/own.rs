//! `--load own`: the implementation's own client program (SPEC §3) loads the server instead
//! of the driver's threads, as in the seed's measurement. The driver runs it on the driver
//! CPUs (it inherits the driver's mask), bounds it by the deadline, and takes its JSON.

use driver_kit::error::{Failure, Result};
use driver_kit::process::{open_log, Launcher};
use serde_json::{Map, Value};
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// More than any correct report: stdout beyond this is a broken client.
const MAX_OUTPUT: u64 = 1 << 20;
/// After the client exits, how long its stdout may take to reach end of file.
const DRAIN: Duration = Duration::from_secs(2);

/// What the client is asked to do, appended to its argv as SPEC §3 options.
pub struct Request<'a> {
    pub clients: u64,
    pub messages: u64,
    pub size: usize,
    pub mode: &'a str,
    pub kind: u8,
}

impl Request<'_> {
    pub fn options(&self) -> Vec<String> {
        let mut options = vec![
            "--clients".to_string(),
            self.clients.to_string(),
            "--messages".to_string(),
            self.messages.to_string(),
            "--size".to_string(),
            self.size.to_string(),
            "--mode".to_string(),
            self.mode.to_string(),
        ];
        if self.kind != 0 {
            options.extend(["--type".to_string(), self.kind.to_string()]);
        }
        options
    }
}

pub struct Outcome {
    pub argv: Vec<String>,
    pub mb_per_s: f64,
    pub msgs_per_s: f64,
    pub elapsed_s: Option<f64>,
    pub bytes: Option<u64>,
    /// Verbatim from the client (rtt).
    pub latency_us: Option<Value>,
    /// The client program's CPU time over its whole run (wait4).
    pub cpu: Duration,
}

pub fn run(
    base_argv: &[String],
    request: &Request,
    cwd: Option<&Path>,
    log: Option<&Path>,
    deadline: Instant,
) -> Result<Outcome> {
    let mut argv = base_argv.to_vec();
    argv.extend(request.options());
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| Failure::new("--client-json is an empty list"))?;
    let (stderr, _) = open_log(log)?;
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr);
    if let Some(dir) = cwd {
        command.current_dir(dir);
    }
    let shown = argv.join(" ");
    let (mut child, mut std_child) = Launcher::guarded(command, None)
        .spawn()
        .map_err(|f| f.context(format!("starting the client program {shown}")))?;

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

    // Reaping kills what is left of its group, which also closes any inherited stdout.
    let (exit, exited) = child.reap_by(deadline)?;
    if !exited {
        return Err(Failure::new(format!(
            "the client program did not finish within --timeout-s (killed it): {shown}"
        )));
    }
    let output = match output_rx.recv_timeout(DRAIN) {
        Ok(Ok(out)) => out,
        Ok(Err(e)) => return Err(Failure::new(format!("reading the client's stdout: {e}"))),
        Err(_) => {
            return Err(Failure::new(
                "the client's stdout did not reach end of file",
            ))
        }
    };
    let text = String::from_utf8_lossy(&output);
    if !exit.success() {
        let said = match parse(&output) {
            Ok(doc) => match doc.get("error") {
                Some(Value::String(e)) => format!("it reported: {e}"),
                _ => format!("its output: {}", excerpt(&text)),
            },
            Err(_) => format!("its output: {}", excerpt(&text)),
        };
        return Err(Failure::new(format!(
            "the client program {} ({shown}); {said}",
            exit.describe()
        )));
    }
    let doc = parse(&output).map_err(|why| {
        Failure::new(format!(
            "the client program's output is not one JSON object ({why}): {}",
            excerpt(&text)
        ))
    })?;
    let mut outcome = read_report(&doc, request).map_err(|why| {
        Failure::new(format!(
            "the client program's JSON {why}: {}",
            excerpt(&text)
        ))
    })?;
    outcome.argv = argv;
    outcome.cpu = exit.cpu();
    Ok(outcome)
}

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

/// The numbers the driver takes from the client's report (SPEC §3), after checking that it
/// describes the run that was asked for.
fn read_report(
    doc: &Map<String, Value>,
    request: &Request,
) -> std::result::Result<Outcome, String> {
    if let Some(error) = doc.get("error") {
        return Err(format!("reports an error ({error}) with exit status 0"));
    }
    let number = |field: &str| -> std::result::Result<Option<f64>, String> {
        match doc.get(field) {
            None => Ok(None),
            Some(v) => v
                .as_f64()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .map(Some)
                .ok_or_else(|| format!("has {field} = {v}, not a non-negative number")),
        }
    };
    let required = |field: &str| number(field)?.ok_or_else(|| format!("has no {field}"));
    for (field, asked) in [
        ("clients", request.clients),
        ("messages", request.messages),
        ("size", request.size as u64),
    ] {
        if let Some(v) = doc.get(field) {
            if v.as_u64() != Some(asked) {
                return Err(format!(
                    "reports {field} = {v}, but the driver asked for {asked}"
                ));
            }
        }
    }
    let latency_us = match (request.mode, doc.get("latency_us")) {
        ("rtt", Some(Value::Object(l))) => Some(Value::Object(l.clone())),
        ("rtt", _) => return Err("has no latency_us object (mode rtt)".to_string()),
        _ => None,
    };
    let bytes = match doc.get("bytes") {
        None => None,
        Some(v) => Some(
            v.as_u64()
                .ok_or_else(|| format!("has bytes = {v}, not a byte count"))?,
        ),
    };
    Ok(Outcome {
        argv: Vec::new(),
        mb_per_s: required("mb_per_s")?,
        msgs_per_s: required("msgs_per_s")?,
        elapsed_s: number("elapsed_s")?,
        bytes,
        latency_us,
        cpu: Duration::ZERO,
    })
}

fn excerpt(text: &str) -> String {
    let trimmed = text.trim();
    let shown: String = trimmed.chars().take(300).collect();
    if shown.len() < trimmed.len() {
        format!("{shown:?}…")
    } else {
        format!("{shown:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(mode: &str) -> Request<'_> {
        Request {
            clients: 16,
            messages: 1000,
            size: 4096,
            mode,
            kind: 0,
        }
    }

    fn doc(value: Value) -> Map<String, Value> {
        match value {
            Value::Object(m) => m,
            _ => unreachable!(),
        }
    }

    #[test]
    fn options_follow_the_spec() {
        assert_eq!(
            request("stream").options().join(" "),
            "--clients 16 --messages 1000 --size 4096 --mode stream"
        );
        let typed = Request {
            kind: 1,
            ..request("rtt")
        };
        assert!(typed.options().join(" ").ends_with("--mode rtt --type 1"));
    }

    #[test]
    fn takes_the_clients_numbers() {
        let report = doc(
            json!({"clients":16,"messages":1000,"size":4096,"bytes":65536000,
            "elapsed_s":0.12,"mb_per_s":546.1,"msgs_per_s":133333.3}),
        );
        let outcome = read_report(&report, &request("stream")).unwrap();
        assert_eq!(outcome.mb_per_s, 546.1);
        assert_eq!(outcome.msgs_per_s, 133333.3);
        assert_eq!(outcome.bytes, Some(65_536_000));
        assert_eq!(outcome.elapsed_s, Some(0.12));
        assert!(outcome.latency_us.is_none());

        let rtt = doc(json!({"mb_per_s":1.5,"msgs_per_s":20000,"latency_us":{"p50":40.5}}));
        let outcome = read_report(&rtt, &request("rtt")).unwrap();
        assert_eq!(outcome.latency_us, Some(json!({"p50":40.5})));
    }

    #[test]
    fn refuses_reports_that_do_not_fit() {
        for (report, mode, expect) in [
            (json!({"msgs_per_s":1}), "stream", "has no mb_per_s"),
            (
                json!({"mb_per_s":"fast","msgs_per_s":1}),
                "stream",
                "not a non-negative number",
            ),
            (
                json!({"mb_per_s":1,"msgs_per_s":1,"clients":8}),
                "stream",
                "clients = 8",
            ),
            (json!({"mb_per_s":1,"msgs_per_s":1}), "rtt", "no latency_us"),
            (
                json!({"mb_per_s":1,"msgs_per_s":1,"bytes":-1}),
                "stream",
                "not a byte count",
            ),
            (
                json!({"error":"x","mb_per_s":1,"msgs_per_s":1}),
                "stream",
                "reports an error",
            ),
        ] {
            let err = read_report(&doc(report), &request(mode)).err().unwrap();
            assert!(err.contains(expect), "{err}");
        }
        assert!(parse(b"[1]").is_err());
        assert!(parse(b"{} {}").is_err());
        assert!(parse(b" {\"a\":1}\n").is_ok());
    }
}
