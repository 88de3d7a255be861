//! `comm-rust-client`: the Connector's own load program (SPEC.md §3).
//!
//! `--mode stream` (the seed's Test4): every client posts all its messages without waiting
//! (a poster thread) while the client's own thread takes the replies and checks each one.
//! `--mode rtt` (the seed's test3): one message at a time, each round trip timed.
//! Prints one JSON object; any failure prints `{"error": ...}` and exits 1.

use comm_rust::connector::{Connector, Message, Options, SessionEnd};
use comm_rust::frame::{END, QUIT, REPLY};
use comm_rust::pattern::Pattern;
use std::net::{SocketAddr, ToSocketAddrs};
use std::process::ExitCode;
use std::sync::{mpsc, Arc, Barrier};
use std::time::Instant;

const USAGE: &str = "usage: comm-rust-client --port PORT [--host 127.0.0.1] [--clients N] \
                     [--messages M] [--size BYTES] [--type T] [--mode stream|rtt] \
                     [--end end|quit|eof] [--warmup W]";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Stream,
    Rtt,
}

#[derive(Debug)]
struct Args {
    host: String,
    port: u16,
    clients: u64,
    messages: u64,
    size: usize,
    kind: u8,
    mode: Mode,
    end: SessionEnd,
    /// rtt mode: round trips made first and not recorded.
    warmup: u64,
}

fn parse_args(argv: &[String]) -> Result<Args, String> {
    let mut a = Args {
        host: "127.0.0.1".to_string(),
        port: 0,
        clients: 16,
        messages: 1000,
        size: 4096,
        kind: 0,
        mode: Mode::Stream,
        end: SessionEnd::End,
        warmup: 0,
    };
    fn number<T: std::str::FromStr>(flag: &str, v: &str) -> Result<T, String> {
        v.parse().map_err(|_| format!("bad {flag} '{v}'"))
    }
    let mut it = argv.iter();
    while let Some(flag) = it.next() {
        let v = it
            .next()
            .ok_or_else(|| format!("{flag} needs a value"))?
            .as_str();
        match flag.as_str() {
            // The server's address (or name); "" would mean "this host, any address".
            "--host" if v.is_empty() => {
                return Err("bad --host '': expected the server's address".to_string())
            }
            "--host" => a.host = v.to_string(),
            "--port" => a.port = number(flag, v)?,
            "--clients" => a.clients = number(flag, v)?,
            "--messages" => a.messages = number(flag, v)?,
            "--size" => a.size = number(flag, v)?,
            "--type" => a.kind = number(flag, v)?,
            "--warmup" => a.warmup = number(flag, v)?,
            "--mode" => {
                a.mode = match v {
                    "stream" => Mode::Stream,
                    "rtt" => Mode::Rtt,
                    _ => return Err(format!("bad --mode '{v}'")),
                }
            }
            "--end" => {
                a.end = match v {
                    "end" => SessionEnd::End,
                    "quit" => SessionEnd::Quit,
                    "eof" => SessionEnd::Eof,
                    _ => return Err(format!("bad --end '{v}'")),
                }
            }
            _ => return Err(format!("unknown argument '{flag}'")),
        }
    }
    if a.port == 0 {
        return Err("--port is required".to_string());
    }
    if a.clients == 0 {
        return Err("--clients must be at least 1".to_string());
    }
    if a.kind == END || a.kind == QUIT {
        return Err(format!("--type {} would end the session", a.kind));
    }
    if a.size as u64 > comm_rust::frame::DEFAULT_MAX_BODY {
        return Err("--size is above the servers' default cap (64 MiB)".to_string());
    }
    Ok(a)
}

/// What one client measured.
struct Outcome {
    first_send: Instant,
    last_reply: Instant,
    /// Round-trip times in nanoseconds (rtt mode).
    latencies: Vec<u64>,
}

