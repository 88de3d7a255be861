//! Runs the built driver against a small fake host (a Python script written by the test) in
//! both modes, and checks the JSON it prints, and that it fails cleanly on broken hosts.

// A test crate: a panic is a failed assertion, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use driver_kit::testing::{assert_usage_error, run_json};
use serde_json::Value;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

const ORIGIN: &str = "chrome-extension://knldjmfmopnpolahpmmgbagdohdnhkik/";

/// A Native Messaging host; argv[2] picks a behaviour (argv[1] is the origin). It logs its
/// argv, cwd and CPU mask to stderr, so the test can see how the driver started it.
const FAKE_HOST: &str = r#"#!/usr/bin/env python3
import json, os, struct, sys, time
behaviour = sys.argv[2] if len(sys.argv) > 2 else "good"
sys.stderr.write("start %s\n" % json.dumps(
    {"argv": sys.argv[1:], "cwd": os.getcwd(), "cpus": sorted(os.sched_getaffinity(0))}))
sys.stderr.flush()
inp, out = sys.stdin.buffer, sys.stdout.buffer
if behaviour == "big":
    ballast = b"\x01" * (40 << 20)  # 40 MiB, every page written, so resident
count = 0
while True:
    head = inp.read(4)
    if not head:
        sys.exit(3 if behaviour == "bad-exit" else 0)
    (n,) = struct.unpack("=I", head)
    request = json.loads(inp.read(n))
    count += 1
    if behaviour == "hang":
        time.sleep(120)
    if behaviour == "die" and count == 3:
        sys.exit(4)
    if request["op"] == "ping":
        reply = {"op": "pong"}
    else:
        reply = {"op": "echo", "data": request["data"]}
    if behaviour == "wrong" and count == 5:
        reply["data"]["text"] = reply["data"]["text"][::-1]
    # Alternate \u escapes and raw UTF-8 while the driver checks replies in full (equal as
    # JSON either way); "vary" goes on alternating, which changes the reply length.
    ascii = count % 2 == 0 and (count <= 40 or behaviour == "vary")
    body = json.dumps(reply, ensure_ascii=ascii).encode()
    size = struct.pack("=Q" if behaviour == "len8" else "=I", len(body))
    out.write(size + body)
    out.flush()
"#;

/// A tiny echo host: `cat` copies each request frame back, which is a correct echo reply (the
/// request is `{"op":"echo","data":...}`, byte for byte what the reply must be). Before it
/// becomes cat, the shell logs the driver's own peak RSS (its parent's VmHWM), with builtins
/// only.
const TINY_HOST: &str = r#"#!/bin/sh
while read -r key value unit; do
    if [ "$key" = VmHWM: ]; then echo "driver-vmhwm-kb $value" >&2; fi
done < /proc/$PPID/status
exec cat
"#;

struct Fixture {
    dir: PathBuf,
    host: PathBuf,
    log: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "nativemsg-driver-test-{}-{name}",
            std::process::id()
        ));
        fs::create_dir_all(&dir).unwrap();
        let host = dir.join("fake_host.py");
        fs::write(&host, FAKE_HOST).unwrap();
        fs::set_permissions(&host, fs::Permissions::from_mode(0o755)).unwrap();
        let log = dir.join("host.log");
        Fixture { dir, host, log }
    }

    /// Replaces the fake host with TINY_HOST.
    fn tiny(self) -> Self {
        fs::write(&self.host, TINY_HOST).unwrap();
        self
    }

    /// Runs the driver; returns its exit code and the JSON it printed.
    fn run(&self, options: &str, behaviour: &str) -> (i32, Value) {
        let mut command = Command::new(env!("CARGO_BIN_EXE_nativemsg-driver"));
        command
            .args(options.split_whitespace())
            .arg("--impl-stderr")
            .arg(&self.log)
            .arg("--")
            .arg(&self.host)
            .arg(ORIGIN);
        if !behaviour.is_empty() {
            command.arg(behaviour);
        }
        run_json(&mut command)
    }

    /// The start lines the fake host logged, one per process.
    fn starts(&self) -> Vec<Value> {
        fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|line| line.strip_prefix("start "))
            .map(|json| serde_json::from_str(json).unwrap())
            .collect()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn f64_of(json: &Value, pointer: &str) -> f64 {
    json.pointer(pointer)
        .and_then(Value::as_f64)
        .unwrap_or_else(|| panic!("{pointer} missing in {json}"))
}

