//! The one JSON object the driver prints (README.md beside src/).

use crate::cli::{Args, Mode, GETS_PER_ITERATION};
use crate::node::Stopped;
use crate::own;
use crate::socket::Outcome;
use driver_kit::clock::CpuClock;
use driver_kit::percentiles::{rate, round, Percentiles};
use driver_kit::usage::{ImplUsage, LoadGenerator, Placement};
use serde::Serialize;
use serde_json::{Map, Value};
use std::net::Ipv4Addr;
use std::time::Duration;

#[derive(Serialize)]
pub struct Report {
    driver: &'static str,
    mode: Mode,
    /// Measured units of the mode: iterations (faithful, batched, own), requests (load),
    /// rounds (discovery).
    iterations: u64,
    /// Units run before them, checked, not recorded.
    warmup: u64,
    /// Measured requests (discovery: multicast Gets, one per round).
    requests: u64,
    /// First measured send to the last measured reply (own: as the controller measured it).
    elapsed_s: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    iterations_per_s: Option<f64>,
    requests_per_s: f64,
    /// Round trips of the measured requests (discovery: of the rounds), µs; none in own mode.
    #[serde(skip_serializing_if = "Option::is_none")]
    latency_us: Option<Percentiles>,
    /// Requests sent again after an unanswered attempt, measured part.
    retries: u64,
    /// Datagrams that matched no outstanding request (late, duplicate, foreign), measured part.
    ignored: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    controllers: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nodes: Option<usize>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rounds: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    discovery_ms_p50: Option<f64>,
    /// Own mode: the controller's spawn to exit (the seed's `time`, real).
    #[serde(skip_serializing_if = "Option::is_none")]
    wall_s: Option<f64>,
    /// Own mode: wall time and the controller's CPU divided by the iterations, µs: comparable
    /// between pairs that ran different iteration counts (a slow pair runs fewer).
    #[serde(skip_serializing_if = "Option::is_none")]
    per_iteration: Option<PerIteration>,
    /// The node(s): CPU time of all their threads from just before the load to just after it
    /// (process CPU clock; discovery: summed over the nodes), over every request they served
    /// in that window (warm-up included); VmHWM read just before SIGTERM (discovery: the
    /// largest); the exit status; the counters they printed.
    #[serde(rename = "impl")]
    usage: ImplUsage<NodeCounters>,
    /// The driver's thread (its process CPU clock while the load ran) or the own controller
    /// (wait4, with the user/system split), cpu_clock named.
    load_generator: LoadGenerator,
    /// Own mode: the controller's JSON, as it printed it.
    #[serde(skip_serializing_if = "Option::is_none")]
    controller_report: Option<Map<String, Value>>,
    node_addrs: Vec<Ipv4Addr>,
    ctl_addr: Ipv4Addr,
    port: u16,
    /// driver_cpus, impl_cpus (null: not pinned).
    #[serde(flatten)]
    placement: Placement,
}

/// `impl.node` (one node) or `impl.nodes` (discovery): the counters of SPEC §7.
#[derive(Serialize)]
struct NodeCounters {
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<Map<String, Value>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    nodes: Option<Vec<Map<String, Value>>>,
}

#[derive(Serialize)]
struct PerIteration {
    wall_us: f64,
    ctl_user_us: f64,
    ctl_sys_us: f64,
}

/// What loaded the node(s): the driver (faithful and batched, load, discovery) or the own
/// controller.
pub enum Loaded {
    Bench(Outcome),
    Load(Outcome),
    Discovery(Outcome),
    Own(own::Outcome),
}

/// What the nodes' side of the trial measured.
pub struct NodesMeasure {
    /// Over the load, summed over the nodes.
    pub cpu: Duration,
    /// The largest node's.
    pub maxrss_kb: u64,
    pub stopped: Vec<Stopped>,
}

/// The measured part of a load, whatever its mode.
struct Figures {
    requests: u64,
    elapsed_s: f64,
    latency_us: Option<Percentiles>,
    retries: u64,
    ignored: u64,
    /// Requests the node(s) served in the CPU window, warm-up included.
    served: u64,
}