fn check(reply: &Message, expected: &[u8], c: u64, m: u64) -> Result<(), String> {
    if reply.kind != REPLY {
        return Err(format!(
            "client {c} message {m}: reply of type {}, expected {REPLY}",
            reply.kind
        ));
    }
    if reply.body.len() != expected.len() {
        return Err(format!(
            "client {c} message {m}: reply body of {} bytes, expected {}",
            reply.body.len(),
            expected.len()
        ));
    }
    // One memcmp; the byte-by-byte search only to report a mismatch.
    if reply.body != expected {
        let i = reply.body.iter().zip(expected).position(|(a, b)| a != b);
        return Err(format!(
            "client {c} message {m}: reply body differs at byte {}",
            i.unwrap_or(0)
        ));
    }
    Ok(())
}

fn next_reply(conn: &Connector, c: u64, m: u64, of: u64) -> Result<Message, String> {
    match conn.get() {
        Ok(Some(reply)) => Ok(reply),
        Ok(None) => Err(format!(
            "client {c}: connection closed after {m} of {of} replies"
        )),
        Err(e) => Err(format!("client {c}: receive: {e}")),
    }
}

/// After the last reply: the session ends with END or EOF, and nothing else.
fn expect_end(conn: &Connector, c: u64) -> Result<(), String> {
    match conn.get() {
        Ok(None) => Ok(()),
        Ok(Some(m)) if m.kind == END => Ok(()),
        Ok(Some(m)) => Err(format!(
            "client {c}: unexpected message of type {} after the last reply",
            m.kind
        )),
        Err(e) => Err(format!("client {c}: at the end of the session: {e}")),
    }
}

/// Test4: a poster thread sends everything; this thread checks the replies as they come.
/// The posters start together at `start_line`, once every thread exists, so the clock (from
/// the first post) does not count starting them (as the C++ client's latch does not).
fn stream_client(
    conn: Arc<Connector>,
    pattern: Arc<Pattern>,
    c: u64,
    a: &Args,
    start_line: Arc<Barrier>,
) -> Result<Outcome, String> {
    let (messages, kind, end) = (a.messages, a.kind, a.end);
    let poster = {
        let (conn, pattern) = (Arc::clone(&conn), Arc::clone(&pattern));
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || -> Result<Instant, String> {
                start_line.wait();
                let first_send = Instant::now();
                for m in 0..messages {
                    let mut body = conn.buffer();
                    body.extend_from_slice(pattern.body(c, m));
                    conn.post(Message::new(kind, body))
                        .map_err(|e| format!("client {c}: send: {e}"))?;
                }
                conn.close(end)
                    .map_err(|e| format!("client {c}: send: {e}"))?;
                Ok(first_send)
            })
            .map_err(|e| format!("client {c}: cannot start a thread: {e}"))?
    };
    for m in 0..messages {
        let reply = next_reply(&conn, c, m, messages)?;
        check(&reply, pattern.body(c, m), c, m)?;
        conn.release(reply.body);
    }
    let last_reply = Instant::now();
    expect_end(&conn, c)?;
    let first_send = poster
        .join()
        .map_err(|_| format!("client {c}: poster panicked"))??;
    Ok(Outcome {
        first_send,
        last_reply,
        latencies: Vec::new(),
    })
}

/// test3: post, wait for the reply, repeat; each round trip timed.
fn rtt_client(conn: &Connector, pattern: &Pattern, c: u64, a: &Args) -> Result<Outcome, String> {
    let mut latencies = Vec::with_capacity(a.messages as usize);
    let mut first_send = Instant::now();
    let total = a.warmup + a.messages;
    for m in 0..total {
        let t0 = Instant::now();
        if m == a.warmup {
            first_send = t0;
        }
        let mut body = conn.buffer();
        body.extend_from_slice(pattern.body(c, m));
        conn.post(Message::new(a.kind, body))
            .map_err(|e| format!("client {c}: send: {e}"))?;
        let reply = next_reply(conn, c, m, total)?;
        let rtt = t0.elapsed();
        check(&reply, pattern.body(c, m), c, m)?;
        conn.release(reply.body);
        if m >= a.warmup {
            latencies.push(rtt.as_nanos() as u64);
        }
    }
    let last_reply = Instant::now();
    conn.close(a.end)
        .map_err(|e| format!("client {c}: send: {e}"))?;
    expect_end(conn, c)?;
    Ok(Outcome {
        first_send,
        last_reply,
        latencies,
    })
}

