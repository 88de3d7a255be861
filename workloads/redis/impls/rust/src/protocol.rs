//! RESP2, the Redis serialization protocol: parsing requests and encoding replies.
//!
//! - `request`: the incremental request parser (multibulk arrays and inline commands), with
//!   redis 7.0's limits and its exact protocol-error messages.
//! - `inline`: splitting an inline command line into arguments, quotes and escapes included.
//! - `reply`: appending replies (`+OK`, `:1`, `$3 foo`, `*2 …`) to a client's output buffer.

pub mod inline;
pub mod reply;
pub mod request;
#[cfg(test)]
#[path = "tests/protocol.rs"]
mod tests;
