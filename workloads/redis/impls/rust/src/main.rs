//! `redis-rust`: a Redis-protocol (RESP2) key-value server for the msgbench `redis` workload.
//! The modules live in the library (`lib.rs`); this file parses the command line and runs the
//! event loop.
//!
//! Usage: `redis-rust --port PORT`. Listens on 127.0.0.1 only; SIGTERM or SIGINT exits 0.

use redis_rust::server;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Listen backlog: every redis-benchmark test reconnects its 50–1,000 clients at once.
const BACKLOG: i32 = 4096;

fn usage(msg: &str) -> ExitCode {
    eprintln!("redis-rust: {msg} (usage: redis-rust --port PORT)");
    ExitCode::from(2)
}

fn parse_port(args: &[String]) -> Result<u16, String> {
    match args {
        [flag, port] if flag == "--port" => match port.parse::<u16>() {
            Ok(p) if p > 0 => Ok(p),
            _ => Err(format!("bad port '{port}'")),
        },
        _ => Err(format!("unexpected arguments {args:?}")),
    }
}

/// Raises the soft open-files limit to the hard limit, so 1,000+ clients fit.
#[allow(unsafe_code)]
fn raise_fd_limit() {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed by pointer, which
    // lives on this stack frame for the duration of each call.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) == 0 && lim.rlim_cur < lim.rlim_max {
            lim.rlim_cur = lim.rlim_max;
            libc::setrlimit(libc::RLIMIT_NOFILE, &lim);
        }
    }
}

fn listen(port: u16) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let port = match parse_port(&args) {
        Ok(p) => p,
        Err(msg) => return usage(&msg),
    };
    raise_fd_limit();
    let shutdown = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        if let Err(e) = signal_hook::flag::register(sig, Arc::clone(&shutdown)) {
            eprintln!("redis-rust: cannot install signal handler: {e}");
            return ExitCode::from(1);
        }
    }
    let listener = match listen(port) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("redis-rust: cannot listen on 127.0.0.1:{port}: {e}");
            return ExitCode::from(1);
        }
    };
    let mut server = match server::Server::new(listener, port, shutdown) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("redis-rust: {e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = server.run() {
        eprintln!("redis-rust: event loop failed: {e}");
        return ExitCode::from(1);
    }
    // Exit without freeing the keyspace piece by piece: with millions of keys that alone
    // could take longer than the harness's one-second shutdown allowance. Sockets close with
    // the process.
    std::process::exit(0);
}
