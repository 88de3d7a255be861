//! `comm-rust-server --port PORT [--host ADDR] [--pool N] [--max-body BYTES]`: the echo server.
//!
//! Listens on ADDR:PORT and only there (`--host`: an IPv4 address literal, default 127.0.0.1);
//! every message comes back as `REPLY` (SPEC.md §2). SIGTERM or SIGINT: stop accepting, close
//! every connection, exit 0. Bad arguments: one line on stderr, exit 2.

use comm_rust::frame::{DEFAULT_MAX_BODY, MAX_MAX_BODY};
use comm_rust::listener::{Config, Listener};
use std::net::{Ipv4Addr, SocketAddr};
use std::process::ExitCode;

const USAGE: &str =
    "usage: comm-rust-server --port PORT [--host ADDR] [--pool N] [--max-body BYTES]";

struct Args {
    host: Ipv4Addr,
    port: u16,
    config: Config,
}

fn parse_args(args: &[String]) -> Result<Args, String> {
    let mut port = None;
    let mut host = Ipv4Addr::LOCALHOST;
    let mut config = Config {
        pool: 8,
        max_body: DEFAULT_MAX_BODY,
    };
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))?
            .as_str();
        match flag.as_str() {
            // An IPv4 literal only: no names, and not "" (which many APIs take as "any address").
            "--host" => {
                host = value
                    .parse()
                    .map_err(|_| format!("bad --host '{value}' (an IPv4 address)"))?
            }
            "--port" => match value.parse::<u16>() {
                Ok(p) if p > 0 => port = Some(p),
                _ => return Err(format!("bad --port '{value}'")),
            },
            "--pool" => match value.parse::<usize>() {
                Ok(n) if (1..=4096).contains(&n) => config.pool = n,
                _ => return Err(format!("bad --pool '{value}' (1..4096)")),
            },
            "--max-body" => match value.parse::<u64>() {
                Ok(n) if n <= MAX_MAX_BODY => config.max_body = n,
                _ => return Err(format!("bad --max-body '{value}'")),
            },
            _ => return Err(format!("unknown argument '{flag}'")),
        }
    }
    let port = port.ok_or("--port is required")?;
    Ok(Args { host, port, config })
}

/// Raises the soft open-files limit to the hard limit, so hundreds of clients fit.
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

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&args) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("comm-rust-server: {msg} ({USAGE})");
            return ExitCode::from(2);
        }
    };
    raise_fd_limit();
    let addr = SocketAddr::from((args.host, args.port));
    let listener = match Listener::bind(addr, args.config) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("comm-rust-server: cannot listen on {addr}: {e}");
            return ExitCode::from(1);
        }
    };
    // Signals are taken on a thread of their own and turned into a stop of the listener.
    let stopper = listener.stopper();
    let signals = signal_hook::iterator::Signals::new([
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGINT,
    ]);
    match signals {
        Ok(mut signals) => {
            std::thread::spawn(move || {
                if signals.forever().next().is_some() {
                    stopper.stop();
                }
            });
        }
        Err(e) => {
            eprintln!("comm-rust-server: cannot install signal handlers: {e}");
            return ExitCode::from(1);
        }
    }
    match listener.run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("comm-rust-server: {e}");
            ExitCode::from(1)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, String> {
        parse_args(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn defaults_and_flags() {
        let a = parse(&["--port", "7750"]).unwrap();
        assert_eq!(
            (a.port, a.config.pool, a.config.max_body),
            (7750, 8, 1 << 26)
        );
        let a = parse(&["--max-body", "10", "--port", "1", "--pool", "2"]).unwrap();
        assert_eq!((a.port, a.config.pool, a.config.max_body), (1, 2, 10));
        assert_eq!(a.host, Ipv4Addr::LOCALHOST);
        let a = parse(&["--port", "1", "--host", "127.0.0.2"]).unwrap();
        assert_eq!(a.host, Ipv4Addr::new(127, 0, 0, 2));
        assert_eq!(
            parse(&["--host", "0.0.0.0", "--port", "1"]).unwrap().host,
            Ipv4Addr::UNSPECIFIED
        );
    }

    #[test]
    fn bad_arguments_are_rejected() {
        for bad in [
            &[][..],
            &["--port"],
            &["--port", "0"],
            &["--port", "70000"],
            &["--port", "x"],
            &["--port", "1", "--pool", "0"],
            &["--port", "1", "--max-body", "-1"],
            &["--port", "1", "--bogus", "1"],
            &["--port", "1", "--host"],
            &["--port", "1", "--host", ""],
            &["--port", "1", "--host", "nope"],
            &["--port", "1", "--host", "300.1.1.1"],
            &["--port", "1", "--host", "::1"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }
}
