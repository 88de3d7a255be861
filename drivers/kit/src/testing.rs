//! Checks a driver's own tests share: how a driver answers a bad command line is the
//! contract's (output.rs), so every driver tests it the same way; and the parsed command line
//! its unit tests start from.

// Assertions: a panic here is a failed test, with its message.
#![allow(clippy::panic)]

use crate::output::{parse, DriverArgs, Usage};
use serde_json::{Map, Value};
use std::process::Command;

/// A driver's arguments from the whitespace-separated `line` (program name first), parsed
/// and validated as its `main` does (a failed test when they are refused).
pub fn args<A: DriverArgs>(line: &str) -> A {
    match parse::<A, _, _>(line.split_whitespace()) {
        Ok(args) => args,
        Err(Usage::Bad(e) | Usage::Exit(e)) => panic!("{line}: {e}"),
    }
}

/// The members of a JSON object, e.g. of `json!({...})` (a failed test for any other value).
pub fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(members) => members,
        other => panic!("not a JSON object: {other}"),
    }
}

/// Runs a driver's command and returns its exit status and the one JSON document it printed
/// (a failed test, with stdout and stderr, when there is no such document).
pub fn run_json(command: &mut Command) -> (i32, Value) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not one JSON document ({e}): {stdout:?}; stderr: {}",
            String::from_utf8_lossy(&output.stderr)
        )
    });
    (output.status.code().unwrap_or(-1), json)
}

/// Runs `binary` with the whitespace-separated `line` and asserts the contract's answer to a
/// bad command line: exit status 2, `{"error": "bad command line: ..."}` naming `expect` on
/// stdout, clap's message (naming it too) on stderr.
pub fn assert_usage_error(binary: &str, line: &str, expect: &str) {
    let output = Command::new(binary)
        .args(line.split_whitespace())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {binary}: {e}"));
    assert_eq!(output.status.code(), Some(2), "{line}");
    let json: Value = serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|e| panic!("{line}: stdout is not one JSON document: {e}"));
    let error = json["error"].as_str().unwrap_or_default();
    assert!(error.starts_with("bad command line: "), "{line}: {json}");
    assert!(
        error.contains(expect),
        "{line}: {expect:?} not in {error:?}"
    );
    assert_eq!(json.as_object().map(|o| o.len()), Some(1), "{json}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(expect), "{line}: {stderr}");
}