fn assert_common_fields(json: &Value, iterations: u64, warmup: u64) {
    assert_eq!(json["driver"], "nativemsg");
    assert_eq!(json["iterations"], iterations);
    assert_eq!(json["warmup"], warmup);
    assert_eq!(json["ops"], iterations);
    let elapsed = f64_of(json, "/elapsed_s");
    assert!(elapsed > 0.0);
    let ops_per_s = f64_of(json, "/ops_per_s");
    assert!((ops_per_s - iterations as f64 / elapsed).abs() / ops_per_s < 0.01);
    let l = &json["latency_us"];
    for field in ["min", "mean", "stdev", "p50", "p90", "p99", "p999", "max"] {
        assert!(l[field].is_f64(), "latency_us.{field} in {json}");
    }
    let order = ["min", "p50", "p90", "p99", "p999", "max"].map(|f| f64_of(l, &format!("/{f}")));
    assert!(order.windows(2).all(|w| w[0] <= w[1]), "{l}");
    assert!(order[0] > 0.0);
    assert_eq!(json["impl"]["exit_status"], serde_json::json!([0]));
    assert!(f64_of(json, "/impl/cpu_us_per_op") > 0.0);
    // Persistent: the live host's process CPU clock; spawn: each exited host's rusage.
    let clock = match json["mode"].as_str() {
        Some("persistent") => "process-cpu-clock",
        _ => "wait4-rusage",
    };
    assert_eq!(json["impl"]["cpu_clock"], clock, "{json}");
    let cpu_s = f64_of(json, "/impl/cpu_s");
    let per_op = cpu_s * 1e6 / (iterations + warmup) as f64;
    assert!(
        (f64_of(json, "/impl/cpu_us_per_op") - per_op).abs() < 0.01,
        "{json}"
    );
    // The fake host is a Python interpreter: several MB.
    assert!(json["impl"]["maxrss_kb"].as_u64().unwrap() > 1000, "{json}");
    assert!(json["impl"].get("maxrss_note").is_none(), "{json}");
    let full = json["checked"]["full"].as_u64().unwrap();
    let length = json["checked"]["length"].as_u64().unwrap();
    assert_eq!(full + length, iterations);
}

#[test]
fn persistent_ping() {
    let fx = Fixture::new("persistent-ping");
    let (code, json) = fx.run(
        "--mode persistent --op ping --iterations 300 --warmup 30 --check-full 20",
        "",
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["mode"], "persistent");
    assert_eq!(json["op"], "ping");
    assert_eq!(json["size"], 0);
    assert_eq!(json["driver_cpus"], Value::Null);
    assert_common_fields(&json, 300, 30);
    assert_eq!(json["checked"]["full"], 20);
    assert_eq!(json["impl"]["processes"], 1);
    // Throughput counts the 13-byte ping body.
    let expected = 13.0 * 300.0 / f64_of(&json, "/elapsed_s") / 1e6;
    assert!(
        (f64_of(&json, "/mb_per_s") - expected).abs() < 0.002,
        "{json}"
    );

    // Started as Chromium does: origin in argv[1], cwd = the host's directory.
    let starts = fx.starts();
    assert_eq!(starts.len(), 1);
    assert_eq!(starts[0]["argv"], serde_json::json!([ORIGIN]));
    let cwd = PathBuf::from(starts[0]["cwd"].as_str().unwrap());
    assert_eq!(cwd.canonicalize().unwrap(), fx.dir.canonicalize().unwrap());
}

