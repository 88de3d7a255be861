//! `--mode own`: the seed's measurement (SPEC §9 `seed-10k`): the implementation's own
//! controller runs its `bench` against its own node, as the seed ran `time ./controller`. The
//! kit starts it on the driver CPUs (it inherits the driver's mask), times it from spawn to
//! exit, takes its user and system CPU from wait4 and reads its JSON ([`driver_kit::client`]);
//! here: what it is asked and what its report must say (SPEC §8).

use crate::cli::GETS_PER_ITERATION;
use driver_kit::args::CommonArgs;
use driver_kit::client::{self, Cost};
use driver_kit::error::Result;
use serde_json::{Map, Value};
use std::net::Ipv4Addr;
use std::time::Instant;

/// What the controller is asked to do, appended to its argv (SPEC §8).
pub struct Request {
    pub ctl: Ipv4Addr,
    pub port: u16,
    pub node: Ipv4Addr,
    pub iterations: u64,
    pub warmup: u64,
}

impl Request {
    pub fn options(&self) -> Vec<String> {
        let ctl = self.ctl.to_string();
        [
            "--bind",
            &ctl,
            "--ifaddr",
            &ctl,
            "--port",
            &self.port.to_string(),
            "bench",
            &self.node.to_string(),
            "--mode",
            "faithful",
            "--iterations",
            &self.iterations.to_string(),
            "--warmup",
            &self.warmup.to_string(),
        ]
        .map(String::from)
        .to_vec()
    }
}

pub struct Outcome {
    /// Its argv, spawn to exit (the seed's `time`, real) and its user and system CPU over its
    /// life (wait4).
    pub controller: Cost,
    /// Its `elapsed_s`: first request to last reply, as it measured.
    pub elapsed_s: f64,
    pub requests: u64,
    pub retries: u64,
    pub ignored: u64,
    /// Its JSON, as it printed it.
    pub report: Map<String, Value>,
}

/// Runs the controller (--client-json) with the request's options and takes its numbers.
pub fn run(common: &CommonArgs, request: &Request, deadline: Instant) -> Result<Outcome> {
    let run = client::run("the controller", common, request.options(), deadline)?;
    let (elapsed_s, requests, retries, ignored) = read_report(&run.report, request)
        .map_err(|why| run.misfit(format_args!("{why} (SPEC §8 bench)")))?;
    Ok(Outcome {
        controller: run.cost,
        elapsed_s,
        requests,
        retries,
        ignored,
        report: run.report,
    })
}

/// `elapsed_s`, `requests`, `retries` and `ignored` of a `bench` report (SPEC §8), after
/// checking that it describes the run that was asked for (the kit has refused one that reports
/// an `error`).
fn read_report(
    doc: &Map<String, Value>,
    request: &Request,
) -> std::result::Result<(f64, u64, u64, u64), String> {
    let count = |field: &str| -> std::result::Result<u64, String> {
        match doc.get(field) {
            None => Err(format!("has no {field}")),
            Some(v) => v
                .as_u64()
                .ok_or_else(|| format!("has {field} = {v}, not a count")),
        }
    };
    if doc.get("mode").and_then(Value::as_str) != Some("faithful") {
        return Err(format!(
            "has mode = {}, but the driver asked for faithful",
            doc.get("mode").unwrap_or(&Value::Null)
        ));
    }
    let iterations = count("iterations")?;
    if iterations != request.iterations {
        return Err(format!(
            "reports iterations = {iterations}, but the driver asked for {}",
            request.iterations
        ));
    }
    let requests = count("requests")?;
    let want = request.iterations.saturating_mul(GETS_PER_ITERATION);
    if requests != want {
        return Err(format!(
            "reports requests = {requests}, but {} faithful iterations are {want} Gets",
            request.iterations
        ));
    }
    let elapsed_s = doc
        .get("elapsed_s")
        .and_then(Value::as_f64)
        .filter(|x| x.is_finite() && *x >= 0.0)
        .ok_or_else(|| {
            format!(
                "has elapsed_s = {}, not a number of seconds",
                doc.get("elapsed_s").unwrap_or(&Value::Null)
            )
        })?;
    Ok((elapsed_s, requests, count("retries")?, count("ignored")?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use driver_kit::testing::object as doc;
    use serde_json::json;

    fn request() -> Request {
        Request {
            ctl: Ipv4Addr::new(127, 0, 60, 2),
            port: 3610,
            node: Ipv4Addr::new(127, 0, 60, 1),
            iterations: 100,
            warmup: 5,
        }
    }

    #[test]
    fn options_follow_the_spec() {
        assert_eq!(
            request().options().join(" "),
            "--bind 127.0.60.2 --ifaddr 127.0.60.2 --port 3610 bench 127.0.60.1 --mode \
             faithful --iterations 100 --warmup 5"
        );
    }

    #[test]
    fn takes_the_controller_s_numbers() {
        let report = doc(
            json!({"mode": "faithful", "iterations": 100, "requests": 1200,
                                "elapsed_s": 0.25, "retries": 1, "ignored": 2}),
        );
        assert_eq!(read_report(&report, &request()), Ok((0.25, 1200, 1, 2)));
    }

    #[test]
    fn refuses_reports_that_do_not_fit() {
        let good = json!({"mode": "faithful", "iterations": 100, "requests": 1200,
                          "elapsed_s": 0.25, "retries": 0, "ignored": 0});
        let with = |field: &str, value: Value| {
            let mut d = doc(good.clone());
            d.insert(field.to_string(), value);
            d
        };
        let without = |field: &str| {
            let mut d = doc(good.clone());
            d.remove(field);
            d
        };
        for (report, expect) in [
            (with("mode", json!("batched")), "mode = \"batched\""),
            (without("mode"), "mode = null"),
            (with("iterations", json!(99)), "iterations = 99, but"),
            (
                with("requests", json!(1100)),
                "100 faithful iterations are 1200 Gets",
            ),
            (with("elapsed_s", json!("fast")), "elapsed_s = \"fast\""),
            (without("retries"), "has no retries"),
            (with("ignored", json!(-1)), "ignored = -1, not a count"),
        ] {
            let err = read_report(&report, &request()).unwrap_err();
            assert!(err.contains(expect), "{err}");
        }
    }
}
