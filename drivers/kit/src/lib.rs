//! The msgbench driver kit: what every Rust driver shares, so that a driver holds only what is
//! its workload's own (docs/driver-contract.md).
//!
//! - [`args`]: the contract's common command line (`--driver-cpus`, `--impl-cpus`,
//!   `--impl-stderr`, `--timeout-s`, `--impl-cwd`, `--port`, `--client-json`, `-- IMPL_ARGV`).
//! - [`affinity`]: CPU sets and pinning with `sched_setaffinity(2)`.
//! - [`process`]: starting the implementation pinned, reaping it within a bound, describing
//!   how it ended, stopping it with SIGTERM then SIGKILL.
//! - [`running`]: the implementation's long-lived process (a server, a node) while the trial
//!   measures it: its CPU clock and peak RSS, a check that it still runs, how it ended, its
//!   clean stop; every failure names it and its log.
//! - [`remote`]: the implementation on another host, started and measured by the host agent
//!   there (`--impl-agent`, docs/hosts.md).
//! - [`served`]: either of them behind one type, so a driver asks the same questions of both.
//! - [`client`]: running the implementation's own client program (`--client-json`) on the
//!   driver's side within the deadline, what it cost (wall time, wait4's user and system CPU)
//!   and the one JSON object it prints.
//! - [`clock`]: the one CPU clock (the process CPU clock while the process is alive) and the
//!   names of the methods a report may carry.
//! - [`memory`]: peak RSS (VmHWM).
//! - [`usage`]: the report's `impl` and `load_generator` objects and the CPU placement
//!   fields.
//! - [`percentiles`]: HdrHistogram latencies summarised as one serialisable struct.
//! - [`output`]: the `main` of a driver: parse, run, print one JSON document.
//! - [`error`]: the one error type.
//! - [`testing`]: assertions and helpers the drivers' tests share.

pub mod affinity;
pub mod args;
pub mod client;
pub mod clock;
pub mod error;
pub mod memory;
pub mod output;
pub mod percentiles;
pub mod poll;
pub mod process;
pub mod remote;
pub mod running;
pub mod served;
pub mod testing;
pub mod usage;

pub use args::{CommonArgs, CpuList};
pub use error::{Failure, Result};