#[test]
fn persistent_echo_with_pinning() {
    let fx = Fixture::new("persistent-echo");
    let (code, json) = fx.run(
        "--mode persistent --op echo --size 3000 --iterations 100 --warmup 10 \
         --driver-cpus 0 --impl-cpus 1",
        "",
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["op"], "echo");
    assert_eq!(json["size"], 3000);
    assert_eq!(json["driver_cpus"], serde_json::json!([0]));
    assert_eq!(json["impl_cpus"], serde_json::json!([1]));
    for field in ["driver_cpus", "impl_cpus"] {
        let cpus = json[field].as_array().unwrap();
        assert!(cpus.iter().all(Value::is_u64), "{field}: {json}");
    }
    assert_common_fields(&json, 100, 10);
    assert_eq!(json["checked"]["full"], 50);
    assert_eq!(json["checked"]["length"], 50);
    let expected = 3000.0 * 100.0 / f64_of(&json, "/elapsed_s") / 1e6;
    assert!(
        (f64_of(&json, "/mb_per_s") - expected).abs() / expected < 0.01,
        "{json}"
    );
    assert_eq!(fx.starts()[0]["cpus"], serde_json::json!([1]));
}

#[test]
fn spawn_ping_pins_every_host() {
    let fx = Fixture::new("spawn-ping");
    let (code, json) = fx.run(
        "--mode spawn --op ping --iterations 6 --warmup 2 --driver-cpus 0 --impl-cpus 1",
        "",
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["mode"], "spawn");
    assert_common_fields(&json, 6, 2);
    assert_eq!(json["impl"]["processes"], 8);
    assert_eq!(json["checked"]["full"], 6);
    let starts = fx.starts();
    assert_eq!(starts.len(), 8);
    for start in starts {
        assert_eq!(start["cpus"], serde_json::json!([1]), "{start}");
        assert_eq!(start["argv"], serde_json::json!([ORIGIN]));
    }
}

#[test]
fn spawn_echo() {
    let fx = Fixture::new("spawn-echo");
    let (code, json) = fx.run(
        "--mode spawn --op echo --size 70000 --iterations 4 --warmup 1",
        "",
    );
    assert_eq!(code, 0, "{json}");
    assert_common_fields(&json, 4, 1);
    assert_eq!(json["impl"]["processes"], 5);
}

#[test]
fn maxrss_covers_what_the_host_touches() {
    let fx = Fixture::new("big");
    for mode in ["persistent", "spawn"] {
        let (code, json) = fx.run(
            &format!("--mode {mode} --op ping --iterations 3 --warmup 2"),
            "big",
        );
        assert_eq!(code, 0, "{json}");
        let kb = json["impl"]["maxrss_kb"].as_u64().unwrap();
        // 40 MiB = 40960 KiB of ballast, plus the interpreter.
        assert!(kb >= 40_000, "{mode}: {kb} KiB in {json}");
        assert!(json["impl"].get("maxrss_note").is_none(), "{json}");
    }
}

#[test]
fn maxrss_of_a_tiny_host_is_its_own_not_the_drivers() {
    // wait4's ru_maxrss would be at least the driver's own peak RSS: the kernel folds the
    // image the child leaves at exec (the driver's) into it. The host's own is far smaller.
    let fx = Fixture::new("tiny").tiny();
    for mode in ["persistent", "spawn"] {
        fs::write(&fx.log, "").unwrap();
        let (code, json) = fx.run(
            &format!("--mode {mode} --op echo --size 1024 --iterations 20 --warmup 2"),
            "",
        );
        assert_eq!(code, 0, "{json}");
        let host_kb = json["impl"]["maxrss_kb"].as_u64().unwrap();
        let log = fs::read_to_string(&fx.log).unwrap();
        let driver_kb: u64 = log
            .lines()
            .filter_map(|line| line.strip_prefix("driver-vmhwm-kb "))
            .map(|kb| kb.parse().unwrap())
            .max()
            .unwrap_or_else(|| panic!("the tiny host logged no driver VmHWM: {log:?}"));
        // The driver holds a 1 MiB reply buffer resident; cat needs far less than that.
        assert!(
            host_kb > 0 && host_kb + 1024 <= driver_kb,
            "{mode}: host {host_kb} KiB, driver {driver_kb} KiB"
        );
    }
}

#[test]
fn spawn_mode_without_warm_up_reports_no_maxrss() {
    let fx = Fixture::new("spawn-no-warmup");
    let (code, json) = fx.run("--mode spawn --op ping --iterations 2 --warmup 0", "");
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["impl"]["maxrss_kb"], Value::Null, "{json}");
    let note = json["impl"]["maxrss_note"].as_str().unwrap();
    assert!(note.contains("--warmup is 0"), "{note}");
}

