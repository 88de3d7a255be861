//! `echonet-rust-controller [OPTIONS] COMMAND ARGS...`: the ECHONET Lite controller of
//! SPEC §8 — one-shot requests, discovery and the seed's benchmark loop.
//!
//! Success: exit 0 and one JSON object on stdout. A request left unanswered or a wrong
//! reply: exit 1 and `{"error": "..."}` on stdout. Bad command line: exit 2 and a message on
//! stderr. Nothing else is written to stdout.

use echonet_rust::controller::{Answer, Controller, Request};
use echonet_rust::frame::{esv, Eoj, Properties, Property};
use echonet_rust::options::{
    from_command_line, parse_controller, BenchMode, Command, ControllerOptions, SetProperty,
    CONTROLLER_USAGE,
};
use echonet_rust::transport::Endpoint;
use serde::Serialize;
use std::io::Write;
use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::time::{Duration, Instant};

const NAME: &str = "echonet-rust-controller";

/// The node profile's 12 implementation-required properties, in the seed's order.
const PROFILE_EPCS: [u8; 12] = [
    0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7,
];

fn main() -> ExitCode {
    let options = match from_command_line(NAME, CONTROLLER_USAGE, parse_controller) {
        Ok(options) => options,
        Err(status) => return status,
    };
    match run(options) {
        Ok(json) => {
            say(&json);
            ExitCode::SUCCESS
        }
        Err(msg) => {
            say(&serde_json::json!({ "error": msg }).to_string());
            ExitCode::from(1)
        }
    }
}

/// Runs the command; its JSON on success, the error's text otherwise.
fn run(options: ControllerOptions) -> Result<String, String> {
    let t = options.transport;
    let endpoint =
        Endpoint::bind(t).map_err(|e| format!("cannot bind {}:{}: {e}", t.bind, t.port))?;
    let mut ctl = Controller::new(endpoint, options.timeout, options.retries);
    let json = match options.command {
        Command::Get { host, eoj, epcs } => one(&mut ctl, request(host, eoj, esv::GET, &[], &epcs)),
        Command::InfReq { host, eoj, epcs } => {
            one(&mut ctl, request(host, eoj, esv::INF_REQ, &[], &epcs))
        }
        Command::SetC { host, eoj, sets } => {
            let sets = properties(&sets);
            one(&mut ctl, request(host, eoj, esv::SETC, &sets, &[]))
        }
        Command::SetGet {
            host,
            eoj,
            sets,
            epcs,
        } => {
            let sets = properties(&sets);
            one(&mut ctl, request(host, eoj, esv::SETGET, &sets, &epcs))
        }
        Command::SetI { host, eoj, sets } => {
            let sets = properties(&sets);
            set_i(&mut ctl, request(host, eoj, esv::SETI, &sets, &[]))
        }
        Command::Discover { expect, wait } => discover(&mut ctl, expect, wait),
        Command::Bench {
            host,
            mode,
            iterations,
            warmup,
        } => bench(&mut ctl, host, mode, iterations, warmup),
    }?;
    serde_json::to_string(&json).map_err(|e| e.to_string())
}

fn request<'r>(
    host: Ipv4Addr,
    deoj: Eoj,
    esv: u8,
    sets: &'r [Property<'r>],
    epcs: &'r [u8],
) -> Request<'r> {
    Request {
        host,
        deoj,
        esv,
        sets,
        epcs,
    }
}

fn properties(sets: &[SetProperty]) -> Vec<Property<'_>> {
    sets.iter()
        .map(|s| Property {
            epc: s.epc,
            edt: &s.edt,
        })
        .collect()
}

/// Lower-case hex.
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[derive(Serialize)]
struct PropertyOut {
    epc: String,
    edt: String,
}

fn list(props: Properties<'_>) -> Vec<PropertyOut> {
    props
        .iter()
        .map(|p| PropertyOut {
            epc: hex(&[p.epc]),
            edt: hex(p.edt),
        })
        .collect()
}

/// A reply as SPEC §8 prints it (`esv` and the objects null for a SetI nobody refused).
#[derive(Serialize)]
struct ReplyOut {
    host: String,
    tid: String,
    seoj: Option<String>,
    deoj: Option<String>,
    esv: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    properties: Option<Vec<PropertyOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    set: Option<Vec<PropertyOut>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    get: Option<Vec<PropertyOut>>,
    attempts: u32,
    ignored: u64,
}

#[derive(Serialize)]
#[serde(untagged)]
enum Output {
    Reply(ReplyOut),
    Discovery(DiscoveryOut),
    Bench(BenchOut),
}

