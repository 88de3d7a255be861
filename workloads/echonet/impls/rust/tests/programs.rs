//! End-to-end tests of the two programs over loopback: the node started as a process (READY,
//! exact reply bytes, counters on SIGTERM, exit statuses) and the controller run against it.
//!
//! Addresses come from the lab's block for this implementation's tests, 127.0.30.0/24, one
//! pair per test so the tests can run in parallel, all on the SPEC's port 3610.

use socket2::{Domain, Socket, Type};
use std::io::{BufRead, BufReader};
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc::{channel, Receiver};
use std::time::Duration;

const NODE: &str = env!("CARGO_BIN_EXE_echonet-rust-node");
const CONTROLLER: &str = env!("CARGO_BIN_EXE_echonet-rust-controller");
const WAIT: Duration = Duration::from_secs(5);

fn hex(s: &str) -> Vec<u8> {
    s.split_whitespace()
        .map(|b| u8::from_str_radix(b, 16).unwrap())
        .collect()
}

/// A node process bound to one address; killed if a test ends without stopping it.
struct Node {
    child: Child,
    lines: Receiver<String>,
    addr: String,
}

impl Node {
    /// A node on `addr`:3610.
    fn start(addr: &str) -> Node {
        Node::spawn(addr, &["--bind", addr, "--ifaddr", addr, "--port", "3610"])
    }

    /// A node with these arguments, once it printed READY.
    fn spawn(addr: &str, args: &[&str]) -> Node {
        let mut child = Command::new(NODE)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let node = Node {
            child,
            lines,
            addr: addr.to_string(),
        };
        assert_eq!(node.lines.recv_timeout(WAIT).as_deref(), Ok("READY"));
        node
    }

