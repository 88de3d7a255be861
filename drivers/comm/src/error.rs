//! The driver's one error type: a failed trial, described for the person reading the results.
//!
//! Every failure ends the same way (`{"error": "..."}` on stdout, exit status 1), so a message
//! is all the structure the driver needs; what matters is that it says what was expected and
//! what came, and where (which client, which message, which byte).

use std::fmt;

/// A trial that cannot produce a trustworthy measurement.
#[derive(Debug)]
pub struct Failure(String);

impl Failure {
    pub fn new(message: impl Into<String>) -> Self {
        Failure(message.into())
    }

    /// Prefixes the message with where it happened, e.g. "client 3".
    pub fn context(self, what: impl fmt::Display) -> Self {
        Failure(format!("{what}: {}", self.0))
    }

    /// Appends what else is known, e.g. how the server ended.
    pub fn add(self, more: impl fmt::Display) -> Self {
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
