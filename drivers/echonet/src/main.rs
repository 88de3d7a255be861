//! echonet-driver: the neutral load driver of the `echonet` workload (workloads/echonet/SPEC.md
//! §9). One trial: enter the driver's network namespace if it has one, start the node(s)
//! pinned to the implementation CPUs (each in its namespace when asked), wait for `READY`,
//! load them from the driver CPUs as a controller that checks every reply byte (or run the
//! implementation's own controller), read what the load cost them, stop them with SIGTERM and
//! check their counters. Prints one JSON object: the results (exit 0), or `{"error": "..."}`
//! (exit 1).

mod bench;
mod cli;
mod counters;
mod discovery;
mod expected;
mod frame;
mod load;
mod netns;
mod node;
mod own;
mod report;
mod requester;
mod socket;

use cli::{Args, Mode};
use counters::Served;
use driver_kit::clock::own_cpu_time;
use driver_kit::error::{Failure, Result};
use driver_kit::process::raise_fd_limit;
use expected::{Exchange, INSTANCE_LIST, NODE_PROFILE_EPCS};
use netns::Netns;
use node::{Node, Placement, STOP_WAIT};
use report::{Loaded, NodesMeasure};
use requester::Requester;
use socket::{ControllerSocket, Patience};
use std::net::SocketAddrV4;
use std::process::ExitCode;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    driver_kit::output::main(run)
}

fn run(args: &Args) -> Result<report::Report> {
    // First of all, while the process has one thread and no socket: everything the driver
    // makes from here on lives in its namespace.
    if let Some(name) = &args.ctl_netns {
        Netns::open(name)?.enter()?;
    }
    let common = &args.common;
    let deadline = common.deadline()?;
    let impl_cpus = common.impl_set()?;
    // A socket per controller in load mode.
    raise_fd_limit().map_err(|e| Failure::new(format!("raising the open-file limit: {e}")))?;

    // The nodes first, so that without --impl-cpus they get the driver's original mask. All
    // start before any is awaited: 32 nodes start side by side.
    let mut nodes = Vec::new();
    for (i, &addr) in args.node_addrs.iter().enumerate() {
        let at = Placement {
            addr,
            netns: args.node_netns(i),
            port: args.port(),
        };
        nodes.push(Node::start(common, impl_cpus, &at)?);
    }
    for node in &mut nodes {
        node.wait_ready(deadline)?;
    }
    // The load and the own controller inherit the driver's mask.
    common.pin_driver()?;

    // The window: from just before the load to just after it, both ends read from each
    // node's process CPU clock while it runs.
    let cpu_before = nodes
        .iter()
        .map(|node| node.running().cpu_time())
        .collect::<Result<Vec<_>>>()?;
    let driver_before = own_cpu_time();
    let loaded = match load(args, deadline) {
        Ok(loaded) => loaded,
        Err(failure) => return Err(explain(&mut nodes, failure)),
    };
    let driver_cpu = own_cpu_time().saturating_sub(driver_before);
    for node in &mut nodes {
        node.running_mut().check_running()?;
    }
    let mut cpu = Duration::ZERO;
    for (node, before) in nodes.iter().zip(cpu_before) {
        cpu += node.running().cpu_time()?.saturating_sub(before);
    }
    let mut maxrss_kb = 0;
    for node in &nodes {
        maxrss_kb = maxrss_kb.max(node.running().peak_rss_kb()?);
    }

    // Side by side: every node gets SIGTERM, then each must be done within STOP_WAIT.
    for node in &nodes {
        node.terminate();
    }
    let until = Instant::now() + STOP_WAIT;
    let served = served(&loaded, args);
    let mut stopped = Vec::new();
    for node in nodes {
        stopped.push(node.finish(until, served)?);
    }
    Ok(report::build(
        args,
        &loaded,
        NodesMeasure {
            cpu,
            maxrss_kb,
            stopped,
        },
        driver_cpu,
    ))
}

/// Runs the mode's load against the nodes.
fn load(args: &Args, deadline: Instant) -> Result<Loaded> {
    let port = args.port();
    let patience = Patience {
        timeout: args.request_timeout(),
        retries: args.retries(),
        deadline,
    };
    let node = args.node_addrs.first().copied().unwrap_or(args.ctl_addr);
    let internal = || Failure::new("internal error: an expected reply could not be built");
    match args.mode {
        Mode::Faithful | Mode::Batched => {
            let exchanges = match args.mode {
                Mode::Faithful => Exchange::faithful(node),
                _ => vec![Exchange::get(&NODE_PROFILE_EPCS, node).ok_or_else(internal)?],
            };
            // Port 3610 of the driver's own address: peers in the wild answer there (SPEC §2).
            let socket = ControllerSocket::bind(args.ctl_addr, port, false)?;
            let mut requester = Requester::new(socket, SocketAddrV4::new(node, port), patience);
            let plan = bench::Plan {
                exchanges,
                iterations: args.measured(),
                warmup: args.warmup,
            };
            bench::run(&mut requester, &plan).map(Loaded::Bench)
        }
        Mode::Load => load::run(&load::Plan {
            controllers: args.controllers.unwrap_or(1),
            warmup: args.warmup,
            requests: args.measured(),
            ctl: args.ctl_addr,
            node: SocketAddrV4::new(node, port),
            patience,
            exchanges: Exchange::faithful(node),
        })
        .map(Loaded::Load),
        Mode::Discovery => {
            let mut socket = ControllerSocket::bind(args.ctl_addr, port, true)?;
            let plan = discovery::Plan {
                rounds: args.measured(),
                warmup: args.warmup,
                nodes: args.node_addrs.clone(),
                port,
                patience,
                exchange: Exchange::get(&[INSTANCE_LIST], node).ok_or_else(internal)?,
            };
            discovery::run(&mut socket, &plan).map(Loaded::Discovery)
        }
        Mode::Own => {
            let request = own::Request {
                ctl: args.ctl_addr,
                port,
                node,
                iterations: args.measured(),
                warmup: args.warmup,
            };
            own::run(&args.common, &request, deadline).map(Loaded::Own)
        }
    }
}

/// What the driver knows each node served, to check its counters against.
fn served(loaded: &Loaded, args: &Args) -> Served {
    match loaded {
        Loaded::Bench(o) | Loaded::Load(o) | Loaded::Discovery(o) => Served {
            at_least: o.answered,
            at_most: Some(o.sent),
        },
        // The controller is not the driver's: only what it reported answered is known.
        Loaded::Own(_) => Served {
            at_least: (args.measured() + args.warmup) * cli::GETS_PER_ITERATION,
            at_most: None,
        },
    }
}

/// Adds to a load failure how any node that ended did.
fn explain(nodes: &mut [Node], failure: Failure) -> Failure {
    // One grace for all: a crashing node finishes crashing within it.
    let until = Instant::now() + node::CRASH_WAIT;
    nodes.iter_mut().fold(failure, |failure, node| {
        node.running_mut().explain(failure, until)
    })
}