    /// SIGTERM; the exit status and the one line of JSON printed.
    fn stop(mut self) -> (i32, serde_json::Value) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(status.success());
        let line = self.lines.recv_timeout(WAIT).expect("counters on stdout");
        let code = self.child.wait().unwrap().code().unwrap_or(-1);
        (code, serde_json::from_str(&line).unwrap())
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A raw UDP peer on `addr`:3610 with a bounded wait.
fn peer(addr: &str) -> UdpSocket {
    let s = UdpSocket::bind((addr, 3610)).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    s
}

fn exchange(s: &UdpSocket, node: &str, req: &[u8]) -> Vec<u8> {
    s.send_to(req, (node, 3610)).unwrap();
    let mut buf = [0u8; 65536];
    let (n, from) = s.recv_from(&mut buf).unwrap();
    assert_eq!(from.to_string(), format!("{node}:3610"));
    buf[..n].to_vec()
}

fn controller(bind: &str, args: &[&str]) -> Output {
    Command::new(CONTROLLER)
        .args(["--bind", bind])
        .args(args)
        .output()
        .unwrap()
}

fn json(out: &Output) -> serde_json::Value {
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {out:?}"))
}

#[test]
fn node_answers_the_spec_get_and_counts() {
    let node = Node::start("127.0.30.11");
    let s = peer("127.0.30.12");
    let req = hex(
        "10 81 00 02 0E F0 01 0E F0 01 62 0C 80 00 82 00 83 00 8A 00 9D 00 9E 00 9F 00 D3 00 \
         D4 00 D5 00 D6 00 D7 00",
    );
    // SPEC §6's reply with this node's address (127.0.30.11) in 0x83.
    let expected = hex(
        "10 81 00 02 0E F0 01 0E F0 01 72 0C 80 01 30 82 04 01 0E 01 00 83 11 FE FF FF FF 00 00 \
         00 00 00 00 00 00 00 7F 00 1E 0B 8A 03 FF FF FF 9D 03 02 80 D5 9E 01 00 9F 0D 0C 80 82 \
         83 8A 9D 9E 9F D3 D4 D5 D6 D7 D3 03 00 00 01 D4 02 00 02 D5 04 01 01 30 01 D6 04 01 01 \
         30 01 D7 03 01 01 30",
    );
    assert_eq!(exchange(&s, &node.addr, &req), expected);
    // Dropped, ignored, and a SetI that succeeds silently.
    for bad in [
        &[][..],
        &hex("10 82 00 01 05 FF 01 0E F0 01 62 01 80 00"),
        &hex("10 81 00 01 05 FF 01 0E F0 01 62 02 80 00"),
        &hex("10 81 00 01 05 FF 01 02 90 01 62 01 80 00"),
        &hex("10 81 00 01 05 FF 01 01 30 01 60 01 80 01 30"),
    ] {
        s.send_to(bad, (node.addr.as_str(), 3610)).unwrap();
    }
    // The SetI took effect, and nothing was sent for the others.
    let reply = exchange(
        &s,
        &node.addr,
        &hex("10 81 00 09 05 FF 01 01 30 01 62 01 80 00"),
    );
    assert_eq!(reply, hex("10 81 00 09 01 30 01 05 FF 01 72 01 80 01 30"));
    let (code, counters) = node.stop();
    assert_eq!(code, 0);
    assert_eq!(
        counters,
        serde_json::json!({"received": 7, "requests": 3, "replies": 2, "ignored": 1,
                           "dropped_malformed": 2, "dropped_format2": 1, "send_errors": 0})
    );
}

#[test]
fn a_flood_of_garbage_does_not_stop_the_node_answering_others() {
    let node = Node::start("127.0.30.21");
    let flooder = peer("127.0.30.22");
    let asker = peer("127.0.30.23");
    let garbage = hex("10 81 00 01 05 FF 01 0E F0 01 62 FF 80 00");
    for round in 0..50u8 {
        for _ in 0..20 {
            let _ = flooder.send_to(&garbage, (node.addr.as_str(), 3610));
        }
        let get = [
            0x10, 0x81, 0x00, round, 0x05, 0xFF, 0x01, 0x0E, 0xF0, 0x01, 0x62, 0x01, 0x80, 0x00,
        ];
        let reply = exchange(&asker, &node.addr, &get);
        assert_eq!(reply[3], round);
        assert_eq!(&reply[10..], &[0x72, 0x01, 0x80, 0x01, 0x30]);
    }
    let (code, counters) = node.stop();
    assert_eq!(code, 0);
    assert_eq!(counters["requests"], 50);
    assert_eq!(counters["replies"], 50);
    // Loopback may drop some of the flood when the node's buffer fills; none is answered.
    let received = counters["received"].as_u64().unwrap();
    let malformed = counters["dropped_malformed"].as_u64().unwrap();
    assert_eq!(received, 50 + malformed);
}

#[test]
fn node_exit_statuses() {
    let _first = Node::start("127.0.30.31");
    let second = Command::new(NODE)
        .args(["--bind", "127.0.30.31"])
        .output()
        .unwrap();
    assert_eq!(second.status.code(), Some(1), "address in use");
    assert!(second.stdout.is_empty());
    assert!(String::from_utf8_lossy(&second.stderr).contains("in use"));
    for bad in [
        &["--port", "0"][..],
        &["--port", "65536"],
        &["--bind", "1.2.3"],
        &["--frobnicate"],
    ] {
        let out = Command::new(NODE).args(bad).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty() && !out.stderr.is_empty(), "{bad:?}");
    }
    let help = Command::new(NODE).arg("--help").output().unwrap();
    assert_eq!(help.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&help.stdout).starts_with("usage:"));
}

#[test]
fn controller_commands_against_the_node() {
    let node = Node::start("127.0.30.41");
    let me = "127.0.30.42";
    let host = node.addr.as_str();

    let out = controller(me, &["get", host, "0EF001", "80,d6"]);
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        json(&out),
        serde_json::json!({"host": host, "tid": "0001", "seoj": "0ef001", "deoj": "05ff01",
            "esv": "72", "properties": [{"epc": "80", "edt": "30"},
                                        {"epc": "d6", "edt": "01013001"}],
            "attempts": 1, "ignored": 0})
    );

    let out = controller(me, &["setc", host, "013001", "80=30,b3=33"]);
    let doc = json(&out);
    assert_eq!(
        (doc["esv"].as_str(), out.status.code()),
        (Some("51"), Some(0))
    );
    assert_eq!(
        doc["properties"],
        serde_json::json!([{"epc": "80", "edt": ""}, {"epc": "b3", "edt": "33"}])
    );

    let doc = json(&controller(me, &["seti", host, "013001", "b3=19"]));
    assert_eq!(doc["esv"], serde_json::Value::Null);
    let doc = json(&controller(me, &["seti", host, "013001", "b3=ff"]));
    assert_eq!(doc["esv"], "50");

    let doc = json(&controller(
        me,
        &["setget", host, "013001", "b0=42", "80,b0,b3"],
    ));
    assert_eq!(doc["esv"], "7e");
    assert_eq!(doc["set"], serde_json::json!([{"epc": "b0", "edt": ""}]));
    assert_eq!(
        doc["get"],
        serde_json::json!([{"epc": "80", "edt": "30"}, {"epc": "b0", "edt": "42"},
                           {"epc": "b3", "edt": "19"}])
    );
    assert!(doc.get("properties").is_none());

    let doc = json(&controller(me, &["inf-req", host, "0ef001", "d5"]));
    assert_eq!(doc["esv"], "73");

    for mode in ["faithful", "batched"] {
        let out = controller(
            me,
            &[
                "bench",
                host,
                "--mode",
                mode,
                "--iterations",
                "20",
                "--warmup",
                "2",
            ],
        );
        assert_eq!(out.status.code(), Some(0));
        let doc = json(&out);
        let per = if mode == "faithful" { 12 } else { 1 };
        assert_eq!(doc["requests"], 20 * per);
        assert_eq!(
            (doc["mode"].as_str(), doc["iterations"].as_u64()),
            (Some(mode), Some(20))
        );
        assert!(doc["elapsed_s"].as_f64().unwrap() > 0.0);
    }

    let (code, counters) = node.stop();
    assert_eq!(code, 0);
    // get, setc, 2 seti, setget, inf-req, 2 × 22 Gets (faithful) + 22 (batched).
    assert_eq!(counters["requests"], 6 + 22 * 12 + 22);
    assert_eq!(counters["replies"], 5 + 22 * 12 + 22);
}

