//! Command tests through the dispatcher: the reply bytes of a few commands per group.

use super::{execute, Ctx, Session};
use crate::protocol::reply::Out;
use crate::protocol::request::{Parsed, Parser};
use crate::store::Store;

/// Runs inline commands in order against one store and session; returns all reply bytes.
fn run(store: &mut Store, session: &mut Session, lines: &[&str]) -> String {
    let mut out = Out::default();
    for line in lines {
        let buf = format!("{line}\r\n").into_bytes();
        let mut parser = Parser::default();
        let mut pos = 0;
        assert_eq!(parser.parse(&buf, &mut pos), Ok(Parsed::Command));
        let mut ctx = Ctx {
            store,
            session,
            out: &mut out,
            now: 1_000_000,
        };
        execute(&mut ctx, parser.args(&buf));
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn replies(lines: &[&str]) -> String {
    run(&mut Store::default(), &mut Session::new(1), lines)
}

#[test]
fn dispatch_errors() {
    assert_eq!(
        replies(&["FOO a b"]),
        "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n"
    );
    assert_eq!(
        replies(&["get"]),
        "-ERR wrong number of arguments for 'get' command\r\n"
    );
    assert_eq!(
        replies(&["CONFIG foo"]),
        "-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n"
    );
    assert_eq!(
        replies(&["config get"]),
        "-ERR wrong number of arguments for 'config|get' command\r\n"
    );
}

#[test]
fn strings_and_counters() {
    assert_eq!(
        replies(&[
            "SET a 1",
            "INCR a",
            "INCRBY a x",
            "GET a",
            "SET m 9223372036854775807",
            "INCR m"
        ]),
        "+OK\r\n:2\r\n-ERR value is not an integer or out of range\r\n$1\r\n2\r\n+OK\r\n\
         -ERR increment or decrement would overflow\r\n"
    );
    assert_eq!(
        replies(&["SET f 10.50", "INCRBYFLOAT f 0.1"]),
        "+OK\r\n$4\r\n10.6\r\n"
    );
}

#[test]
fn wrong_type() {
    assert_eq!(
        replies(&["SET s x", "LPUSH s a"]),
        "+OK\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
    );
}

#[test]
fn empty_collections_disappear() {
    assert_eq!(
        replies(&[
            "RPUSH l a",
            "LPOP l",
            "EXISTS l",
            "SADD s a",
            "SPOP s",
            "EXISTS s"
        ]),
        ":1\r\n$1\r\na\r\n:0\r\n:1\r\n$1\r\na\r\n:0\r\n"
    );
}

#[test]
fn sorted_set_scores_use_17_digits() {
    assert_eq!(
        replies(&["ZADD z 0.1 a", "ZPOPMIN z", "ZPOPMIN z"]),
        ":1\r\n*2\r\n$1\r\na\r\n$19\r\n0.10000000000000001\r\n*0\r\n"
    );
}

#[test]
fn select_and_ttl() {
    let mut store = Store::default();
    let mut session = Session::new(1);
    assert_eq!(
        run(
            &mut store,
            &mut session,
            &[
                "SELECT 3",
                "SET k v EX 10",
                "TTL k",
                "PTTL nokey",
                "SELECT 16"
            ]
        ),
        "+OK\r\n+OK\r\n:10\r\n:-2\r\n-ERR DB index is out of range\r\n"
    );
    assert_eq!(session.db, 3);
    assert_eq!(store.dbs[3].len(), 1);
}

#[test]
fn scan_visits_every_key() {
    let mut store = Store::default();
    let mut session = Session::new(1);
    let sets: Vec<String> = (0..50).map(|i| format!("SET k{i} v")).collect();
    let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
    run(&mut store, &mut session, &refs);
    let mut cursor = "0".to_string();
    let mut seen = 0;
    loop {
        let r = run(
            &mut store,
            &mut session,
            &[&format!("SCAN {cursor} COUNT 7")],
        );
        let lines: Vec<&str> = r.split("\r\n").collect();
        cursor = lines[2].to_string();
        seen += lines.iter().filter(|l| l.starts_with('k')).count();
        if cursor == "0" {
            break;
        }
    }
    assert_eq!(seen, 50);
}
