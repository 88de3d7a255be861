//! End-to-end tests of the program (SPEC §5, §6): command lines, every mode's report, a client
//! piped to a server, a client facing a wrong server, and hostile messages to the server.

// Test code: a failed unwrap is a failed assertion, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use capnp::message;
use capnp_rust::carsales::CarSales;
use capnp_rust::carsales_capnp::total_value;
use capnp_rust::eval_capnp::{expression, Operation};
use capnp_rust::modes::Case;
use capnp_rust::rng::FastRand;
use serde_json::Value;
use std::io::{Read, Write};
use std::process::{Command, Output, Stdio};

const PROGRAM: &str = env!("CARGO_BIN_EXE_capnp-rust");

fn run(args: &[&str]) -> Output {
    Command::new(PROGRAM)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs the server of `case` on `input`; returns its output.
fn serve(case: &str, compression: &str, input: &[u8]) -> Output {
    let mut child = Command::new(PROGRAM)
        .args([case, "server", "no-reuse", compression, "1"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // A server may stop reading early (that is the point): ignore the broken pipe.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn report(line: &[u8]) -> Value {
    let text = String::from_utf8_lossy(line);
    serde_json::from_str(text.trim_end().lines().last().unwrap()).unwrap()
}

#[test]
fn bad_command_lines_exit_2_with_the_usage() {
    for args in [
        vec![],
        vec!["carsales", "bytes", "reuse", "none"],
        vec!["eval", "object", "no-reuse", "packed", "10"],
        vec!["eval", "bytes", "no-reuse", "none", "0"],
        vec!["catrank", "bytes", "no-reuse", "lz4", "10"],
    ] {
        let out = run(&args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(stderr(&out).contains("usage: capnp-rust"), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn every_mode_reports_every_response_checked() {
    for (case, iterations) in [("carsales", 40), ("catrank", 20), ("eval", 200)] {
        for (mode, compression) in [
            ("object", "none"),
            ("bytes", "none"),
            ("bytes", "packed"),
            ("pipe", "none"),
            ("pipe", "packed"),
        ] {
            for reuse in ["reuse", "no-reuse"] {
                let n = iterations.to_string();
                let out = run(&[case, mode, reuse, compression, &n]);
                let what = format!("{case} {mode} {reuse} {compression}: {}", stderr(&out));
                assert!(out.status.success(), "{what}");
                let r = report(&out.stdout);
                assert_eq!(r["case"], case, "{what}");
                assert_eq!(r["mode"], mode, "{what}");
                assert_eq!(r["reuse"], reuse, "{what}");
                assert_eq!(r["compression"], compression, "{what}");
                assert_eq!(r["iterations"], iterations, "{what}");
                assert_eq!(r["warmup"], iterations / 20, "{what}");
                assert_eq!(r["checked"], iterations + iterations / 20, "{what}");
                assert!(r["elapsed_s"].as_f64().unwrap() > 0.0, "{what}");
                let moved = (r["request_bytes"].as_u64(), r["response_bytes"].as_u64());
                if mode == "object" {
                    assert_eq!(moved, (Some(0), Some(0)), "{what}");
                } else {
                    assert!(moved.0.unwrap() > 0 && moved.1.unwrap() > 0, "{what}");
                }
                assert_eq!(r["server_cpu_s"].is_f64(), mode == "pipe", "{what}");
            }
        }
    }
}

#[test]
fn client_piped_to_server_agree() {
    for compression in ["none", "packed"] {
        let mut server = Command::new(PROGRAM)
            .args(["catrank", "server", "no-reuse", compression, "20"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let client = Command::new(PROGRAM)
            .args(["catrank", "client", "no-reuse", compression, "20"])
            .stdin(Stdio::from(server.stdout.take().unwrap()))
            .stdout(Stdio::from(server.stdin.take().unwrap()))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let server = server.wait_with_output().unwrap();
        assert!(client.status.success(), "{}", stderr(&client));
        assert!(server.status.success(), "{}", stderr(&server));
        assert_eq!(report(&client.stderr)["checked"], 21);
        assert_eq!(stderr(&server).trim(), "{\"served\": 21}");
    }
}

#[test]
fn client_exits_1_on_a_wrong_amount() {
    let mut client = Command::new(PROGRAM)
        .args(["carsales", "client", "no-reuse", "none", "10"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut to_client = client.stdin.take().unwrap();
    let mut from_client = std::io::BufReader::new(client.stdout.take().unwrap());
    // The suite's kind of wrong server: the right amount plus one.
    let request = capnp::serialize::read_message(&mut from_client, Default::default()).unwrap();
    let mut response = message::Builder::new_default();
    CarSales::serve(request.get_root().unwrap(), response.init_root()).unwrap();
    let mut root: total_value::Builder<'_> = response.get_root().unwrap();
    let amount = root.reborrow().get_amount();
    root.set_amount(amount + 1);
    capnp::serialize::write_message(&mut to_client, &response).unwrap();
    drop(to_client);
    let mut rest = Vec::new();
    from_client.read_to_end(&mut rest).unwrap();
    let out = client.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let said = stderr(&out);
    assert_eq!(said.lines().count(), 1, "{said}");
    assert!(
        said.contains("iteration 1 of 10: expected amount"),
        "{said}"
    );
}

// ---- hostile input to the server ------------------------------------------------------

fn one_segment(words: &[u64]) -> Vec<u8> {
    let mut out = 0u32.to_le_bytes().to_vec();
    out.extend((words.len() as u32).to_le_bytes());
    for w in words {
        out.extend(w.to_le_bytes());
    }
    out
}

fn segment_words(message: &message::Builder<message::HeapAllocator>) -> Vec<u64> {
    let segments = message.get_segments_for_output();
    assert_eq!(segments.len(), 1);
    segments[0]
        .chunks(8)
        .map(|w| u64::from_le_bytes(w.try_into().unwrap()))
        .collect()
}

fn struct_pointer(offset: i32, data: u16, pointers: u16) -> u64 {
    ((offset as u32 as u64 & 0x3fff_ffff) << 2)
        | (u64::from(data) << 32)
        | (u64::from(pointers) << 48)
}

fn expression_message(depth: usize) -> message::Builder<message::HeapAllocator> {
    let mut m = message::Builder::new_default();
    let mut e: expression::Builder<'_> = m.init_root();
    for _ in 0..depth {
        e.set_op(Operation::Add);
        e.reborrow().get_right().set_value(1);
        e = e.get_left().init_expression();
    }
    e.reborrow().get_left().set_value(1);
    e.get_right().set_value(1);
    m
}

fn assert_refused(case: &str, compression: &str, input: &[u8], what: &str) {
    let out = serve(case, compression, input);
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{what}: {said}");
    assert_eq!(said.lines().count(), 1, "{what}: {said}");
    assert!(said.starts_with("capnp-rust: "), "{what}: {said}");
}

#[test]
fn server_serves_until_a_clean_end_of_input() {
    let out = serve("eval", "none", b"");
    assert!(out.status.success());
    assert_eq!(stderr(&out).trim(), "{\"served\": 0}");

    let mut m = message::Builder::new_default();
    let mut rng = FastRand::new();
    CarSales::build_request(&mut rng, m.init_root());
    let one = capnp::serialize::write_message_to_words(&m);
    let out = serve(
        "carsales",
        "none",
        &[one.as_slice(), one.as_slice()].concat(),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out).trim(), "{\"served\": 2}");
}

#[test]
fn server_refuses_hostile_messages() {
    let mut m = message::Builder::new_default();
    let mut rng = FastRand::new();
    CarSales::build_request(&mut rng, m.init_root());
    let request = capnp::serialize::write_message_to_words(&m);
    assert_refused(
        "carsales",
        "none",
        &request[..request.len() / 2],
        "truncated",
    );

    let mut many = 0xffff_fffeu32.to_le_bytes().to_vec();
    many.extend([0u8; 60]);
    assert_refused("carsales", "none", &many, "2^32 - 1 segments");

    let mut huge = 0u32.to_le_bytes().to_vec();
    huge.extend((1u32 << 30).to_le_bytes());
    huge.extend([0u8; 64]);
    assert_refused("carsales", "none", &huge, "a segment beyond the cap");

    let root = one_segment(&[struct_pointer(1000, 1, 0), 0]);
    assert_refused("carsales", "none", &root, "root out of bounds");

    assert_refused(
        "eval",
        "none",
        &capnp::serialize::write_message_to_words(&expression_message(10_000)),
        "nested 10000 deep",
    );
    let nine = capnp::serialize::write_message_to_words(&expression_message(9));
    assert!(serve("eval", "none", &nine).status.success());

    // The root (word 1, after its pointer) points its only pointer back at itself.
    let mut words = segment_words(&expression_message(1));
    let (data, pointers) = ((words[0] >> 32) as u16, (words[0] >> 48) as u16);
    let used: Vec<usize> = (0..usize::from(pointers))
        .map(|i| 1 + usize::from(data) + i)
        .filter(|&at| words[at] != 0)
        .collect();
    assert_eq!(used.len(), 1);
    let at = used[0];
    words[at] = struct_pointer(1 - (at as i32 + 1), data, pointers);
    assert_refused("eval", "none", &one_segment(&words), "pointer loop");

    // An operation outside 0-4: op is the root's first data field.
    let mut words = segment_words(&expression_message(0));
    assert_eq!(words[1] & 0xffff, 0);
    words[1] |= 7;
    assert_refused("eval", "none", &one_segment(&words), "unknown op");

    // 3 M empty results: cheap to send, but their response (3 words each) would pass the cap.
    let empties = [
        1u64 << 48,     // root: no data, one pointer
        1 | (7 << 32),  // results: inline-composite list of 0 words
        3_000_000 << 2, // its tag: 3 M elements of no data and no pointers
    ];
    assert_refused(
        "catrank",
        "none",
        &one_segment(&empties),
        "3 M empty results",
    );

    // A one-word message whose packed zero run goes on for 255 more words.
    assert_refused(
        "carsales",
        "packed",
        &[0x10, 0x01, 0x00, 0xff],
        "packed run past the end",
    );
    let mut packed_huge = Vec::new();
    capnp::serialize_packed::write_message(&mut packed_huge, &m).unwrap();
    assert_refused(
        "carsales",
        "packed",
        &packed_huge[..packed_huge.len() / 2],
        "packed truncated",
    );
}
