//! Server and connection commands: PING, ECHO, INFO, HELLO, COMMAND, CONFIG, CLIENT, QUIT.

use super::{cmd, Command, Ctx, COMMANDS, K0};
use crate::protocol::reply;
use crate::protocol::request::Args;
use std::time::{SystemTime, UNIX_EPOCH};

pub const VERSION: &str = "7.0.15";

pub fn ping(ctx: &mut Ctx, args: Args) {
    match args.len() {
        1 => reply::raw(ctx.out, reply::PONG),
        2 => reply::bulk(ctx.out, args.get(1)),
        _ => ctx.arity_error("ping"),
    }
}

pub fn echo(ctx: &mut Ctx, args: Args) {
    reply::bulk(ctx.out, args.get(1));
}

pub fn quit(ctx: &mut Ctx, _args: Args) {
    ctx.ok();
    ctx.session.close_after_reply = true;
}

pub fn time(ctx: &mut Ctx, _args: Args) {
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    reply::array(ctx.out, 2);
    reply::int_bulk(ctx.out, now.as_secs() as i64);
    reply::int_bulk(ctx.out, i64::from(now.subsec_micros()));
}

pub fn lastsave(ctx: &mut Ctx, _args: Args) {
    let start = ctx.store.stats.start_unix;
    reply::int(ctx.out, start);
}

/// Resident memory in bytes, from /proc (0 if unavailable).
fn resident_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<u64>().ok())
        .map_or(0, |pages| pages * 4096)
}

/// INFO [section …]: the server, clients, memory, stats and keyspace sections, in redis's
/// `field:value` format.
pub fn info(ctx: &mut Ctx, args: Args) {
    let wanted: Vec<Vec<u8>> = args.iter_from(1).map(|a| a.to_ascii_lowercase()).collect();
    let all = wanted.is_empty()
        || wanted
            .iter()
            .any(|w| w == b"all" || w == b"everything" || w == b"default");
    let want = |name: &str| all || wanted.iter().any(|w| w == name.as_bytes());
    let stats = &ctx.store.stats;
    let mut s = String::new();
    let now_ms = ctx.now;
    if want("server") {
        let uptime = (now_ms / 1000 - stats.start_unix).max(0);
        s.push_str(&format!(
            "# Server\r\nredis_version:{VERSION}\r\nredis_mode:standalone\r\n\
             os:Linux\r\narch_bits:64\r\nmultiplexing_api:epoll\r\n\
             process_id:{}\r\ntcp_port:{}\r\nuptime_in_seconds:{uptime}\r\n\
             uptime_in_days:{}\r\nexecutable:redis-rust\r\n",
            std::process::id(),
            stats.port,
            uptime / 86400
        ));
    }
    if want("clients") {
        if !s.is_empty() {
            s.push_str("\r\n");
        }
        s.push_str(&format!(
            "# Clients\r\nconnected_clients:{}\r\nmaxclients:10000\r\nblocked_clients:0\r\n",
            stats.connected_clients
        ));
    }
    if want("memory") {
        if !s.is_empty() {
            s.push_str("\r\n");
        }
        let rss = resident_bytes();
        s.push_str(&format!(
            "# Memory\r\nused_memory:{rss}\r\nused_memory_rss:{rss}\r\n\
             maxmemory:0\r\nmaxmemory_policy:noeviction\r\nmem_allocator:libc\r\n"
        ));
    }
    if want("stats") {
        if !s.is_empty() {
            s.push_str("\r\n");
        }
        s.push_str(&format!(
            "# Stats\r\ntotal_connections_received:{}\r\ntotal_commands_processed:{}\r\n",
            stats.total_connections, stats.total_commands
        ));
    }
    if want("keyspace") {
        if !s.is_empty() {
            s.push_str("\r\n");
        }
        s.push_str("# Keyspace\r\n");
        for (i, db) in ctx.store.dbs.iter().enumerate() {
            if db.keys.is_empty() {
                continue;
            }
            // Summed in i128: a few TTLs near i64::MAX must not wrap the average negative
            // (found by difffuzz.py: avg_ttl=-3074457345492218872).
            let ttls: Vec<i128> = db
                .expires
                .values()
                .map(|&w| i128::from(w.saturating_sub(now_ms).max(0)))
                .collect();
            let avg = if ttls.is_empty() {
                0
            } else {
                ttls.iter().sum::<i128>() / ttls.len() as i128
            };
            s.push_str(&format!(
                "db{i}:keys={},expires={},avg_ttl={avg}\r\n",
                db.keys.len(),
                db.expires.len()
            ));
        }
    }
    reply::bulk(ctx.out, s.as_bytes());
}

