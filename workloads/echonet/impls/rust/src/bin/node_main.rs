//! `echonet-rust-node [--bind IPV4] [--ifaddr IPV4] [--port N]`: the ECHONET Lite node of
//! SPEC §7.
//!
//! Binds one UDP socket, multicasts its start INF, prints `READY`, then reads datagrams one
//! by one and answers each as it goes until SIGTERM or SIGINT, when it prints its counters
//! as one line of JSON and exits 0. Bad command line: exit 2; a socket that cannot be set up
//! (address in use): exit 1.

use echonet_rust::frame::MAX_DATAGRAM;
use echonet_rust::options::{from_command_line, parse_node, NODE_USAGE};
use echonet_rust::responder::{Counters, Responder};
use echonet_rust::transport::{Config, Endpoint};
use std::io::Write;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

const NAME: &str = "echonet-rust-node";

/// Longest a blocked receive waits before looking at the stop flag again. A signal normally
/// interrupts the receive at once (a socket with a receive timeout is never restarted after
/// a signal); this bounds the wait when the signal lands between the check and the receive.
const WAKE_INTERVAL: Duration = Duration::from_millis(100);

/// TID of the start INF (the requester chooses TIDs; an announcement has no requester).
const ANNOUNCEMENT_TID: [u8; 2] = [0x00, 0x01];

fn main() -> ExitCode {
    let config = match from_command_line(NAME, NODE_USAGE, parse_node) {
        Ok(config) => config,
        Err(status) => return status,
    };
    match run(config) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("{NAME}: {msg}");
            ExitCode::from(1)
        }
    }
}

fn run(config: Config) -> Result<(), String> {
    // The flag is registered before READY, so a signal sent the moment READY is read is kept.
    let stop = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGTERM, signal_hook::consts::SIGINT] {
        signal_hook::flag::register(signal, Arc::clone(&stop))
            .map_err(|e| format!("cannot handle signal {signal}: {e}"))?;
    }
    let endpoint = Endpoint::bind(config)
        .map_err(|e| format!("cannot bind {}:{}: {e}", config.bind, config.port))?;
    if config.bind.is_unspecified() {
        // Without the group the node still answers unicast: worth a warning, not an exit.
        if let Err(e) = endpoint.join_group() {
            eprintln!(
                "{NAME}: cannot join 224.0.23.0 on {}: {e} (unicast only)",
                config.ifaddr
            );
        }
    }
    endpoint
        .set_read_timeout(Some(WAKE_INTERVAL))
        .map_err(|e| format!("cannot set the receive timeout: {e}"))?;

    let mut responder = Responder::new(config.ifaddr);
    let mut counters = Counters::default();
    let mut reply = Vec::with_capacity(MAX_DATAGRAM);
    responder.announcement(ANNOUNCEMENT_TID, &mut reply);
    if let Err(e) = endpoint.send_multicast(&reply) {
        counters.send_errors += 1;
        eprintln!("{NAME}: cannot send the start INF to 224.0.23.0: {e}");
    }
    say("READY");

    serve(&endpoint, &mut responder, &mut counters, &stop, &mut reply);

    let json = serde_json::to_string(&counters).map_err(|e| e.to_string())?;
    say(&json);
    Ok(())
}

/// The receive loop: one datagram at a time, each answered before the next is read, until
/// the stop flag is set. Nothing here allocates: one receive buffer and one reply buffer
/// serve every datagram.
fn serve(
    endpoint: &Endpoint,
    responder: &mut Responder,
    counters: &mut Counters,
    stop: &AtomicBool,
    reply: &mut Vec<u8>,
) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    while !stop.load(Ordering::Relaxed) {
        // Timeouts and EINTR bring the loop back to the flag; any other error (ECONNREFUSED
        // left by an earlier send, say) concerns no datagram and never ends the loop.
        let Ok((len, from)) = endpoint.recv_from(&mut buf) else {
            continue;
        };
        let outcome = responder.handle(&buf[..len], reply, |datagram| {
            counters.record_send(endpoint.send_to(datagram, from).is_ok());
        });
        counters.record(outcome);
    }
}

/// Writes a line on stdout and flushes it. A stdout nobody reads any more is no reason to
/// stop serving (nor to die of a panic), so write errors are ignored.
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}
