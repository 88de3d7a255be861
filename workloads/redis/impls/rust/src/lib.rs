//! The `redis-rust` server as a library: the binary (`main.rs`) runs `server::Server`, and the
//! fuzz target (`fuzz/`) drives `protocol::request` directly, in memory.
//!
//! Layout, one concept per module:
//! - `protocol`: request parsing (multibulk and inline) and reply encoding;
//! - `store`: the keyspace (sixteen databases, typed values, expiry);
//! - `commands`: the dispatch table and one file per data type;
//! - `connection`: a client's buffers, pipelining and output limits;
//! - `server`: the single-threaded mio/epoll event loop;
//! - `numeric`, `long_double`, `globmatch`: redis's exact number formats and pattern matching.

mod commands;
mod connection;
mod globmatch;
mod long_double;
mod numeric;
pub mod protocol;
pub mod server;
mod store;