#[test]
fn controller_failures_and_bad_command_lines() {
    // Nobody at .52: 1 + 2 attempts of 30 ms, then exit 1 with an error object.
    let out = controller(
        "127.0.30.51",
        &[
            "--timeout-ms",
            "30",
            "--retries",
            "2",
            "get",
            "127.0.30.52",
            "0ef001",
            "80",
        ],
    );
    assert_eq!(out.status.code(), Some(1));
    let doc = json(&out);
    assert!(
        doc["error"].as_str().unwrap().contains("3 attempt"),
        "{doc}"
    );

    for bad in [
        &["get", "127.0.30.52", "0ef001"][..],
        &["get", "127.0.30.52", "ef001", "80"],
        &["bench", "127.0.30.52", "--mode", "faithful"],
        &["--retries", "x", "discover"],
        &["launch"],
    ] {
        let out = controller("127.0.30.51", bad);
        assert_eq!(out.status.code(), Some(2), "{bad:?}");
        assert!(out.stdout.is_empty() && !out.stderr.is_empty(), "{bad:?}");
    }
}

#[test]
fn controller_ignores_strays_and_matches_by_tid_source_and_esv() {
    // A fake node that first sends three strays (wrong TID, wrong ESV, garbage), then the
    // reply, then a duplicate; and a second sender with the right TID from the wrong address.
    let fake = peer("127.0.30.61");
    let other = peer("127.0.30.63");
    let thread = std::thread::spawn(move || {
        let mut buf = [0u8; 1500];
        let (n, from) = fake.recv_from(&mut buf).unwrap();
        let req = buf[..n].to_vec();
        let tid = [req[2], req[3]];
        let reply = |tid: [u8; 2], esv: u8| {
            let mut r = vec![
                0x10, 0x81, tid[0], tid[1], 0x0E, 0xF0, 0x01, 0x05, 0xFF, 0x01,
            ];
            r.extend_from_slice(&[esv, 0x01, 0x80, 0x01, 0x30]);
            r
        };
        other.send_to(&reply(tid, 0x72), from).unwrap();
        fake.send_to(&reply([tid[0], tid[1] ^ 1], 0x72), from)
            .unwrap();
        fake.send_to(&reply(tid, 0x71), from).unwrap();
        fake.send_to(&[0x10, 0x81, 0x00], from).unwrap();
        std::thread::sleep(Duration::from_millis(50));
        fake.send_to(&reply(tid, 0x72), from).unwrap();
        fake.send_to(&reply(tid, 0x72), from).unwrap();
    });
    let out = controller("127.0.30.62", &["get", "127.0.30.61", "0ef001", "80"]);
    thread.join().unwrap();
    let doc = json(&out);
    assert_eq!(doc["esv"], "72");
    assert_eq!(doc["attempts"], 1);
    assert_eq!(doc["ignored"], 4, "{doc}");
}

// Multicast on `lo`, on ports other than 3610 so that no program outside these tests hears it.