pub fn build(args: &Args, loaded: &Loaded, nodes: NodesMeasure, driver_cpu: Duration) -> Report {
    let iterations = args.measured();
    let node_count = args.node_addrs.len();
    let driven = |o: &Outcome, served: u64| Figures {
        requests: o.requests,
        elapsed_s: o.elapsed.as_secs_f64(),
        latency_us: Some(Percentiles::of(&o.latency)),
        retries: o.measured.retries,
        ignored: o.measured.ignored,
        served,
    };
    let figures = match loaded {
        Loaded::Bench(o) | Loaded::Load(o) => driven(o, o.answered),
        // Every node answers every round.
        Loaded::Discovery(o) => driven(o, o.answered * node_count as u64),
        Loaded::Own(o) => Figures {
            requests: o.requests,
            elapsed_s: o.elapsed_s,
            latency_us: None,
            retries: o.retries,
            ignored: o.ignored,
            served: (iterations + args.warmup) * GETS_PER_ITERATION,
        },
    };
    let per_iteration = matches!(args.mode, Mode::Faithful | Mode::Batched | Mode::Own);
    let discovery = args.mode == Mode::Discovery;
    let exit_status = match discovery {
        // Many processes: the distinct statuses (always [0] in a report).
        true => {
            let mut statuses: Vec<i32> = nodes.stopped.iter().map(|s| s.exit_status).collect();
            statuses.sort_unstable();
            statuses.dedup();
            Value::from(statuses)
        }
        false => Value::from(nodes.stopped.first().map_or(0, |s| s.exit_status)),
    };
    let mut counters: Vec<Map<String, Value>> =
        nodes.stopped.into_iter().map(|s| s.counters).collect();
    let node_counters = match discovery {
        true => NodeCounters {
            node: None,
            nodes: Some(counters),
        },
        false => NodeCounters {
            node: counters.pop(),
            nodes: None,
        },
    };
    let (load_generator, wall_s, controller_report) = match loaded {
        Loaded::Own(o) => (
            LoadGenerator::client_timed(&o.controller),
            Some(round(o.controller.wall.as_secs_f64(), 6)),
            Some(o.report.clone()),
        ),
        _ => (
            LoadGenerator::driver(driver_cpu, 1).with_clock(CpuClock::ProcessCpuClock),
            None,
            None,
        ),
    };
    let per_second = |count: u64| round(rate(count as f64, figures.elapsed_s), 1);
    let own_per_iteration = match (&load_generator, wall_s) {
        (lg, Some(wall)) if iterations > 0 => {
            let each = |s: f64| round(s * 1e6 / iterations as f64, 3);
            Some(PerIteration {
                wall_us: each(wall),
                ctl_user_us: each(lg.cpu_user_s.unwrap_or(0.0)),
                ctl_sys_us: each(lg.cpu_sys_s.unwrap_or(0.0)),
            })
        }
        _ => None,
    };
    Report {
        driver: "echonet",
        mode: args.mode,
        iterations,
        warmup: args.warmup,
        requests: figures.requests,
        elapsed_s: round(figures.elapsed_s, 6),
        iterations_per_s: per_iteration.then(|| per_second(iterations)),
        requests_per_s: per_second(figures.requests),
        discovery_ms_p50: figures
            .latency_us
            .as_ref()
            .filter(|_| discovery)
            .map(|l| round(l.p50 / 1e3, 6)),
        latency_us: figures.latency_us,
        retries: figures.retries,
        ignored: figures.ignored,
        controllers: args.controllers.filter(|_| args.mode == Mode::Load),
        nodes: discovery.then_some(node_count),
        rounds: discovery.then_some(iterations),
        wall_s,
        per_iteration: own_per_iteration,
        usage: ImplUsage::new(
            nodes.cpu,
            CpuClock::ProcessCpuClock,
            figures.served,
            Some(nodes.maxrss_kb),
            exit_status,
            node_counters,
        ),
        load_generator,
        controller_report,
        node_addrs: args.node_addrs.clone(),
        ctl_addr: args.ctl_addr,
        port: args.port(),
        placement: Placement::of(&args.common),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::socket::Tally;
    use driver_kit::client::Cost;
    use driver_kit::percentiles::new_histogram;
    use driver_kit::testing::{args, object};
    use serde_json::json;

    fn counters(requests: u64) -> Map<String, Value> {
        object(
            json!({"received": requests, "requests": requests, "replies": requests,
            "ignored": 0, "dropped_malformed": 0, "dropped_format2": 0, "send_errors": 0}),
        )
    }

    fn nodes(n: usize, requests: u64) -> NodesMeasure {
        NodesMeasure {
            cpu: Duration::from_millis(60),
            maxrss_kb: 2048,
            stopped: (0..n)
                .map(|_| Stopped {
                    exit_status: 0,
                    counters: counters(requests),
                })
                .collect(),
        }
    }

    /// A load by the driver: `requests` measured over `elapsed_ms` with these round trips
    /// (µs), `answered` with the warm-up, nothing resent or ignored.
    fn outcome(elapsed_ms: u64, samples_us: &[u64], requests: u64, answered: u64) -> Outcome {
        let mut latency = new_histogram().unwrap();
        for us in samples_us {
            latency.record(us * 1000).unwrap();
        }
        Outcome {
            elapsed: Duration::from_millis(elapsed_ms),
            latency,
            requests,
            measured: Tally::default(),
            answered,
            sent: answered,
        }
    }

    #[test]
    fn faithful_fields_and_arithmetic() {
        let args = args(
            "d --mode faithful --iterations 50 --warmup 10 --node-addrs 127.0.60.1 \
             --ctl-addr 127.0.60.2 --driver-cpus 0 --impl-cpus 1 -- n",
        );
        let loaded = Loaded::Bench(Outcome {
            measured: Tally {
                retries: 1,
                ignored: 2,
            },
            sent: 721,
            ..outcome(100, &[100, 200], 600, 720)
        });
        let report = build(&args, &loaded, nodes(1, 721), Duration::from_millis(30));
        let json = serde_json::to_value(report).unwrap();
        assert_eq!(json["driver"], "echonet");
        assert_eq!(json["mode"], "faithful");
        assert_eq!(
            (json["iterations"].clone(), json["warmup"].clone()),
            (json!(50), json!(10))
        );
        assert_eq!(json["requests"], 600);
        assert_eq!(json["elapsed_s"], 0.1);
        assert_eq!(json["iterations_per_s"], 500.0);
        assert_eq!(json["requests_per_s"], 6000.0);
        // The histogram's summary (the kit's, tested there): 100 µs within its precision.
        let min = json["latency_us"]["min"].as_f64().unwrap();
        assert!((min - 100.0).abs() <= 0.1, "{json}");
        assert_eq!(
            (json["retries"].clone(), json["ignored"].clone()),
            (json!(1), json!(2))
        );
        for absent in [
            "controllers",
            "nodes",
            "rounds",
            "discovery_ms_p50",
            "wall_s",
        ] {
            assert!(json.get(absent).is_none(), "{absent}: {json}");
        }
        assert!(json.get("controller_report").is_none());
        // 60 ms over the 720 requests served, warm-up included.
        assert_eq!(json["impl"]["cpu_us_per_op"], 83.3333);
        assert_eq!(json["impl"]["cpu_clock"], "process-cpu-clock");
        assert_eq!(json["impl"]["exit_status"], 0);
        assert_eq!(json["impl"]["maxrss_kb"], 2048);
        assert_eq!(json["impl"]["node"]["requests"], 721);
        assert!(json["impl"].get("nodes").is_none());
        assert_eq!(
            json["load_generator"],
            json!({"kind": "driver", "cpu_s": 0.03, "cpu_clock": "process-cpu-clock",
                   "threads": 1})
        );
        assert_eq!(json["node_addrs"], json!(["127.0.60.1"]));
        assert_eq!(json["ctl_addr"], "127.0.60.2");
        assert_eq!(json["port"], 3610);
        assert_eq!(json["driver_cpus"], json!([0]));
        assert_eq!(json["impl_cpus"], json!([1]));
    }

    #[test]
    fn load_and_discovery_fields() {
        let load = args("d --mode load --controllers 8 --requests 500 --warmup 50 -- n");
        let loaded = Loaded::Load(outcome(50, &[40], 500, 550));
        let json =
            serde_json::to_value(build(&load, &loaded, nodes(1, 550), Duration::ZERO)).unwrap();
        assert_eq!(json["controllers"], 8);
        assert_eq!(
            (json["iterations"].clone(), json["requests"].clone()),
            (json!(500), json!(500))
        );
        assert!(json.get("iterations_per_s").is_none());
        assert_eq!(json["requests_per_s"], 10_000.0);
        assert_eq!(json["impl"]["cpu_us_per_op"], 109.0909);

        let discovery = args(
            "d --mode discovery --rounds 20 --warmup 2 --node-addrs 10.201.0.3,10.201.0.4 \
             --node-netns a,b --ctl-addr 10.201.0.2 -- n",
        );
        let loaded = Loaded::Discovery(Outcome {
            measured: Tally {
                retries: 0,
                ignored: 1,
            },
            ..outcome(40, &[1500, 2500], 20, 22)
        });
        let json =
            serde_json::to_value(build(&discovery, &loaded, nodes(2, 22), Duration::ZERO)).unwrap();
        assert_eq!(
            (json["nodes"].clone(), json["rounds"].clone()),
            (json!(2), json!(20))
        );
        assert_eq!(json["requests"], 20);
        // The p50 round in ms: 1.5 ms within the histogram's precision.
        let p50_us = json["latency_us"]["p50"].as_f64().unwrap();
        assert_eq!(
            json["discovery_ms_p50"].as_f64(),
            Some(round(p50_us / 1e3, 6))
        );
        assert!((p50_us - 1500.0).abs() <= 1.5, "{json}");
        assert_eq!(json["impl"]["exit_status"], json!([0]));
        assert_eq!(json["impl"]["nodes"].as_array().unwrap().len(), 2);
        assert!(json["impl"].get("node").is_none());
        // 60 ms over 2 nodes × 22 rounds.
        assert_eq!(json["impl"]["cpu_us_per_op"], 1363.6364);
    }

    #[test]
    fn own_mode_reports_the_controller() {
        let own_args = args(
            "d --mode own --iterations 100 --client-json [\"/bin/ctl\"] --node-addrs \
             127.0.60.1 --ctl-addr 127.0.60.2 -- n",
        );
        let report = object(
            json!({"mode": "faithful", "iterations": 100, "requests": 1200,
            "elapsed_s": 0.3, "retries": 0, "ignored": 0}),
        );
        let loaded = Loaded::Own(own::Outcome {
            controller: Cost {
                argv: vec!["/bin/ctl".to_string(), "bench".to_string()],
                wall: Duration::from_millis(400),
                user: Duration::from_millis(120),
                system: Duration::from_millis(80),
            },
            elapsed_s: 0.3,
            requests: 1200,
            retries: 0,
            ignored: 0,
            report: report.clone(),
        });
        let json = serde_json::to_value(build(&own_args, &loaded, nodes(1, 1200), Duration::ZERO))
            .unwrap();
        assert_eq!(json["mode"], "own");
        assert_eq!(json["wall_s"], 0.4);
        assert_eq!(json["elapsed_s"], 0.3);
        assert_eq!(json["iterations_per_s"], 333.3);
        assert_eq!(json["requests_per_s"], 4000.0);
        assert!(json.get("latency_us").is_none());
        assert_eq!(
            json["load_generator"],
            json!({"kind": "client", "cpu_s": 0.2, "cpu_clock": "wait4-rusage",
                   "cpu_user_s": 0.12, "cpu_sys_s": 0.08, "argv": ["/bin/ctl", "bench"]})
        );
        assert_eq!(json["controller_report"], Value::Object(report));
        assert_eq!(json["impl"]["cpu_us_per_op"], 50.0);
    }
}
