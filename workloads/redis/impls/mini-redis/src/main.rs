//! mini-redis (the tokio-rs teaching server, seed 002's Rust system) in the lab's command line.
//!
//! This is what the crate's own `mini-redis-server` binary does — a Tokio multi-threaded
//! runtime, tracing's fmt subscriber, a listener on 127.0.0.1, `mini_redis::server::run` — with
//! the lab's contract instead of its structopt parser: `--port N` is required, a bad command
//! line exits with status 2, and SIGTERM (how the harness stops a server) ends it as gracefully
//! as Ctrl-C does. The accept loop, the 250-connection limit, the parser, the store and the
//! commands are the crate's, untouched.

use std::process::ExitCode;

use mini_redis::server;
use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

const USAGE: &str = "usage: redis-mini-redis --port N";

/// The port of `--port N` (or `--port=N`), the only argument; None for anything else.
fn parse_port(args: &[String]) -> Option<u16> {
    match args {
        [flag, value] if flag == "--port" => value.parse().ok(),
        [one] => one.strip_prefix("--port=")?.parse().ok(),
        _ => None,
    }
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
    let Some(port) = parse_port(&args) else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    // As mini-redis-server does; a second subscriber (none here) would make this fail.
    let _ = tracing_subscriber::fmt::try_init();
    let listener = match TcpListener::bind(("127.0.0.1", port)).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("redis-mini-redis: cannot listen on 127.0.0.1:{port}: {e}");
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
    use super::parse_port;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn port_forms() {
        assert_eq!(parse_port(&args(&["--port", "6380"])), Some(6380));
        assert_eq!(parse_port(&args(&["--port=6381"])), Some(6381));
        assert_eq!(parse_port(&args(&[])), None);
        assert_eq!(parse_port(&args(&["--port"])), None);
        assert_eq!(parse_port(&args(&["--port", "70000"])), None);
        assert_eq!(parse_port(&args(&["--bind", "x"])), None);
    }
}
