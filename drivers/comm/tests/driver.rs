//! Runs the built driver against a small fake server (a Python script written by the test)
//! and a fake client program, and checks the JSON it prints and that it fails cleanly, with
//! a useful message, on broken servers and clients.

// A test crate: a panic is a failed assertion, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use driver_kit::testing::{assert_usage_error, run_json};
use serde_json::Value;
use std::fs;
use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

/// A comm server (SPEC §1–2) with one thread per connection; `--behaviour` picks a fault. It
/// logs its argv, cwd and CPU mask to stderr, so the test can see how the driver started it.
const FAKE_SERVER: &str = r#"#!/usr/bin/env python3
import json, os, signal, socket, struct, sys, threading, time
args = sys.argv[1:]
port = int(args[args.index("--port") + 1])
behaviour = args[args.index("--behaviour") + 1] if "--behaviour" in args else "good"
sys.stderr.write("start %s\n" % json.dumps(
    {"argv": args, "cwd": os.getcwd(), "cpus": sorted(os.sched_getaffinity(0))}))
sys.stderr.flush()
if behaviour == "no-start":
    sys.exit(5)
signal.signal(signal.SIGTERM, lambda *a: os._exit(3 if behaviour == "bad-exit" else 0))

def recv_exact(c, n):
    data = b""
    while len(data) < n:
        chunk = c.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data

def serve(c):
    count = 0
    while True:
        header = recv_exact(c, 9)
        if header is None:
            break
        kind, n = header[0], struct.unpack(">Q", header[1:])[0]
        if behaviour == "mute":  # takes everything, END included, and never answers
            recv_exact(c, n)
            continue
        if kind in (4, 8):
            c.sendall(b"\x04" + bytes(8))
            break
        body = recv_exact(c, n)
        if body is None:
            break
        count += 1
        if behaviour == "corrupt" and count == 3:
            body = body[:7] + bytes([body[7] ^ 1]) + body[8:]
        c.sendall(b"\x02" + header[1:] + body)
    c.close()

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", port))
s.listen(1024)
while True:
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"#;

/// A client program (SPEC §3) that reports made-up numbers for what it was asked; it logs
/// its argv and CPU mask to stderr.
const FAKE_CLIENT: &str = r#"#!/usr/bin/env python3
import json, os, sys, time
args = sys.argv[1:]
sys.stderr.write("client %s\n" % json.dumps({"argv": args, "cpus": sorted(os.sched_getaffinity(0))}))
opt = lambda name: args[args.index(name) + 1]
behaviour = os.environ.get("FAKE_CLIENT", "good")
if behaviour == "fail":
    print(json.dumps({"error": "client 2: the reply to message 5 differs"}))
    sys.exit(1)
if behaviour == "hang":
    time.sleep(120)
clients, messages, size = int(opt("--clients")), int(opt("--messages")), int(opt("--size"))
report = {"clients": clients, "messages": messages, "size": size,
          "bytes": clients * messages * size, "elapsed_s": 0.5,
          "mb_per_s": clients * messages * size / 0.5e6, "msgs_per_s": clients * messages / 0.5}
if opt("--mode") == "rtt":
    report["latency_us"] = {"p50": 12.5, "p99": 30.0, "max": 99.0}
print(json.dumps(report))
"#;

struct Fixture {
    dir: PathBuf,
    server: PathBuf,
    client: PathBuf,
    log: PathBuf,
}

impl Fixture {
    fn new(name: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("comm-driver-test-{}-{name}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let write = |file: &str, text: &str| {
            let path = dir.join(file);
            fs::write(&path, text).unwrap();
            fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
            path
        };
        let server = write("fake_server.py", FAKE_SERVER);
        let client = write("fake_client.py", FAKE_CLIENT);
        let log = dir.join("server.log");
        Fixture {
            dir,
            server,
            client,
            log,
        }
    }

