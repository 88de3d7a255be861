//! `nativemsg-rust-sonic-rs`: the msgbench `nativemsg` host on sonic-rs.
//!
//! The browser passes the caller's origin (Chromium) or a manifest path and extension id
//! (Firefox) as arguments; the protocol needs none of them, so argv is ignored. The host's
//! modules live in the library (`lib.rs`).

fn main() -> std::process::ExitCode {
    nativemsg_rust_sonic_rs::host::run()
}
