//! `echonet-rust`: the Rust implementation of the msgbench `echonet` workload, an ECHONET Lite
//! node and controller over UDP (contract in `workloads/echonet/SPEC.md`).
//!
//! - [`frame`]: the wire format (decode with bounds checks, encode, ESV and EOJ constants);
//! - [`propmap`]: property maps (list and bitmap forms);
//! - [`objects`]: the node profile and the air conditioner, their values and Set rules;
//! - [`responder`]: one request in, the reply (or none) out; the node's counters;
//! - [`transport`]: the UDP socket (bind, multicast interface and group, send, receive);
//! - [`controller`]: requests matched to replies, timeouts and resends, discovery;
//! - [`options`]: the command lines of both programs.

pub mod controller;
pub mod frame;
pub mod objects;
pub mod options;
pub mod propmap;
pub mod responder;
pub mod transport;