    /// Runs the driver with `scenario` options against the fake server with `behaviour`;
    /// returns its exit code and JSON.
    fn run(&self, scenario: &str, behaviour: &str, env: &[(&str, &str)]) -> (i32, Value) {
        let port = free_port().to_string();
        let client_json = serde_json::json!([self.client, "--port", port]).to_string();
        let mut command = Command::new(env!("CARGO_BIN_EXE_comm-driver"));
        command
            .args(scenario.split_whitespace())
            .args([
                "--port",
                &port,
                "--timeout-s",
                "20",
                "--client-json",
                &client_json,
            ])
            .arg("--impl-stderr")
            .arg(&self.log)
            .arg("--impl-cwd")
            .arg(&self.dir)
            .arg("--")
            .arg(&self.server)
            .args(["--port", &port, "--behaviour", behaviour])
            .envs(env.iter().copied());
        run_json(&mut command)
    }

    fn log(&self) -> String {
        fs::read_to_string(&self.log).unwrap_or_default()
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.dir);
    }
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn error_of(result: (i32, Value)) -> String {
    let (code, json) = result;
    assert_eq!(code, 1, "{json}");
    assert_eq!(json.as_object().unwrap().len(), 1, "only the error: {json}");
    json["error"].as_str().unwrap().to_string()
}

#[test]
fn stream_load_is_checked_and_measured() {
    let fx = Fixture::new("stream");
    let (code, json) = fx.run(
        "--mode stream --clients 3 --size 1000 --messages 50 --impl-cpus 0 --driver-cpus 0",
        "good",
        &[],
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["mode"], "stream");
    assert_eq!(json["load"], "neutral");
    assert_eq!(json["bytes"], 150_000);
    assert_eq!(json["replies_checked"], 150);
    assert!(json.get("latency_us").is_none());
    let elapsed = json["elapsed_s"].as_f64().unwrap();
    let mb = json["mb_per_s"].as_f64().unwrap();
    assert!(
        elapsed > 0.0 && (mb - 0.15 / elapsed).abs() <= 0.01 * mb,
        "{json}"
    );
    assert_eq!(json["impl"]["exit_status"], 0);
    assert_eq!(json["impl"]["cpu_clock"], "process-cpu-clock");
    assert_eq!(json["impl_cpus"], serde_json::json!([0]));
    assert!(json.get("server").is_none(), "{json}");
    // A Python interpreter: some MB resident, some CPU for 150 messages.
    assert!(json["impl"]["maxrss_kb"].as_u64().unwrap() > 1000, "{json}");
    let cpu_s = json["impl"]["cpu_s"].as_f64().unwrap();
    assert!(cpu_s > 0.0, "{json}");
    let per_op = json["impl"]["cpu_us_per_op"].as_f64().unwrap();
    assert!((per_op - cpu_s * 1e6 / 150.0).abs() < 0.01, "{json}");
    assert_eq!(json["load_generator"]["threads"], 6);
    // The server ran in --impl-cwd, pinned to --impl-cpus, with its argv as given.
    let log = fx.log();
    let start: Value =
        serde_json::from_str(log.lines().next().unwrap().strip_prefix("start ").unwrap()).unwrap();
    assert_eq!(start["cpus"], serde_json::json!([0]));
    assert_eq!(
        fs::canonicalize(start["cwd"].as_str().unwrap()).unwrap(),
        fs::canonicalize(&fx.dir).unwrap()
    );
    assert_eq!(start["argv"][2], "--behaviour");
}

#[test]
fn rtt_load_records_round_trips() {
    let fx = Fixture::new("rtt");
    let (code, json) = fx.run(
        "--mode rtt --clients 1 --size 0 --messages 40 --warmup 10 --type 16",
        "good",
        &[],
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["replies_checked"], 50);
    assert_eq!(json["type"], 16);
    let latency = &json["latency_us"];
    for field in ["p50", "p90", "p99", "p999", "max", "min", "mean"] {
        assert!(latency[field].as_f64().unwrap() > 0.0, "{field}: {json}");
    }
    assert!(latency["p50"].as_f64() <= latency["max"].as_f64());
}

#[test]
fn a_wrong_reply_names_client_message_and_byte() {
    let fx = Fixture::new("corrupt");
    let error = error_of(fx.run(
        "--mode rtt --clients 1 --size 64 --messages 10",
        "corrupt",
        &[],
    ));
    assert!(
        error.contains(
            "client 0: the reply to message 2 differs from the message at body byte 7 of 64"
        ),
        "{error}"
    );
}