fn assert_fails(json: &Value, code: i32, expect: &[&str]) {
    assert_eq!(code, 1, "{json}");
    let error = json["error"]
        .as_str()
        .unwrap_or_else(|| panic!("no error in {json}"));
    for part in expect {
        assert!(error.contains(part), "{part:?} not in {error:?}");
    }
    assert_eq!(json.as_object().unwrap().len(), 1, "{json}");
}

#[test]
fn a_wrong_reply_fails_the_trial() {
    let fx = Fixture::new("wrong");
    let (code, json) = fx.run(
        "--mode persistent --op echo --size 1024 --iterations 10 --warmup 0",
        "wrong",
    );
    assert_fails(&json, code, &["op 5 of 10", "$.data.text"]);
}

#[test]
fn a_reply_length_change_fails_the_trial() {
    let fx = Fixture::new("vary");
    let (code, json) = fx.run(
        "--mode persistent --op echo --size 1024 --iterations 10 --warmup 0 --check-full 3",
        "vary",
    );
    assert_fails(&json, code, &["op 4 of 10", "first reply of the trial was"]);
}

#[test]
fn an_8_byte_length_fails_the_trial() {
    let fx = Fixture::new("len8");
    for mode in ["persistent", "spawn"] {
        let (code, json) = fx.run(
            &format!("--mode {mode} --op ping --iterations 3 --warmup 0"),
            "len8",
        );
        assert_fails(&json, code, &["op 1 of 3"]);
    }
}

#[test]
fn a_host_that_dies_fails_the_trial() {
    let fx = Fixture::new("die");
    let (code, json) = fx.run(
        "--mode persistent --op ping --iterations 10 --warmup 1",
        "die",
    );
    assert_fails(
        &json,
        code,
        &[
            "op 2 of 10",
            "closed stdout instead of replying",
            "exited with status 4",
        ],
    );
}

#[test]
fn a_bad_exit_status_fails_the_trial() {
    let fx = Fixture::new("bad-exit");
    for mode in ["persistent", "spawn"] {
        let (code, json) = fx.run(
            &format!("--mode {mode} --op ping --iterations 2 --warmup 0"),
            "bad-exit",
        );
        assert_fails(&json, code, &["exited with status 3"]);
    }
}

#[test]
fn a_hung_host_is_killed_at_the_deadline() {
    let fx = Fixture::new("hang");
    let started = Instant::now();
    let (code, json) = fx.run(
        "--mode persistent --op ping --iterations 2 --warmup 0 --timeout-s 1",
        "hang",
    );
    assert!(started.elapsed() < Duration::from_secs(10));
    assert_fails(&json, code, &["op 1 of 2", "--timeout-s", "killed"]);
}

#[test]
fn a_host_that_cannot_start_fails_the_trial() {
    let fx = Fixture::new("cannot-start");
    let not_executable = fx.dir.join("not_executable");
    fs::write(&not_executable, "").unwrap();
    for (host, expect) in [
        (fx.dir.join("missing"), "no such file"),
        (not_executable, "starting the host"),
    ] {
        let output = Command::new(env!("CARGO_BIN_EXE_nativemsg-driver"))
            .args("--mode spawn --op ping --iterations 1 --warmup 0 --".split_whitespace())
            .arg(&host)
            .arg(ORIGIN)
            .output()
            .unwrap();
        let json: Value = serde_json::from_slice(&output.stdout).unwrap();
        assert_fails(&json, output.status.code().unwrap(), &[expect]);
    }
}

#[test]
fn a_bad_command_line_is_a_usage_error() {
    for (line, expect) in [
        (
            "--mode spawn --op ping --size 100 --iterations 1 --warmup 0 -- h",
            "--size",
        ),
        (
            "--mode spawn --op ping --iterations 1 --warmup 0 --host-cpus 1 -- h",
            "--host-cpus",
        ),
        (
            "--mode spawn --op ping --iterations 1 --warmup 0 --timeout-s 0 -- h",
            "--timeout-s",
        ),
    ] {
        assert_usage_error(env!("CARGO_BIN_EXE_nativemsg-driver"), line, expect);
    }
}
