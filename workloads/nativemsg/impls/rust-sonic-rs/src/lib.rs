//! The `nativemsg-rust-sonic-rs` host as a library: the binary (`main.rs`) runs `host::run` on
//! the process's stdin and stdout, and the fuzz target (`fuzz/`) runs `host::serve` in memory.
//!
//! - `framing`: the rust host's own module (`../rust/src/framing.rs`, through its crate): the
//!   4-byte length prefix, the caps and the EOF rules do not depend on the JSON library;
//! - `protocol`: one request body in, one reply body out, on sonic-rs, with a nesting guard;
//! - `host`: the read–answer–write loop and the exit status.

pub use nativemsg_rust::framing;
pub mod host;
pub mod protocol;
