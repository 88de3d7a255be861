//! The drivers' one error type: a failed trial, described for the person reading the results.
//!
//! Every failure ends the same way (`{"error": "..."}` on stdout, a non-zero exit status), so a
//! message is all the structure a driver needs; what matters is that it says what was expected
//! and what came, and where.

use std::fmt;

/// A trial that cannot produce a trustworthy measurement.
#[derive(Debug)]
pub struct Failure(String);

impl Failure {
    pub fn new(message: impl Into<String>) -> Self {
        Failure(message.into())
    }

    /// Prefixes the message with where it happened, e.g. "op 17 of 100".
    pub fn context(self, what: impl fmt::Display) -> Self {
        Failure(format!("{what}: {}", self.0))
    }

    /// Appends what else is known, e.g. how the implementation ended.
    pub fn also(self, more: impl fmt::Display) -> Self {
        Failure(format!("{}; {more}", self.0))
    }

    pub fn message(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

pub type Result<T> = std::result::Result<T, Failure>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_and_additions_compose_in_reading_order() {
        let failure = Failure::new("no reply")
            .context("op 3 of 10")
            .also("the host exited with status 1");
        assert_eq!(
            failure.message(),
            "op 3 of 10: no reply; the host exited with status 1"
        );
        assert_eq!(failure.to_string(), failure.message());
    }
}
