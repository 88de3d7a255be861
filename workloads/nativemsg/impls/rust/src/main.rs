//! `nativemsg-rust`: a browser Native Messaging host for the msgbench `nativemsg` workload.
//!
//! The browser passes the caller's origin (Chromium) or a manifest path and extension id
//! (Firefox) as arguments; the protocol needs none of them, so argv is ignored. The host's
//! modules live in the library (`lib.rs`).

fn main() -> std::process::ExitCode {
    nativemsg_rust::host::run()
}