#[test]
fn a_server_that_does_not_exit_0_on_sigterm_fails_the_trial() {
    let fx = Fixture::new("bad-exit");
    let error = error_of(fx.run("--clients 2 --size 10 --messages 5", "bad-exit", &[]));
    assert!(
        error.contains("after SIGTERM the server exited with status 3"),
        "{error}"
    );
    assert!(
        error.contains(fx.log.to_str().unwrap()),
        "points at the log: {error}"
    );
}

#[test]
fn a_server_that_exits_at_start_is_reported() {
    let fx = Fixture::new("no-start");
    let error = error_of(fx.run("--clients 1 --size 10 --messages 5", "no-start", &[]));
    assert!(
        error.contains("the server exited with status 5 before it accepted connections"),
        "{error}"
    );
}

#[test]
fn a_mute_server_times_out_and_the_driver_ends() {
    let fx = Fixture::new("mute");
    let started = Instant::now();
    let port = free_port().to_string();
    let output = Command::new(env!("CARGO_BIN_EXE_comm-driver"))
        .args(["--clients", "2", "--size", "10", "--messages", "5"])
        .args(["--port", &port, "--timeout-s", "2", "--"])
        .arg(&fx.server)
        .args(["--port", &port, "--behaviour", "mute"])
        .output()
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(15));
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    let error = error_of((output.status.code().unwrap(), json));
    assert!(
        error.contains("did not finish within --timeout-s: client 0 sent 5 and got 0 replies of 5"),
        "{error}"
    );
    // The server is gone: its port is free again.
    TcpListener::bind(format!("127.0.0.1:{port}")).unwrap();
}

#[test]
fn own_load_runs_the_client_program() {
    let fx = Fixture::new("own");
    let (code, json) = fx.run(
        "--mode stream --clients 4 --size 100 --messages 10 --load own --driver-cpus 0",
        "good",
        &[],
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(json["load"], "own");
    assert_eq!(json["mb_per_s"], 0.008);
    assert_eq!(json["msgs_per_s"], 80.0);
    assert_eq!(json["elapsed_s"], 0.5);
    assert_eq!(json["load_generator"]["kind"], "client");
    let argv = json["load_generator"]["argv"].as_array().unwrap();
    let tail: Vec<&str> = argv[3..].iter().map(|a| a.as_str().unwrap()).collect();
    assert_eq!(
        tail,
        [
            "--clients",
            "4",
            "--messages",
            "10",
            "--size",
            "100",
            "--mode",
            "stream"
        ]
    );
    // The client ran on the driver CPUs; its stderr went to the log.
    assert!(fx.log().contains("\"cpus\": [0]}"), "{}", fx.log());

    let (code, json) = fx.run(
        "--mode rtt --clients 1 --size 100 --messages 10 --load own",
        "good",
        &[],
    );
    assert_eq!(code, 0, "{json}");
    assert_eq!(
        json["latency_us"],
        serde_json::json!({"p50": 12.5, "p99": 30.0, "max": 99.0})
    );
}

#[test]
fn own_load_failures_are_reported() {
    let fx = Fixture::new("own-fail");
    let error = error_of(fx.run(
        "--clients 4 --size 100 --messages 10 --load own",
        "good",
        &[("FAKE_CLIENT", "fail")],
    ));
    assert!(
        error.contains("exited with status 1")
            && error.contains("it reported: client 2: the reply to message 5 differs"),
        "{error}"
    );
}

#[test]
fn a_bad_command_line_is_a_usage_error() {
    for (line, expect) in [
        ("--clients 1 --size 1 --messages 1 -- s", "--port"),
        (
            "--clients 1 --size 1 --messages 1 --port 1 --host-cpus 1 -- s",
            "--host-cpus",
        ),
        (
            "--clients 0 --size 1 --messages 1 --port 1 -- s",
            "--clients",
        ),
    ] {
        assert_usage_error(env!("CARGO_BIN_EXE_comm-driver"), line, expect);
    }
}
