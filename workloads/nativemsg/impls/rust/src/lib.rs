//! The `nativemsg-rust` host as a library: the binary (`main.rs`) runs `host::run` on the
//! process's stdin and stdout, and the fuzz target (`fuzz/`) runs `host::serve` in memory.
//!
//! - `framing`: the 4-byte length prefix, the caps and the EOF rules;
//! - `protocol`: one request body in, one reply body out (`ping`, `echo`, `fill`, errors);
//! - `host`: the read–answer–write loop and the exit status.

pub mod framing;
pub mod host;
pub mod protocol;
