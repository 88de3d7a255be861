//! The serve loop: read a frame, answer it, write the reply, repeat until EOF; and the exit
//! status that tells the browser how the stream ended.
//!
//! The loop, the stdio set-up and the error type are the rust host's (`../rust/src/host.rs`),
//! run with this crate's sonic-rs `protocol::respond` and its own heap thresholds.

use std::io::{Read, Write};
use std::process::ExitCode;

use nativemsg_rust::host::{self as rust_host, HeapTuning};

use crate::protocol;

pub use nativemsg_rust::host::HostError;

/// The glibc malloc thresholds, higher than the rust host's (its `HEAP`). Per message sonic-rs
/// allocates a copy of the request (512 KiB for echo-512k) and a node array of 8 bytes per
/// request byte (4 MiB), of which it touches a few pages. Blocks up to 16 MiB (requests up to
/// 2 MiB) come from the heap, so an echo-512k message makes no mmap/munmap pair (strace: one
/// pair per message at the rust host's 4 MiB threshold); up to 32 MiB of free heap stays
/// mapped, and only the pages once written count in RSS. Larger blocks (a 64 MiB request)
/// still go straight back.
pub const HEAP: HeapTuning = HeapTuning {
    mmap_threshold: 16 << 20,
    trim_threshold: 32 << 20,
};

/// Serves stdin/stdout until EOF: exit 0 on EOF at a frame boundary, 1 (with a message on
/// stderr, which the browser logs) on a broken stream.
pub fn run() -> ExitCode {
    rust_host::run_host("nativemsg-rust-sonic-rs", HEAP, protocol::respond)
}

/// Answers every frame of `input` on `output` until `input` ends, each reply written before
/// the next frame is read.
pub fn serve<R: Read, W: Write>(input: R, output: &mut W) -> Result<(), HostError> {
    rust_host::serve_with(input, output, protocol::respond)
}

#[cfg(test)]
mod tests {
    //! The rust host's serve-loop checks (`nativemsg_rust::host::loop_checks`) on this host's
    //! responder.

    nativemsg_rust::serve_loop_tests!(crate::protocol::respond);
}