fn reply_out(answer: &Answer<'_>) -> ReplyOut {
    let f = &answer.frame;
    let (properties, set, get) = if esv::is_setget(f.esv) {
        (None, Some(list(f.props)), Some(list(f.get_props)))
    } else {
        (Some(list(f.props)), None, None)
    };
    ReplyOut {
        host: answer.host.to_string(),
        tid: hex(&f.tid),
        seoj: Some(hex(&f.seoj.to_bytes())),
        deoj: Some(hex(&f.deoj.to_bytes())),
        esv: Some(hex(&[f.esv])),
        properties,
        set,
        get,
        attempts: answer.attempts,
        ignored: answer.ignored,
    }
}

/// One request with retries; its reply (a refusal is a reply too).
fn one(ctl: &mut Controller, req: Request<'_>) -> Result<Output, String> {
    let answer = ctl.request(&req).map_err(|e| e.to_string())?;
    Ok(Output::Reply(reply_out(&answer)))
}

/// One SetI, sent once: a SetI_SNA if one comes within the timeout, else `"esv": null`.
fn set_i(ctl: &mut Controller, req: Request<'_>) -> Result<Output, String> {
    let tid = ctl.next_tid();
    let answer = ctl.request_once(&req).map_err(|e| e.to_string())?;
    let out = match answer {
        Some(answer) => reply_out(&answer),
        None => ReplyOut {
            host: req.host.to_string(),
            tid: hex(&tid),
            seoj: None,
            deoj: None,
            esv: None,
            properties: Some(Vec::new()),
            set: None,
            get: None,
            attempts: 1,
            ignored: ctl.ignored,
        },
    };
    Ok(Output::Reply(out))
}

#[derive(Serialize)]
struct NodeOut {
    host: String,
    eoj: String,
    instances: Vec<String>,
}

#[derive(Serialize)]
struct DiscoveryOut {
    nodes: Vec<NodeOut>,
    elapsed_s: f64,
    attempts: u32,
    ignored: u64,
}

fn discover(ctl: &mut Controller, expect: Option<usize>, wait: Duration) -> Result<Output, String> {
    let found = ctl.discover(expect, wait).map_err(|e| e.to_string())?;
    Ok(Output::Discovery(DiscoveryOut {
        nodes: found
            .nodes
            .iter()
            .map(|n| NodeOut {
                host: n.host.to_string(),
                eoj: hex(&n.eoj.to_bytes()),
                instances: n.instances.iter().map(|e| hex(&e.to_bytes())).collect(),
            })
            .collect(),
        elapsed_s: found.elapsed.as_secs_f64(),
        attempts: found.attempts,
        ignored: ctl.ignored,
    }))
}

#[derive(Serialize)]
struct BenchOut {
    mode: &'static str,
    iterations: u64,
    requests: u64,
    elapsed_s: f64,
    retries: u64,
    ignored: u64,
}

/// The seed's loop (SPEC §8): `warmup` uncounted iterations, then `iterations` timed ones;
/// every reply checked.
fn bench(
    ctl: &mut Controller,
    host: Ipv4Addr,
    mode: BenchMode,
    iterations: u64,
    warmup: u64,
) -> Result<Output, String> {
    let per_iteration = match mode {
        BenchMode::Faithful => PROFILE_EPCS.len() as u64,
        BenchMode::Batched => 1,
    };
    let run = |ctl: &mut Controller, n: u64| -> Result<(), String> {
        for _ in 0..n {
            match mode {
                BenchMode::Faithful => {
                    for epc in PROFILE_EPCS {
                        checked_get(ctl, host, &[epc])?;
                    }
                }
                BenchMode::Batched => checked_get(ctl, host, &PROFILE_EPCS)?,
            }
        }
        Ok(())
    };
    run(ctl, warmup)?;
    let (resends, ignored) = (ctl.resends, ctl.ignored);
    let start = Instant::now();
    run(ctl, iterations)?;
    let elapsed = start.elapsed();
    Ok(Output::Bench(BenchOut {
        mode: mode.name(),
        iterations,
        requests: iterations.saturating_mul(per_iteration),
        elapsed_s: elapsed.as_secs_f64(),
        retries: ctl.resends - resends,
        ignored: ctl.ignored - ignored,
    }))
}

/// One Get of the node profile whose reply must be a Get_Res with the EPCs asked, in order.
fn checked_get(ctl: &mut Controller, host: Ipv4Addr, epcs: &[u8]) -> Result<(), String> {
    let req = request(host, Eoj::NODE_PROFILE, esv::GET, &[], epcs);
    let answer = ctl.request(&req).map_err(|e| e.to_string())?;
    let f = answer.frame;
    if f.esv != esv::GET_RES {
        return Err(format!(
            "wrong reply from {host}: ESV {:02x}, expected 72",
            f.esv
        ));
    }
    if !f.props.iter().map(|p| p.epc).eq(epcs.iter().copied()) {
        return Err(format!(
            "wrong reply from {host}: EPCs {}, expected {}",
            hex(&f.props.iter().map(|p| p.epc).collect::<Vec<_>>()),
            hex(epcs)
        ));
    }
    Ok(())
}

/// Writes a line on stdout and flushes it (errors ignored: there is nobody left to tell).
fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}
