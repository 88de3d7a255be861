//! Runs the built driver against a small node (tests/fake_node.py, standard-library Python)
//! and a small controller (tests/fake_controller.py), and checks the JSON it prints and that it
//! fails cleanly, with a useful message, on broken nodes and controllers. Discovery runs in
//! network namespaces made here (root only; skipped with a note otherwise).
//!
//! Addresses: 127.0.60.0/24, a distinct pair per test, so tests run side by side on port 3610.

// A test crate: a panic is a failed assertion, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use driver_kit::testing::{assert_usage_error, run_json};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const DRIVER: &str = env!("CARGO_BIN_EXE_echonet-driver");

fn script(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name)
        .display()
        .to_string()
}

/// The CPUs this process may use.
fn allowed_cpus() -> Vec<usize> {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let list = status
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    driver_kit::CpuList::parse(list).unwrap().0
}

struct Fixture {
    dir: PathBuf,
    log: PathBuf,
    node: String,
    ctl: String,
}

impl Fixture {
    /// A test's own directory and addresses: 127.0.60.(2k+10) for the node, the next for the
    /// driver.
    fn new(name: &str, k: u8) -> Self {
        let dir =
            std::env::temp_dir().join(format!("echonet-driver-test-{}-{name}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let log = dir.join("node.log");
        Fixture {
            dir,
            log,
            node: format!("127.0.60.{}", 2 * k + 10),
            ctl: format!("127.0.60.{}", 2 * k + 11),
        }
    }

    fn command(&self, scenario: &str) -> Command {
        let mut command = Command::new(DRIVER);
        command
            .args(scenario.split_whitespace())
            .args(["--node-addrs", &self.node, "--ctl-addr", &self.ctl])
            .args(["--port", "3610"])
            .arg("--impl-stderr")
            .arg(&self.log);
        if !scenario.contains("--timeout-s") {
            command.args(["--timeout-s", "30"]);
        }
        command
    }

    /// Runs the driver with `scenario` options against the fake node with `behaviour`.
    fn run(&self, scenario: &str, behaviour: &str) -> (i32, Value) {
        let mut command = self.command(scenario);
        command
            .arg("--")
            .args(["python3", &script("fake_node.py"), "--behaviour", behaviour]);
        run_json(&mut command)
    }

    /// Runs --mode own with the fake controller (FAKE_CONTROLLER = `fault`).
    fn run_own(&self, scenario: &str, fault: &str) -> (i32, Value) {
        let client = json!(["python3", script("fake_controller.py")]).to_string();
        let mut command = self.command(&format!("--mode own {scenario}"));
        command
            .args(["--client-json", &client])
            .env("FAKE_CONTROLLER", fault)
            .arg("--")
            .args(["python3", &script("fake_node.py")]);
        run_json(&mut command)
    }

    fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// The JSON of the lines the fake programs log at start, by prefix ("start", "controller").
    fn logged(&self, prefix: &str) -> Vec<Value> {
        self.log()
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("{prefix} ")))
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn error_of(result: (i32, Value)) -> String {
    let (code, json) = result;
    assert_eq!(code, 1, "{json}");
    assert_eq!(json.as_object().unwrap().len(), 1, "only the error: {json}");
    json["error"].as_str().unwrap().to_string()
}

fn assert_latency(json: &Value) {
    let latency = &json["latency_us"];
    for field in ["p50", "p90", "p99", "p999", "max", "min", "mean", "stdev"] {
        assert!(latency[field].as_f64().is_some(), "{field}: {json}");
    }
    assert!(latency["min"].as_f64().unwrap() > 0.0, "{json}");
    assert!(latency["p50"].as_f64() <= latency["max"].as_f64(), "{json}");
}

#[test]
fn faithful_is_checked_and_measured() {
    let fx = Fixture::new("faithful", 0);
    let cpu = *allowed_cpus().last().unwrap();
    let (code, json) = fx.run(
        &format!("--mode faithful --iterations 20 --warmup 3 --impl-cpus {cpu} --driver-cpus 0"),
        "good",
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["driver"], "echonet");
    assert_eq!(json["mode"], "faithful");
    assert_eq!(
        (json["iterations"].as_u64(), json["warmup"].as_u64()),
        (Some(20), Some(3))
    );
    assert_eq!(json["requests"], 240);
    assert_eq!(
        (json["retries"].as_u64(), json["ignored"].as_u64()),
        (Some(0), Some(0))
    );
    assert_latency(&json);
    let elapsed = json["elapsed_s"].as_f64().unwrap();
    let per_s = json["iterations_per_s"].as_f64().unwrap();
    assert!(
        elapsed > 0.0 && (per_s - 20.0 / elapsed).abs() <= 0.01 * per_s + 0.1,
        "{json}"
    );
    let usage = &json["impl"];
    assert_eq!(usage["exit_status"], 0);
    assert_eq!(usage["cpu_clock"], "process-cpu-clock");
    // A Python interpreter: some MB resident, some CPU for 276 requests.
    assert!(usage["maxrss_kb"].as_u64().unwrap() > 1000, "{json}");
    let cpu_s = usage["cpu_s"].as_f64().unwrap();
    assert!(cpu_s > 0.0, "{json}");
    let per_op = usage["cpu_us_per_op"].as_f64().unwrap();
    assert!((per_op - cpu_s * 1e6 / 276.0).abs() < 0.01, "{json}");
    assert_eq!(usage["node"]["requests"], 276, "warm-up included: {json}");
    assert_eq!(usage["node"]["replies"], 276, "{json}");
    assert_eq!(json["load_generator"]["kind"], "driver");
    assert_eq!(json["impl_cpus"], json!([cpu]));
    assert_eq!(json["node_addrs"], json!([fx.node]));
    // The node ran pinned, bound to its address, on port 3610.
    let start = &fx.logged("start")[0];
    assert_eq!(start["cpus"], json!([cpu]));
    assert_eq!(
        start["argv"],
        json!([
            "--behaviour",
            "good",
            "--bind",
            fx.node,
            "--ifaddr",
            fx.node,
            "--port",
            "3610"
        ])
    );
}

#[test]
fn batched_is_one_get_per_iteration() {
    let fx = Fixture::new("batched", 1);
    let (code, json) = fx.run("--mode batched --iterations 30 --warmup 5", "good");
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["requests"], 30);
    assert_eq!(json["iterations_per_s"], json["requests_per_s"]);
    assert_eq!(json["impl"]["node"]["requests"], 35);
    assert_latency(&json);
}

#[test]
fn load_runs_concurrent_controllers() {
    let fx = Fixture::new("load", 2);
    let (code, json) = fx.run(
        "--mode load --controllers 4 --requests 200 --warmup 20",
        "good",
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["controllers"], 4);
    assert_eq!(json["requests"], 200);
    assert!(json.get("iterations_per_s").is_none(), "{json}");
    assert!(json["requests_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(json["impl"]["node"]["requests"], 220);
    assert_latency(&json);
}

#[test]
fn lost_replies_are_retried_and_duplicates_ignored() {
    let fx = Fixture::new("retries", 3);
    let (code, json) = fx.run(
        "--mode faithful --iterations 5 --request-timeout-ms 20 --retries 3",
        "drop-some",
    );
    assert_eq!(code, 0, "{json}");
    // Every 4th datagram goes unanswered: 60 requests need 19 resends (the 4th, 8th, … of the
    // 79 datagrams).
    let retries = json["retries"].as_u64().unwrap();
    assert_eq!(retries, 19, "{json}");
    assert_eq!(json["impl"]["node"]["requests"], 60 + retries);

    let (code, json) = fx.run("--mode load --controllers 2 --requests 40", "drop-some");
    assert_eq!(code, 0, "{json}");
    assert!(json["retries"].as_u64().unwrap() > 0, "{json}");

    let (code, json) = fx.run("--mode faithful --iterations 5", "duplicate");
    assert_eq!(code, 0, "{json}");
    // Each reply's twin arrives while the next request waits (the last one's, perhaps after).
    assert!(json["ignored"].as_u64().unwrap() >= 58, "{json}");
    assert_eq!(json["impl"]["node"]["replies"], 120);
}

#[test]
fn a_wrong_reply_names_the_request_and_the_byte() {
    let fx = Fixture::new("wrong", 4);
    let error = error_of(fx.run("--mode faithful --iterations 3", "wrong-bytes"));
    assert!(
        error.starts_with(
            "measured iteration 1 of 3: the reply to Get 0x9D (TID 0x0005) from 127.0.60.18:3610 \
             is wrong: byte 14 is 0x03, expected 0x02 (got 17 bytes: 10 81 00 05 0E F0 01 05 \
             FF 01 72 01 9D 03 03 80 D5; expected 17 bytes:"
        ),
        "{error}"
    );
    let error = error_of(fx.run("--mode load --controllers 3 --requests 30", "wrong-bytes"));
    // Which controller's request is the node's 5th depends on the order replies come in.
    assert!(
        error.starts_with("measured requests: controller ")
            && error.contains(": the reply to Get 0x")
            && error.contains("(TID 0x0005) from 127.0.60.18:3610 is wrong: byte 14 is 0x"),
        "{error}"
    );
    let error = error_of(fx.run("--mode faithful --iterations 3", "wrong-port"));
    assert!(
        error.contains("the reply to Get 0x83 (TID 0x0003) came from 127.0.60.18:")
            && error.contains("not from the node's port 3610"),
        "{error}"
    );
}

#[test]
fn a_node_that_never_answers_fails_after_its_retries() {
    let fx = Fixture::new("mute", 5);
    let started = Instant::now();
    let error = error_of(fx.run(
        "--mode faithful --iterations 3 --request-timeout-ms 50 --retries 2",
        "mute",
    ));
    assert_eq!(
        error,
        "measured iteration 1 of 3: Get 0x80 (TID 0x0001) to 127.0.60.20:3610: no reply after \
         3 attempts of 50 ms"
    );
    // Replies under another TID never match: the same failure.
    let error = error_of(fx.run(
        "--mode batched --iterations 3 --warmup 1 --request-timeout-ms 50 --retries 1",
        "wrong-tid",
    ));
    assert!(
        error.starts_with("warm-up iteration 1 of 1: Get of 12 properties (TID 0x0001)")
            && error.ends_with("no reply after 2 attempts of 50 ms"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_node_that_dies_is_reported_with_its_stderr() {
    let fx = Fixture::new("die", 6);
    let error = error_of(fx.run(
        "--mode faithful --iterations 3 --request-timeout-ms 50 --retries 1",
        "die",
    ));
    let log = fx.log.display().to_string();
    assert!(
        error.contains("Get 0x9D (TID 0x0005) to 127.0.60.22:3610: no reply after 2 attempts")
            && error.contains(&format!(
                "the node at 127.0.60.22 exited with status 3 (its stderr: {log})"
            )),
        "{error}"
    );
    let error = error_of(fx.run("--mode faithful --iterations 3", "exit-at-start"));
    assert_eq!(
        error,
        format!(
            "the node at 127.0.60.22 exited with status 5 before it printed READY (its stderr: \
             {log})"
        )
    );
}

#[test]
fn a_node_that_hangs_is_bounded() {
    let fx = Fixture::new("hang", 7);
    let started = Instant::now();
    let mut command = fx.command("--mode faithful --iterations 3 --timeout-s 2");
    command.arg("--").args([
        "python3",
        &script("fake_node.py"),
        "--behaviour",
        "no-ready",
    ]);
    let error = error_of(run_json(&mut command));
    assert!(
        error.starts_with("the node at 127.0.60.24 did not print READY within --timeout-s"),
        "{error}"
    );
    let error = error_of(fx.run("--mode faithful --iterations 3", "ignore-term"));
    assert!(
        error.starts_with("the node at 127.0.60.24 did not exit within 5 s of SIGTERM (killed it)"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(25));
}

#[test]
fn a_node_that_misreports_fails_the_trial() {
    let fx = Fixture::new("misreport", 8);
    let error = error_of(fx.run("--mode faithful --iterations 2", "bad-exit"));
    assert!(
        error.starts_with("after SIGTERM the node at 127.0.60.26 exited with status 3"),
        "{error}"
    );
    let error = error_of(fx.run("--mode faithful --iterations 2", "bad-counters"));
    assert!(
        error.contains(
            "its last line after SIGTERM says received = 25, but requests + ignored + \
             dropped_malformed + dropped_format2 = 24 + 0 + 0 + 0"
        ),
        "{error}"
    );
    let error = error_of(fx.run("--mode faithful --iterations 2", "no-counters"));
    assert!(error.contains("printed nothing after SIGTERM"), "{error}");
}

#[test]
fn own_mode_runs_the_implementation_s_controller() {
    let fx = Fixture::new("own", 9);
    let (code, json) = fx.run_own("--iterations 10 --warmup 2 --driver-cpus 0", "good");
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["mode"], "own");
    assert_eq!(json["requests"], 120);
    assert!(json.get("latency_us").is_none(), "{json}");
    assert!(json["wall_s"].as_f64().unwrap() >= json["elapsed_s"].as_f64().unwrap());
    let generator = &json["load_generator"];
    assert_eq!(generator["kind"], "client");
    assert_eq!(generator["cpu_clock"], "wait4-rusage");
    let (user, sys) = (
        generator["cpu_user_s"].as_f64().unwrap(),
        generator["cpu_sys_s"].as_f64().unwrap(),
    );
    assert!(user > 0.0, "{json}");
    assert!((generator["cpu_s"].as_f64().unwrap() - (user + sys)).abs() < 2e-6);
    let argv: Vec<&str> = generator["argv"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(
        argv[2..].join(" "),
        format!(
            "--bind {0} --ifaddr {0} --port 3610 bench {1} --mode faithful --iterations 10 \
             --warmup 2",
            fx.ctl, fx.node
        )
    );
    assert_eq!(json["controller_report"]["iterations"], 10);
    assert_eq!(json["impl"]["node"]["requests"], 144);
    // The controller ran on the driver CPUs; its stderr went to the log.
    assert_eq!(fx.logged("controller")[0]["cpus"], json!([0]));
}

#[test]
fn own_mode_failures_are_reported() {
    let fx = Fixture::new("own-fail", 10);
    let error = error_of(fx.run_own("--iterations 3", "fail"));
    assert!(
        error.contains("exited with status 1")
            && error.contains("it reported: Get 0x83 to the node: no reply after 4 attempts"),
        "{error}"
    );
    let error = error_of(fx.run_own("--iterations 3", "miscount"));
    assert!(
        error.contains("reports iterations = 2, but the driver asked for 3"),
        "{error}"
    );
    let started = Instant::now();
    let error = error_of(fx.run_own("--iterations 3 --timeout-s 2", "hang"));
    assert!(
        error.starts_with("the controller did not finish within --timeout-s (killed it)"),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(20));
}

#[test]
fn a_bad_command_line_is_a_usage_error() {
    for (line, expect) in [
        ("--mode faithful -- n", "--iterations"),
        (
            "--mode faithful --iterations 1 --host-cpus 1 -- n",
            "--host-cpus",
        ),
        ("--mode discovery --rounds 3 -- n", "--node-netns"),
        (
            "--mode load --requests 3 --controllers 0 -- n",
            "--controllers",
        ),
        (
            "--mode faithful --iterations 1 --node-addrs 127.0.60.1 --ctl-addr 127.0.60.1 -- n",
            "an address of its own",
        ),
    ] {
        assert_usage_error(DRIVER, line, expect);
    }
}

/// Network namespaces like msgbench.topology's: a switch namespace with a bridge, and hosts
/// joined to it by veth pairs, each with 10.201.0.(i+2)/24 and a multicast route. Deleted on
/// drop.
struct Topology {
    names: Vec<String>,
}

impl Topology {
    /// None (with the reason on stderr) where namespaces cannot be made.
    fn new(tag: &str, hosts: usize) -> Option<Topology> {
        // SAFETY: plain syscall.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: network namespaces need root");
            return None;
        }
        let base = format!("mbdrv-{}-{tag}", std::process::id());
        let mut topology = Topology { names: Vec::new() };
        let switch = format!("{base}-sw");
        if !ip(&["netns", "add", &switch]) {
            eprintln!("skipped: cannot create a network namespace (ip netns add)");
            return None;
        }
        topology.names.push(switch.clone());
        let mut batch =
            String::from("link add br0 type bridge mcast_snooping 0\nlink set br0 up\n");
        for i in 0..hosts {
            let host = format!("{base}-{i}");
            assert!(ip(&["netns", "add", &host]));
            topology.names.push(host.clone());
            batch += &format!("link add p{i} type veth peer name eth0 netns {host}\n");
            batch += &format!("link set p{i} master br0 up\n");
        }
        assert!(ip_batch(&switch, &batch));
        for i in 0..hosts {
            let host = format!("{base}-{i}");
            let setup = format!(
                "link set lo up\naddr add 10.201.0.{}/24 dev eth0\nlink set eth0 up\n\
                 route add 224.0.0.0/4 dev eth0\n",
                i + 2
            );
            assert!(ip_batch(&host, &setup));
        }
        Some(topology)
    }

    fn host(&self, i: usize) -> &str {
        &self.names[i + 1]
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        for name in self.names.iter().rev() {
            ip(&["netns", "del", name]);
        }
    }
}

fn ip(args: &[&str]) -> bool {
    Command::new("ip")
        .args(args)
        .output()
        .is_ok_and(|o| o.status.success())
}

fn ip_batch(netns: &str, batch: &str) -> bool {
    use std::io::Write;
    let mut child = Command::new("ip")
        .args(["-n", netns, "-batch", "-"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(batch.as_bytes())
        .unwrap();
    child.wait().unwrap().success()
}

#[test]
fn discovery_finds_every_node_in_its_namespace() {
    let Some(topo) = Topology::new("disc", 3) else {
        return;
    };
    let fx = Fixture::new("discovery", 11);
    let netns = format!("{},{}", topo.host(1), topo.host(2));
    let mut command = Command::new(DRIVER);
    command
        .args(["--mode", "discovery", "--rounds", "10", "--warmup", "2"])
        .args([
            "--node-addrs",
            "10.201.0.3,10.201.0.4",
            "--node-netns",
            &netns,
        ])
        .args(["--ctl-addr", "10.201.0.2", "--ctl-netns", topo.host(0)])
        .args(["--port", "3610", "--timeout-s", "30"])
        .arg("--impl-stderr")
        .arg(&fx.log)
        .args(["--", "python3", &script("fake_node.py")]);
    let (code, json) = run_json(&mut command);
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        (json["nodes"].as_u64(), json["rounds"].as_u64()),
        (Some(2), Some(10))
    );
    assert_eq!(json["requests"], 10);
    assert_latency(&json);
    let p50_ms = json["discovery_ms_p50"].as_f64().unwrap();
    assert!((p50_ms * 1e3 - json["latency_us"]["p50"].as_f64().unwrap()).abs() < 1e-3);
    assert_eq!(json["impl"]["exit_status"], json!([0]));
    let nodes = json["impl"]["nodes"].as_array().unwrap();
    assert_eq!(nodes.len(), 2);
    for node in nodes {
        assert_eq!(node["requests"], 12, "{json}");
    }
    // Each node bound 0.0.0.0 in a namespace of its own (not the driver's, not this one's).
    let mut starts = fx.logged("start");
    assert_eq!(starts.len(), 2);
    // The nodes start side by side: their lines come in either order.
    starts.sort_by_key(|s| s["argv"][3].as_str().unwrap().to_string());
    assert_eq!(
        starts[0]["argv"],
        json!([
            "--bind",
            "0.0.0.0",
            "--ifaddr",
            "10.201.0.3",
            "--port",
            "3610"
        ])
    );
    let here = fs::read_link("/proc/self/ns/net").unwrap();
    assert_ne!(starts[0]["netns"], starts[1]["netns"]);
    assert_ne!(starts[0]["netns"], here.display().to_string());

    // A node that never answers is named.
    let mut command = Command::new(DRIVER);
    command
        .args(["--mode", "discovery", "--rounds", "3"])
        .args(["--request-timeout-ms", "30", "--retries", "1"])
        .args(["--node-addrs", "10.201.0.3", "--node-netns", topo.host(1)])
        .args(["--ctl-addr", "10.201.0.2", "--ctl-netns", topo.host(0)])
        .args([
            "--",
            "python3",
            &script("fake_node.py"),
            "--behaviour",
            "mute",
        ]);
    let error = error_of(run_json(&mut command));
    assert_eq!(
        error,
        "round 1 of 3: no answer to the multicast Get of 0xD6 (TID 0x0001) from 10.201.0.3 \
         after 2 attempts of 30 ms"
    );
}