/// HELLO [protover [AUTH user pass] [SETNAME name]]: RESP2 only.
pub fn hello(ctx: &mut Ctx, args: Args) {
    let mut j = 1;
    let mut protover = None;
    if args.len() >= 2 {
        let Some(ver) = crate::numeric::parse_i64(args.get(1)) else {
            return ctx.error("Protocol version is not an integer or out of range");
        };
        if !(2..=3).contains(&ver) {
            return ctx.error("-NOPROTO unsupported protocol version");
        }
        protover = Some(ver);
        j = 2;
    }
    let mut name = None;
    while j < args.len() {
        let opt = args.get(j);
        let more = args.len() - 1 - j;
        if opt.eq_ignore_ascii_case(b"auth") && more >= 2 {
            j += 2;
        } else if opt.eq_ignore_ascii_case(b"setname") && more >= 1 {
            name = Some(args.get(j + 1));
            j += 1;
        } else {
            let mut msg = b"Syntax error in HELLO option '".to_vec();
            msg.extend_from_slice(super::c_str(opt, usize::MAX));
            msg.push(b'\'');
            return reply::error_sanitized(ctx.out, &msg);
        }
        j += 1;
    }
    if let Some(name) = name {
        if !set_client_name(ctx, name) {
            return;
        }
    }
    if let Some(v) = protover {
        ctx.out.resp3 = v == 3;
    }
    let proto = if ctx.out.resp3 { 3 } else { 2 };
    reply::map(ctx.out, 7);
    for (k, v) in [
        ("server", "redis"),
        ("version", VERSION),
        ("proto", ""),
        ("id", ""),
        ("mode", "standalone"),
        ("role", "master"),
        ("modules", ""),
    ] {
        reply::bulk(ctx.out, k.as_bytes());
        match k {
            "proto" => reply::int(ctx.out, proto),
            "id" => reply::int(ctx.out, ctx.session.id as i64),
            "modules" => reply::raw(ctx.out, reply::EMPTY_ARRAY),
            _ => reply::bulk(ctx.out, v.as_bytes()),
        }
    }
}

// ---- COMMAND -------------------------------------------------------------------------

pub static COMMAND_SUBCOMMANDS: &[Command] = &[
    cmd!("command|count", 2, &["loading", "stale"], K0, command_count),
    cmd!("command|info", -2, &["loading", "stale"], K0, command_info),
    cmd!("command|docs", -2, &["loading", "stale"], K0, command_docs),
    cmd!("command|list", -2, &["loading", "stale"], K0, command_list),
    cmd!("command|help", 2, &["loading", "stale"], K0, command_help),
];

/// One `COMMAND INFO` entry: name, arity, flags, first key, last key, step, ACL categories,
/// tips, key specs, subcommands (redis 7's ten fields).
fn write_command_info(out: &mut reply::Out, c: &Command) {
    reply::array(out, 10);
    reply::bulk(out, c.name.as_bytes());
    reply::int(out, i64::from(c.arity));
    reply::array(out, c.flags.len());
    for f in c.flags {
        reply::simple(out, f);
    }
    reply::int(out, i64::from(c.keys.0));
    reply::int(out, i64::from(c.keys.1));
    reply::int(out, i64::from(c.keys.2));
    for _ in 0..3 {
        reply::raw(out, reply::EMPTY_ARRAY);
    }
    reply::array(out, c.subcommands.len());
    for sub in c.subcommands {
        write_command_info(out, sub);
    }
}