/// The node bound to 0.0.0.0 joins the group on the interface of its --ifaddr and answers a
/// multicast Get by unicast. The asker shares the node's port the way other ECHONET stacks of
/// a host do (SO_REUSEADDR on both sockets).
#[test]
fn a_node_bound_to_the_wildcard_address_answers_multicast() {
    let args = [
        "--bind",
        "0.0.0.0",
        "--ifaddr",
        "127.0.30.85",
        "--port",
        "36199",
    ];
    let node = Node::spawn("127.0.30.85", &args);
    let asker = Socket::new(Domain::IPV4, Type::DGRAM, None).unwrap();
    asker.set_reuse_address(true).unwrap();
    let me: Ipv4Addr = "127.0.30.86".parse().unwrap();
    asker.set_multicast_if_v4(&me).unwrap();
    asker.bind(&SocketAddrV4::new(me, 36199).into()).unwrap();
    let asker: UdpSocket = asker.into();
    asker
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    let get = hex("10 81 00 2A 05 FF 01 0E F0 00 62 01 D6 00");
    asker.send_to(&get, ("224.0.23.0", 36199)).unwrap();
    let mut buf = [0u8; 1500];
    let (n, _) = asker.recv_from(&mut buf).unwrap();
    assert_eq!(
        &buf[..n],
        &hex("10 81 00 2A 0E F0 01 05 FF 01 72 01 D6 04 01 01 30 01")[..]
    );
    let (code, counters) = node.stop();
    assert_eq!(code, 0);
    assert_eq!(counters["requests"], 1);
    // Its own start INF came back to it (loop on) and was ignored.
    assert_eq!(counters["ignored"], 1);
}

/// Two fake nodes behind one group member: answers sorted by address, a duplicate and a
/// stray counted as ignored, `--expect` more than answer fails after 1 + retries sends.
#[test]
fn discovery_collects_sorts_and_counts() {
    let group = UdpSocket::bind(("224.0.23.0", 36198)).unwrap();
    group
        .join_multicast_v4(
            &"224.0.23.0".parse().unwrap(),
            &"127.0.30.87".parse().unwrap(),
        )
        .unwrap();
    // The fake ends once nobody has asked for a second.
    group
        .set_read_timeout(Some(Duration::from_secs(1)))
        .unwrap();
    let high = UdpSocket::bind(("127.0.30.89", 36198)).unwrap();
    let low = UdpSocket::bind(("127.0.30.88", 36198)).unwrap();
    let fake = std::thread::spawn(move || {
        let mut buf = [0u8; 1500];
        let mut requests = 0;
        while let Ok((n, from)) = group.recv_from(&mut buf) {
            requests += 1;
            let (tid, epc) = ([buf[2], buf[3]], buf[12]);
            assert_eq!(
                &buf[4..n],
                &[0x05, 0xFF, 0x01, 0x0E, 0xF0, 0x01, 0x62, 0x01, 0xD6, 0x00]
            );
            let mut reply = vec![
                0x10, 0x81, tid[0], tid[1], 0x0E, 0xF0, 0x01, 0x05, 0xFF, 0x01,
            ];
            reply.extend_from_slice(&[0x72, 0x01, epc, 0x04, 0x01, 0x01, 0x30, 0x01]);
            high.send_to(&reply, from).unwrap();
            low.send_to(&reply, from).unwrap();
            high.send_to(&reply, from).unwrap();
            low.send_to(b"noise", from).unwrap();
        }
        requests
    });
    let discover = |args: &[&str]| {
        Command::new(CONTROLLER)
            .args([
                "--bind",
                "127.0.30.87",
                "--port",
                "36198",
                "--timeout-ms",
                "100",
            ])
            .args(["--retries", "1", "discover"])
            .args(args)
            .output()
            .unwrap()
    };
    let out = discover(&["--wait-ms", "300"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doc = json(&out);
    let hosts: Vec<&str> = doc["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["host"].as_str().unwrap())
        .collect();
    assert_eq!(hosts, ["127.0.30.88", "127.0.30.89"]);
    assert_eq!(
        (doc["attempts"].as_u64(), doc["ignored"].as_u64()),
        (Some(1), Some(2))
    );
    assert!(doc["elapsed_s"].as_f64().unwrap() < 0.3, "{doc}");

    let out = discover(&["--expect", "3"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let doc = json(&out);
    assert!(doc["error"].as_str().unwrap().contains("2 of 3"), "{doc}");
    assert_eq!(fake.join().unwrap(), 3, "one send, then 1 + 1 retry");
}