/// Nearest-rank percentile of sorted nanoseconds, in microseconds.
fn percentile_us(sorted_ns: &[u64], q: f64) -> f64 {
    if sorted_ns.is_empty() {
        return 0.0;
    }
    let rank = (q * sorted_ns.len() as f64).ceil() as usize;
    sorted_ns[rank.clamp(1, sorted_ns.len()) - 1] as f64 / 1000.0
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for ch in s.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn report(a: &Args, outcomes: &[Outcome]) -> String {
    let first = outcomes
        .iter()
        .map(|o| o.first_send)
        .min()
        .expect("clients");
    let last = outcomes
        .iter()
        .map(|o| o.last_reply)
        .max()
        .expect("clients");
    let elapsed = last.duration_since(first).as_secs_f64().max(1e-9);
    let messages = a.clients * a.messages;
    let bytes = messages * a.size as u64;
    let mut json = format!(
        "{{\"mode\":\"{}\",\"clients\":{},\"messages\":{},\"size\":{},\"bytes\":{bytes},\
         \"elapsed_s\":{elapsed:.6},\"mb_per_s\":{:.3},\"msgs_per_s\":{:.3}",
        if a.mode == Mode::Stream {
            "stream"
        } else {
            "rtt"
        },
        a.clients,
        a.messages,
        a.size,
        bytes as f64 / 1e6 / elapsed,
        messages as f64 / elapsed,
    );
    if a.mode == Mode::Rtt {
        let mut all: Vec<u64> = outcomes
            .iter()
            .flat_map(|o| o.latencies.iter().copied())
            .collect();
        all.sort_unstable();
        json.push_str(&format!(
            ",\"latency_us\":{{\"p50\":{:.3},\"p90\":{:.3},\"p99\":{:.3},\"p999\":{:.3},\"max\":{:.3}}}",
            percentile_us(&all, 0.50),
            percentile_us(&all, 0.90),
            percentile_us(&all, 0.99),
            percentile_us(&all, 0.999),
            percentile_us(&all, 1.0),
        ));
    }
    json.push('}');
    json
}

fn run(a: &Args) -> Result<String, String> {
    let addr: SocketAddr = (a.host.as_str(), a.port)
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {}: {e}", a.host))?
        .next()
        .ok_or_else(|| format!("cannot resolve {}", a.host))?;
    // Queues deep enough to keep the pipe full (256 KiB of bodies, as much as a send batch),
    // shallow enough that the bodies in flight stay few and cache-warm: at 1 MiB per queue
    // (256 messages each way per client in Test4), faulting fresh pages in for them made
    // 0.45 page faults per message and cost a fifth more client CPU than 64 per queue.
    let options = Options {
        queue_depth: (256 * 1024 / a.size.max(1)).clamp(4, 256),
        ..Options::default()
    };
    let pattern = Arc::new(Pattern::new(a.size));
    // Every client connects before the clock starts.
    let mut conns = Vec::with_capacity(a.clients as usize);
    for c in 0..a.clients {
        let conn = Connector::connect(addr, options)
            .map_err(|e| format!("client {c}: connect {addr}: {e}"))?;
        conns.push(Arc::new(conn));
    }
    let args = Arc::new(Args {
        host: a.host.clone(),
        ..*a
    });
    let (results, outcomes) = mpsc::channel();
    // A failure to start a thread ends the process, so no poster waits here for ever.
    let start_line = Arc::new(Barrier::new(a.clients as usize));
    for (c, conn) in conns.into_iter().enumerate() {
        let (pattern, args, results) = (Arc::clone(&pattern), Arc::clone(&args), results.clone());
        let start_line = Arc::clone(&start_line);
        let c = c as u64;
        std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || {
                let outcome = match args.mode {
                    Mode::Stream => stream_client(conn, pattern, c, &args, start_line),
                    Mode::Rtt => rtt_client(&conn, &pattern, c, &args),
                };
                let _ = results.send(outcome);
            })
            .map_err(|e| format!("client {c}: cannot start a thread: {e}"))?;
    }
    drop(results);
    let mut done = Vec::with_capacity(a.clients as usize);
    // The first failure is the answer; threads still running are abandoned with the process.
    for outcome in outcomes.iter() {
        done.push(outcome?);
    }
    Ok(report(a, &done))
}

