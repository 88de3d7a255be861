//! mini-redis (the tokio-rs teaching server, seed 002's Rust system) in the lab's command line.
//!
//! This is what the crate's own `mini-redis-server` binary does — a Tokio multi-threaded
//! runtime, tracing's fmt subscriber, a listener on 127.0.0.1, `mini_redis::server::run` — with
//! the lab's contract instead of its structopt parser: `--port N` is required, `--host ADDR` (an
//! IPv4 address literal, default 127.0.0.1) is where it listens, a bad command line exits with
//! status 2, and SIGTERM (how the harness stops a server) ends it as gracefully as Ctrl-C does.
//! The accept loop, the 250-connection limit, the parser, the store and the commands are the
//! crate's, untouched.

use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;

use mini_redis::server;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

const USAGE: &str = "usage: redis-mini-redis --port N [--host ADDR]";

/// The address of `--port N [--host ADDR]` (either may be `--flag=value`, in either order);
/// None for anything else. The host is an IPv4 literal: not a name, not "".
fn parse_args(args: &[String]) -> Option<SocketAddr> {
    let mut port: Option<u16> = None;
    let mut host = Ipv4Addr::LOCALHOST;
    let mut it = args.iter();
    while let Some(arg) = it.next() {
        let (flag, value) = match arg.split_once('=') {
            Some((flag, value)) => (flag, value),
            None => (arg.as_str(), it.next()?.as_str()),
        };
        match flag {
            "--port" => port = Some(value.parse().ok()?),
            "--host" => host = value.parse().ok()?,
            _ => return None,
        }
    }
    Some(SocketAddr::from((host, port?)))
}

/// Resolves at SIGTERM or SIGINT, whichever comes first.
async fn stop_signal() {
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("redis-mini-redis: cannot watch SIGTERM: {e}");
            return std::future::pending().await;
        }
    };
    tokio::select! {
        _ = term.recv() => {}
        _ = tokio::signal::ctrl_c() => {}
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(addr) = parse_args(&args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    // As mini-redis-server does; a second subscriber (none here) would make this fail.
    let _ = tracing_subscriber::fmt::try_init();
    let listener = match TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("redis-mini-redis: cannot listen on {addr}: {e}");
            return ExitCode::from(1);
        }
    };
    match server::run(listener, stop_signal()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("redis-mini-redis: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_args;

    fn parse(a: &[&str]) -> Option<String> {
        let args: Vec<String> = a.iter().map(|s| s.to_string()).collect();
        parse_args(&args).map(|addr| addr.to_string())
    }

    #[test]
    fn port_forms() {
        assert_eq!(parse(&["--port", "6380"]).unwrap(), "127.0.0.1:6380");
        assert_eq!(parse(&["--port=6381"]).unwrap(), "127.0.0.1:6381");
        assert_eq!(parse(&[]), None);
        assert_eq!(parse(&["--port"]), None);
        assert_eq!(parse(&["--port", "70000"]), None);
        assert_eq!(parse(&["--bind", "x"]), None);
    }

    #[test]
    fn host_forms() {
        assert_eq!(
            parse(&["--host", "127.0.0.2", "--port", "6380"]).unwrap(),
            "127.0.0.2:6380"
        );
        assert_eq!(
            parse(&["--port=6381", "--host=0.0.0.0"]).unwrap(),
            "0.0.0.0:6381"
        );
        for bad in ["", "nope", "300.1.1.1", "::1"] {
            assert_eq!(parse(&["--port", "1", "--host", bad]), None, "{bad:?}");
        }
        assert_eq!(parse(&["--host", "127.0.0.2"]), None);
        assert_eq!(parse(&["--port", "1", "--host"]), None);
    }
}
