//! `redis-rust`: a Redis-protocol (RESP2) key-value server for the msgbench `redis` workload.
//! The modules live in the library (`lib.rs`); this file parses the command line and runs the
//! event loop.
//!
//! Usage: `redis-rust --port PORT [--host ADDR]`. Listens on ADDR:PORT only (`--host`: an IPv4
//! address literal, default 127.0.0.1); SIGTERM or SIGINT exits 0.

use redis_rust::server;
use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// Listen backlog: every redis-benchmark test reconnects its 50–1,000 clients at once.
const BACKLOG: i32 = 4096;

fn usage(msg: &str) -> ExitCode {
    eprintln!("redis-rust: {msg} (usage: redis-rust --port PORT [--host ADDR])");
    ExitCode::from(2)
}

/// The listening address from `--port PORT [--host ADDR]` (in either order).
fn parse_args(args: &[String]) -> Result<SocketAddr, String> {
    let mut port = None;
    let mut host = Ipv4Addr::LOCALHOST;
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = match (flag.as_str(), it.next()) {
            ("--port" | "--host", Some(value)) => value,
            _ => return Err(format!("unexpected arguments {args:?}")),
        };
        if flag == "--port" {
            match value.parse::<u16>() {
                Ok(p) if p > 0 => port = Some(p),
                _ => return Err(format!("bad port '{value}'")),
            }
        } else {
            // An IPv4 literal only: no names, and not "" (which many APIs take as "any address").
            host = value
                .parse()
                .map_err(|_| format!("bad host '{value}' (an IPv4 address)"))?;
        }
    }
    let port = port.ok_or("--port is required")?;
    Ok(SocketAddr::from((host, port)))
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

fn listen(addr: SocketAddr) -> std::io::Result<std::net::TcpListener> {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::IPV4, Type::STREAM, None)?;
    socket.set_reuse_address(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(BACKLOG)?;
    Ok(socket.into())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let addr = match parse_args(&args) {
        Ok(a) => a,
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
    let listener = match listen(addr) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("redis-rust: cannot listen on {addr}: {e}");
            return ExitCode::from(1);
        }
    };
    let mut server = match server::Server::new(listener, addr.port(), shutdown) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<SocketAddr, String> {
        parse_args(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn port_and_host() {
        assert_eq!(
            parse(&["--port", "6380"]),
            Ok("127.0.0.1:6380".parse().unwrap())
        );
        assert_eq!(
            parse(&["--host", "127.0.0.2", "--port", "6380"]),
            Ok("127.0.0.2:6380".parse().unwrap())
        );
        for bad in [
            &[][..],
            &["--port"],
            &["--port", "0"],
            &["--port", "x"],
            &["--host", "127.0.0.2"],
            &["--port", "1", "--host", ""],
            &["--port", "1", "--host", "nope"],
            &["--port", "1", "--host", "300.1.1.1"],
            &["--port", "1", "--bind", "127.0.0.1"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