pub fn command(ctx: &mut Ctx, _args: Args) {
    reply::array(ctx.out, COMMANDS.len());
    for c in COMMANDS {
        write_command_info(ctx.out, c);
    }
}

fn command_count(ctx: &mut Ctx, _args: Args) {
    reply::int(ctx.out, COMMANDS.len() as i64);
}

fn command_info(ctx: &mut Ctx, args: Args) {
    if args.len() == 2 {
        return command(ctx, args);
    }
    reply::array(ctx.out, args.len() - 2);
    for name in args.iter_from(2) {
        match super::lookup(name) {
            Some(c) => write_command_info(ctx.out, c),
            None => reply::null_array(ctx.out),
        }
    }
}

/// COMMAND DOCS: a map (flat array in RESP2) of name → documentation. Only the summary and
/// group fields are provided, enough for redis-cli's start-up.
fn command_docs(ctx: &mut Ctx, args: Args) {
    let chosen: Vec<&Command> = if args.len() == 2 {
        COMMANDS.iter().collect()
    } else {
        args.iter_from(2).filter_map(super::lookup).collect()
    };
    reply::map(ctx.out, chosen.len());
    for c in chosen {
        reply::bulk(ctx.out, c.name.as_bytes());
        reply::map(ctx.out, 2);
        reply::bulk(ctx.out, b"summary");
        reply::bulk(ctx.out, b"");
        reply::bulk(ctx.out, b"group");
        reply::bulk(ctx.out, b"generic");
    }
}

fn command_list(ctx: &mut Ctx, _args: Args) {
    reply::array(ctx.out, COMMANDS.len());
    for c in COMMANDS {
        reply::bulk(ctx.out, c.name.as_bytes());
    }
}

fn help(ctx: &mut Ctx, lines: &[&str]) {
    reply::array(ctx.out, lines.len());
    for l in lines {
        reply::simple(ctx.out, l);
    }
}

fn command_help(ctx: &mut Ctx, _args: Args) {
    help(
        ctx,
        &[
            "COMMAND <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "COUNT",
            "INFO [<command-name> ...]",
            "DOCS [<command-name> ...]",
            "LIST",
            "HELP",
        ],
    );
}

/// Container commands never run their own handler: the dispatcher either finds a
/// subcommand or replies with an error first.
pub fn unreachable_container(ctx: &mut Ctx, _args: Args) {
    ctx.error("unknown subcommand");
}

// ---- CONFIG ------------------------------------------------------------------------------

pub static CONFIG_SUBCOMMANDS: &[Command] = &[
    cmd!(
        "config|get",
        -3,
        &["admin", "noscript", "loading", "stale"],
        K0,
        config_get
    ),
    cmd!(
        "config|set",
        -4,
        &["admin", "noscript", "loading", "stale"],
        K0,
        config_set
    ),
    cmd!(
        "config|resetstat",
        2,
        &["admin", "noscript", "loading", "stale"],
        K0,
        config_resetstat
    ),
    cmd!(
        "config|rewrite",
        2,
        &["admin", "noscript", "loading", "stale"],
        K0,
        config_rewrite
    ),
    cmd!("config|help", 2, &["loading", "stale"], K0, config_help),
];

/// The configuration this server reports: no persistence, like the reference's start-up.
const CONFIG: &[(&str, &str)] = &[("save", ""), ("appendonly", "no")];

