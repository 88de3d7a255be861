//! The counters a node prints as its last line after SIGTERM (SPEC §7), checked: every counter
//! present and a non-negative integer, `received` the sum of what became of each datagram, and
//! `requests` within what the driver knows the node must have served.

use serde_json::{Map, Value};

/// Every counter SPEC §7 names.
pub const FIELDS: [&str; 7] = [
    "received",
    "requests",
    "replies",
    "ignored",
    "dropped_malformed",
    "dropped_format2",
    "send_errors",
];

/// What the driver knows of the requests a node served.
#[derive(Clone, Copy, Debug, Default)]
pub struct Served {
    /// Requests the node answered correctly, as the driver saw: it served at least these.
    pub at_least: u64,
    /// Datagrams the driver sent it (retries included), if the driver sent them all: it
    /// cannot have served more.
    pub at_most: Option<u64>,
}

/// The counters of a node's last line, or what is wrong with them.
pub fn parse(line: &str, served: Served) -> Result<Map<String, Value>, String> {
    let counters = match serde_json::from_str(line) {
        Ok(Value::Object(map)) => map,
        Ok(_) => return Err("is JSON but not an object".to_string()),
        Err(e) => return Err(format!("is not JSON ({e})")),
    };
    let mut values = [0u64; FIELDS.len()];
    for (value, field) in values.iter_mut().zip(FIELDS) {
        *value = match counters.get(field) {
            None => return Err(format!("has no {field}")),
            Some(v) => v
                .as_u64()
                .ok_or_else(|| format!("has {field} = {v}, not a non-negative integer"))?,
        };
    }
    let [received, requests, _replies, ignored, malformed, format2, _errors] = values;
    let sum = [requests, ignored, malformed, format2]
        .iter()
        .try_fold(0u64, |sum, &n| sum.checked_add(n));
    if sum != Some(received) {
        return Err(format!(
            "says received = {received}, but requests + ignored + dropped_malformed + \
             dropped_format2 = {requests} + {ignored} + {malformed} + {format2}"
        ));
    }
    if requests < served.at_least {
        return Err(format!(
            "says requests = {requests}, but the driver got {} right replies from it",
            served.at_least
        ));
    }
    if let Some(sent) = served.at_most.filter(|&sent| requests > sent) {
        return Err(format!(
            "says requests = {requests}, but the driver sent it {sent} datagrams"
        ));
    }
    Ok(counters)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"received": 120016, "requests": 120000, "replies": 120000,
        "ignored": 2, "dropped_malformed": 12, "dropped_format2": 2, "send_errors": 0}"#;

    fn served(at_least: u64, at_most: Option<u64>) -> Served {
        Served { at_least, at_most }
    }

    #[test]
    fn the_spec_s_example_passes_whole() {
        let counters = parse(GOOD, served(120_000, Some(120_000))).unwrap();
        assert_eq!(counters.len(), 7);
        assert_eq!(counters["dropped_malformed"], 12);
        // Extra members are kept.
        let extra = GOOD.replace("\"send_errors\"", "\"threads\": 1, \"send_errors\"");
        assert_eq!(parse(&extra, Served::default()).unwrap()["threads"], 1);
    }

    #[test]
    fn misreports_are_named() {
        for (line, served, expect) in [
            ("x", Served::default(), "is not JSON"),
            ("[1]", Served::default(), "not an object"),
            (
                &GOOD.replace("\"send_errors\": 0", "\"errors\": 0"),
                Served::default(),
                "has no send_errors",
            ),
            (
                &GOOD.replace("\"replies\": 120000", "\"replies\": -1"),
                Served::default(),
                "replies = -1, not a non-negative integer",
            ),
            (
                &GOOD.replace("\"ignored\": 2", "\"ignored\": 2.5"),
                Served::default(),
                "ignored = 2.5",
            ),
            (
                &GOOD.replace("120016", "120017"),
                Served::default(),
                "received = 120017, but requests + ignored + dropped_malformed + \
                 dropped_format2 = 120000 + 2 + 12 + 2",
            ),
            (
                GOOD,
                served(120_001, None),
                "requests = 120000, but the driver got 120001 right replies",
            ),
            (
                GOOD,
                served(0, Some(119_999)),
                "the driver sent it 119999 datagrams",
            ),
        ] {
            let err = parse(line, served).unwrap_err();
            assert!(err.contains(expect), "{line}: {err}");
        }
        let huge = GOOD.replace("\"ignored\": 2", "\"ignored\": 18446744073709551615");
        assert!(parse(&huge, Served::default()).is_err());
    }
}