/// Keeps freed memory in the process. Each message's body is allocated by its poster thread
/// and freed by the connector's send thread (and replies the other way round), so glibc's
/// default of giving memory back to the kernel as soon as 128 KiB sit free at the top of an
/// arena made every burst fault fresh pages in again (about a tenth of the client's CPU
/// time in a 16-client Test4 profile: sysmalloc, page faults, page clearing, unmapping).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
fn tune_allocator() {
    const TRIM_THRESHOLD: libc::c_int = 256 << 20;
    const MMAP_THRESHOLD: libc::c_int = 32 << 20;
    // SAFETY: mallopt only sets allocator parameters: it takes two integers, touches no
    // memory of ours, is thread-safe, and runs before any other thread exists. A failure
    // (return 0) leaves glibc's defaults, which are correct, only slower.
    unsafe {
        libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
    }
}

/// Other allocators than glibc's keep their own policy.
#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
fn tune_allocator() {}

fn main() -> ExitCode {
    tune_allocator();
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse_args(&argv) {
        Ok(a) => a,
        Err(msg) => {
            eprintln!("comm-rust-client: {msg} ({USAGE})");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(json) => {
            println!("{json}");
            ExitCode::SUCCESS
        }
        Err(msg) => {
            println!("{{\"error\":{}}}", json_string(&msg));
            // Client threads may still be blocked on a broken connection: do not wait.
            std::process::exit(1);
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
    fn defaults_are_the_seeds_test4() {
        let a = parse(&["--port", "7750"]).unwrap();
        assert_eq!((a.clients, a.messages, a.size, a.kind), (16, 1000, 4096, 0));
        assert_eq!(
            (a.mode, a.end, a.host.as_str()),
            (Mode::Stream, SessionEnd::End, "127.0.0.1")
        );
        let a = parse(&["--host", "127.0.0.2", "--port", "7750"]).unwrap();
        assert_eq!((a.host.as_str(), a.port), ("127.0.0.2", 7750));
    }

    #[test]
    fn bad_arguments_are_rejected() {
        for bad in [
            &[][..],
            &["--port", "1", "--mode", "x"],
            &["--port", "1", "--end", "x"],
            &["--port", "1", "--type", "4"],
            &["--port", "1", "--type", "256"],
            &["--port", "1", "--clients", "0"],
            &["--port", "1", "--clients"],
            &["--port", "1", "--size", "-3"],
            &["--port", "1", "--host", ""],
            &["--port", "1", "--host"],
        ] {
            assert!(parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn percentiles_are_nearest_rank() {
        let ns: Vec<u64> = (1..=1000).map(|i| i * 1000).collect();
        assert_eq!(percentile_us(&ns, 0.5), 500.0);
        assert_eq!(percentile_us(&ns, 0.99), 990.0);
        assert_eq!(percentile_us(&ns, 0.999), 999.0);
        assert_eq!(percentile_us(&ns, 1.0), 1000.0);
        assert_eq!(percentile_us(&[], 0.5), 0.0);
    }

    #[test]
    fn error_strings_are_escaped() {
        assert_eq!(json_string("a\"b\\c\n"), "\"a\\\"b\\\\c\\u000a\"");
    }
}