/// A name without glob characters is replied as the client wrote it (redis 7.0: `CONFIG GET
/// SAVE` answers `SAVE`); a pattern's matches are replied by their own names.
fn config_get(ctx: &mut Ctx, args: Args) {
    let mut found: Vec<(&str, &[u8], &str)> = Vec::new();
    for asked in args.iter_from(2) {
        let pattern = asked.to_ascii_lowercase();
        let glob = pattern.iter().any(|c| matches!(c, b'*' | b'?' | b'['));
        for &(k, v) in CONFIG {
            if crate::globmatch::matches(&pattern, k.as_bytes()) && !found.iter().any(|f| f.0 == k)
            {
                found.push((k, if glob { k.as_bytes() } else { asked }, v));
            }
        }
    }
    reply::map(ctx.out, found.len());
    for (_, shown, v) in found {
        reply::bulk(ctx.out, shown);
        reply::bulk(ctx.out, v.as_bytes());
    }
}

fn config_set(ctx: &mut Ctx, args: Args) {
    if args.len() % 2 == 1 {
        return ctx.arity_error("config|set");
    }
    ctx.ok();
}

fn config_resetstat(ctx: &mut Ctx, _args: Args) {
    ctx.store.stats.total_commands = 0;
    ctx.store.stats.total_connections = 0;
    ctx.ok();
}

fn config_rewrite(ctx: &mut Ctx, _args: Args) {
    ctx.error("The server is running without a config file");
}

fn config_help(ctx: &mut Ctx, _args: Args) {
    help(
        ctx,
        &[
            "CONFIG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "GET <pattern>",
            "SET <directive> <value>",
            "RESETSTAT",
            "REWRITE",
            "HELP",
        ],
    );
}

// ---- CLIENT ------------------------------------------------------------------------------

pub static CLIENT_SUBCOMMANDS: &[Command] = &[
    cmd!(
        "client|id",
        2,
        &["noscript", "loading", "stale"],
        K0,
        client_id
    ),
    cmd!(
        "client|setname",
        3,
        &["noscript", "loading", "stale"],
        K0,
        client_setname
    ),
    cmd!(
        "client|getname",
        2,
        &["noscript", "loading", "stale"],
        K0,
        client_getname
    ),
    cmd!(
        "client|info",
        2,
        &["noscript", "loading", "stale"],
        K0,
        client_info
    ),
    cmd!(
        "client|list",
        -2,
        &["admin", "noscript", "loading", "stale"],
        K0,
        client_list
    ),
    cmd!("client|help", 2, &["loading", "stale"], K0, client_help),
];

fn client_id(ctx: &mut Ctx, _args: Args) {
    reply::int(ctx.out, ctx.session.id as i64);
}

/// Validates and sets the connection name (empty clears it). False after replying an error.
fn set_client_name(ctx: &mut Ctx, name: &[u8]) -> bool {
    if name.iter().any(|&c| !(b'!'..=b'~').contains(&c)) {
        ctx.error("Client names cannot contain spaces, newlines or special characters.");
        return false;
    }
    ctx.session.name = (!name.is_empty()).then(|| name.to_vec());
    true
}

fn client_setname(ctx: &mut Ctx, args: Args) {
    if set_client_name(ctx, args.get(2)) {
        ctx.ok();
    }
}

fn client_getname(ctx: &mut Ctx, _args: Args) {
    match &ctx.session.name {
        Some(n) => reply::bulk(ctx.out, n),
        None => reply::null(ctx.out),
    }
}

fn client_line(ctx: &Ctx) -> String {
    let name = ctx
        .session
        .name
        .as_deref()
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    format!(
        "id={} addr=127.0.0.1:0 laddr=127.0.0.1:{} fd=0 name={} db={} flags=N cmd=client\n",
        ctx.session.id, ctx.store.stats.port, name, ctx.session.db
    )
}

fn client_info(ctx: &mut Ctx, _args: Args) {
    let line = client_line(ctx);
    reply::bulk(ctx.out, line.as_bytes());
}

fn client_list(ctx: &mut Ctx, _args: Args) {
    let line = client_line(ctx);
    reply::bulk(ctx.out, line.as_bytes());
}

fn client_help(ctx: &mut Ctx, _args: Args) {
    help(
        ctx,
        &[
            "CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
            "ID",
            "INFO",
            "LIST",
            "GETNAME",
            "SETNAME <connection-name>",
            "HELP",
        ],
    );
}
