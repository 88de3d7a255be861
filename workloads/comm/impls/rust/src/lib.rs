//! `comm-rust`: the Rust implementation of the msgbench `comm` workload (CommCompare's
//! message-passing communicator; contract in `workloads/comm/SPEC.md`).
//!
//! - [`frame`]: the wire format (9-byte header) and the body-length cap;
//! - [`handler`]: the per-connection echo and session rules (END, QUIT, EOF, the cap);
//! - [`listener`]: the accept thread and the worker pool (a mio event loop per worker);
//! - [`connector`]: the client (send queue + send thread, receive thread + receive queue);
//! - [`pattern`]: the lab's test-body pattern, used by the client program and the tests.

pub mod connector;
pub mod frame;
pub mod handler;
pub mod listener;
pub mod pattern;
