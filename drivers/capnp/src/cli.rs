//! The driver's command line: the run the benchmark programs are asked for (SPEC §5's five
//! words, with the harness's mode names) and the contract's common arguments.

use clap::{Parser, ValueEnum};
use driver_kit::output::DriverArgs;
use driver_kit::CommonArgs;

/// The largest iteration count SPEC §5 allows.
pub const MAX_ITERATIONS: u64 = 1_000_000_000;

#[derive(Parser, Debug)]
#[command(
    name = "capnp-driver",
    about = "Runs one capnp benchmark trial: IMPL_ARGV CASE MODE REUSE COMPRESSION ITERS pinned \
             to --impl-cpus (object, bytes), or IMPL_ARGV as the server pinned there and the \
             client program (--client-json, default IMPL_ARGV) pinned to --driver-cpus, joined \
             by two pipes (pipe). Prints one JSON report (docs/driver-contract.md)."
)]
pub struct Args {
    /// The benchmark case
    #[arg(long = "case", value_enum)]
    pub case: Case,

    /// object and bytes run one process; pipe runs a server and a client
    #[arg(long, value_enum)]
    pub mode: Mode,

    /// Reuse each builder's first segment across iterations, or not
    #[arg(long, value_enum, default_value = "no-reuse")]
    pub reuse: Reuse,

    /// Cap'n Proto packing of the byte stream (object: none only)
    #[arg(long, value_enum, default_value = "none")]
    pub compression: Compression,

    /// Timed iterations (the program adds its warm-up, ITERS / 20)
    #[arg(long, value_name = "N")]
    pub iterations: u64,

    #[command(flatten)]
    pub common: CommonArgs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Case {
    Carsales,
    Catrank,
    Eval,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    Object,
    Bytes,
    Pipe,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Reuse {
    Reuse,
    NoReuse,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Compression {
    None,
    Packed,
}

/// The word a ValueEnum stands for on the programs' command line (its clap name).
pub fn word(value: &impl ValueEnum) -> String {
    value
        .to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

impl Args {
    /// The five words after the program: CASE MODE REUSE COMPRESSION ITERS, with `mode` as the
    /// program's mode word (object, bytes, client, server).
    pub fn program_words(&self, mode: &str) -> Vec<String> {
        vec![
            word(&self.case),
            mode.to_string(),
            word(&self.reuse),
            word(&self.compression),
            self.iterations.to_string(),
        ]
    }

    /// The warm-up the program runs before timing (SPEC §5).
    pub fn warmup(&self) -> u64 {
        self.iterations / 20
    }
}

impl DriverArgs for Args {
    fn validate(&self) -> Result<(), String> {
        self.common.validate()?;
        if !(1..=MAX_ITERATIONS).contains(&self.iterations) {
            return Err(format!(
                "--iterations must be 1..={MAX_ITERATIONS}, not {}",
                self.iterations
            ));
        }
        if self.mode == Mode::Object && self.compression != Compression::None {
            return Err("--mode object serialises nothing: --compression must be none".into());
        }
        Ok(())
    }
}
