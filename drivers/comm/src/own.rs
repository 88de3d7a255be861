//! `--load own`: the implementation's own client program (SPEC §3) loads the server instead
//! of the driver's threads, as in the seed's measurement. The kit runs it on the driver CPUs
//! (it inherits the driver's mask), bounded by the deadline, and takes its JSON
//! ([`driver_kit::client`]); here: what it is asked and what its report must say.

use driver_kit::args::CommonArgs;
use driver_kit::client::{self, Cost};
use driver_kit::error::Result;
use serde_json::{Map, Value};
use std::time::Instant;

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
    /// Its argv and its CPU time over its whole run (wait4).
    pub client: Cost,
    pub reported: Reported,
}

/// The client's numbers (SPEC §3).
#[derive(Debug)]
pub struct Reported {
    pub mb_per_s: f64,
    pub msgs_per_s: f64,
    pub elapsed_s: Option<f64>,
    pub bytes: Option<u64>,
    /// Verbatim from the client (rtt).
    pub latency_us: Option<Value>,
}

/// Runs the client program (--client-json) with the request's options and takes its numbers.
pub fn run(common: &CommonArgs, request: &Request, deadline: Instant) -> Result<Outcome> {
    let run = client::run("the client program", common, request.options(), deadline)?;
    let reported = read_report(&run.report, request).map_err(|why| run.misfit(why))?;
    Ok(Outcome {
        client: run.cost,
        reported,
    })
}

/// The numbers the driver takes from the client's report (SPEC §3), after checking that it
/// describes the run that was asked for (the kit has refused one that reports an `error`).
fn read_report(
    doc: &Map<String, Value>,
    request: &Request,
) -> std::result::Result<Reported, String> {
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
    Ok(Reported {
        mb_per_s: required("mb_per_s")?,
        msgs_per_s: required("msgs_per_s")?,
        elapsed_s: number("elapsed_s")?,
        bytes,
        latency_us,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use driver_kit::testing::object as doc;
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
        ] {
            let err = read_report(&doc(report), &request(mode)).unwrap_err();
            assert!(err.contains(expect), "{err}");
        }
    }
}
