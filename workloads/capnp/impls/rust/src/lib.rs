//! `capnp-rust`: the Rust implementation of the msgbench `capnp` workload, the Cap'n Proto
//! carsales / catrank / eval benchmarks with the `capnp` crate (contract in
//! `workloads/capnp/SPEC.md`).
//!
//! - [`rng`]: the xorshift128 generator of the requests (§3.1);
//! - [`carsales`], [`catrank`], [`eval`]: each case's request, server and check (§3.2-3.4);
//! - [`stream`]: messages on a pipe, with the reading limits of §6, packed or not;
//! - [`modes`]: the iteration loops of every mode, timed (§4, §5).
//!
//! The command line, the report's JSON and the exit statuses are the binary's (`main.rs`).

pub mod carsales;
pub mod catrank;
pub mod eval;
pub mod modes;
pub mod rng;
pub mod stream;

// The code capnpc generates from ../../schema (build.rs). It refers to itself as
// `crate::<file>_capnp`, so the modules live at the crate's root; it is not ours to lint.
macro_rules! generated {
    ($name:ident, $file:literal) => {
        // Its text setters unwrap a copy that cannot fail; nothing else in it is checked here.
        #[allow(
            clippy::all,
            clippy::pedantic,
            clippy::unwrap_used,
            clippy::expect_used,
            clippy::panic,
            unused
        )]
        pub mod $name {
            include!(concat!(env!("OUT_DIR"), "/", $file));
        }
    };
}
generated!(carsales_capnp, "carsales_capnp.rs");
generated!(catrank_capnp, "catrank_capnp.rs");
generated!(eval_capnp, "eval_capnp.rs");

use std::fmt;

/// Why a run stops: the one line the program prints on stderr before exiting 1 (SPEC §5).
/// Built only on the failing path, so the loops pay nothing for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure(pub String);

impl Failure {
    /// The same failure, said to happen at `place` ("request 12", "reading a response", ...).
    #[must_use]
    pub fn at(self, place: impl fmt::Display) -> Failure {
        Failure(format!("{place}: {}", self.0))
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<capnp::Error> for Failure {
    fn from(e: capnp::Error) -> Self {
        Failure(e.to_string())
    }
}

impl From<capnp::NotInSchema> for Failure {
    fn from(e: capnp::NotInSchema) -> Self {
        Failure(capnp::Error::from(e).to_string())
    }
}

impl From<std::io::Error> for Failure {
    fn from(e: std::io::Error) -> Self {
        Failure(e.to_string())
    }
}

impl From<String> for Failure {
    fn from(s: String) -> Self {
        Failure(s)
    }
}
