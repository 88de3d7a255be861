//! Commands: the dispatch table, argument checks, and the context every command runs in.
//!
//! The table maps a lower-cased name to a `Command`: its arity (redis's convention: N means
//! exactly N arguments including the name, -N means at least N), the flags `COMMAND INFO`
//! reports, and the handler. Container commands (`CONFIG`, `CLIENT`, `COMMAND`) carry a
//! table of subcommands, looked up and arity-checked the same way, as redis 7 does.
//!
//! Handlers live in one file per data type; each receives a `Ctx` (the store, the calling
//! client's session and output buffer, the time) and the parsed arguments.

pub mod hashes;
pub mod keys;
pub mod lists;
pub mod server;
pub mod sets;
pub mod strings;
pub mod zsets;

use crate::protocol::reply::{self, Out};
use crate::protocol::request::Args;
use crate::store::{Db, Store, Value};
use std::collections::HashMap;
use std::sync::OnceLock;

pub type Handler = fn(&mut Ctx, Args);

pub struct Command {
    /// Lower-case name; `container|sub` for a subcommand (as redis's `fullname`).
    pub name: &'static str,
    pub arity: i32,
    pub flags: &'static [&'static str],
    /// First key, last key and step, as `COMMAND INFO` reports.
    pub keys: (i32, i32, i32),
    pub handler: Handler,
    pub subcommands: &'static [Command],
}

/// The per-connection state commands can see and change.
pub struct Session {
    pub id: u64,
    pub db: usize,
    pub name: Option<Vec<u8>>,
    /// Set by QUIT: send the replies so far, then close.
    pub close_after_reply: bool,
}

impl Session {
    pub fn new(id: u64) -> Session {
        Session {
            id,
            db: 0,
            name: None,
            close_after_reply: false,
        }
    }
}

/// Everything a command may touch.
pub struct Ctx<'a> {
    pub store: &'a mut Store,
    pub session: &'a mut Session,
    pub out: &'a mut Out,
    /// The time in Unix milliseconds, read once per batch of commands (redis also uses one
    /// cached time per command for expiry decisions).
    pub now: i64,
}

impl Ctx<'_> {
    #[inline]
    pub fn db(&mut self) -> &mut Db {
        &mut self.store.dbs[self.session.db]
    }

    pub fn ok(&mut self) {
        reply::raw(self.out, reply::OK);
    }

    pub fn error(&mut self, msg: &str) {
        reply::error(self.out, msg);
    }

    pub fn wrong_type(&mut self) {
        reply::error(self.out, reply::WRONGTYPE);
    }

    pub fn syntax_error(&mut self) {
        reply::error(self.out, reply::SYNTAX);
    }

    pub fn not_integer(&mut self) {
        reply::error(self.out, reply::NOT_INTEGER);
    }

    pub fn arity_error(&mut self, name: &str) {
        let msg = format!("wrong number of arguments for '{name}' command");
        reply::error(self.out, &msg);
    }

    /// Parses an integer argument, replying with redis's error if it is not one.
    pub fn int_arg(&mut self, arg: &[u8]) -> Option<i64> {
        let v = crate::numeric::parse_i64(arg);
        if v.is_none() {
            self.not_integer();
        }
        v
    }
}

/// Looks up `key` for a command of one type: `Ok(None)` if absent, `Err(())` after replying
/// WRONGTYPE if it holds another type. The `$variant` pattern picks the type.
#[macro_export]
macro_rules! typed_get {
    ($ctx:expr, $key:expr, $variant:ident) => {{
        let now = $ctx.now;
        match $ctx.store.dbs[$ctx.session.db].get($key, now) {
            None => Ok(None),
            Some($crate::store::Value::$variant(v)) => Ok(Some(v)),
            Some(_) => Err(()),
        }
    }};
}

/// As `typed_get!` but mutable.
#[macro_export]
macro_rules! typed_get_mut {
    ($ctx:expr, $key:expr, $variant:ident) => {{
        let now = $ctx.now;
        match $ctx.store.dbs[$ctx.session.db].get_mut($key, now) {
            None => Ok(None),
            Some($crate::store::Value::$variant(v)) => Ok(Some(v)),
            Some(_) => Err(()),
        }
    }};
}

/// Returns the collection at `key`, creating it with `make` if absent; `None` (after
/// replying WRONGTYPE) if the key holds another type.
pub fn get_or_create<'a>(
    ctx: &'a mut Ctx,
    key: &[u8],
    is_type: fn(&Value) -> bool,
    make: fn() -> Value,
) -> Option<&'a mut Value> {
    let now = ctx.now;
    let out = &mut *ctx.out;
    let db = &mut ctx.store.dbs[ctx.session.db];
    db.expire_if_needed(key, now);
    match db.keys.get_index_of(key) {
        Some(i) => {
            let v = &mut db.keys[i];
            if is_type(v) {
                Some(v)
            } else {
                reply::error(out, reply::WRONGTYPE);
                None
            }
        }
        None => Some(db.insert_new(key, make())),
    }
}

macro_rules! cmd {
    ($name:literal, $arity:expr, $flags:expr, $keys:expr, $handler:expr) => {
        Command {
            name: $name,
            arity: $arity,
            flags: $flags,
            keys: $keys,
            handler: $handler,
            subcommands: &[],
        }
    };
}
pub(crate) use cmd;

const R: &[&str] = &["readonly"];
const RF: &[&str] = &["readonly", "fast"];
const W: &[&str] = &["write"];
const WF: &[&str] = &["write", "fast"];
const WD: &[&str] = &["write", "denyoom"];
const WDF: &[&str] = &["write", "denyoom", "fast"];
const K1: (i32, i32, i32) = (1, 1, 1);
const KALL: (i32, i32, i32) = (1, -1, 1);
const K0: (i32, i32, i32) = (0, 0, 0);

use hashes as h;
use keys as k;
use lists as l;
use server as srv;
use sets as s;
use strings as st;
use zsets as z;

/// Every command this server knows, with redis 7.0.15's arities and flags.
pub static COMMANDS: &[Command] = &[
    // Strings.
    cmd!("get", 2, RF, K1, st::get),
    cmd!("set", -3, WD, K1, st::set),
    cmd!("setnx", 3, WDF, K1, st::setnx),
    cmd!("setex", 4, WD, K1, st::setex),
    cmd!("psetex", 4, WD, K1, st::psetex),
    cmd!("getset", 3, WDF, K1, st::getset),
    cmd!("getdel", 2, WF, K1, st::getdel),
    cmd!("getex", -2, WF, K1, st::getex),
    cmd!("mget", -2, RF, KALL, st::mget),
    cmd!("mset", -3, WD, (1, -1, 2), st::mset),
    cmd!("msetnx", -3, WD, (1, -1, 2), st::msetnx),
    cmd!("incr", 2, WDF, K1, st::incr),
    cmd!("decr", 2, WDF, K1, st::decr),
    cmd!("incrby", 3, WDF, K1, st::incrby),
    cmd!("decrby", 3, WDF, K1, st::decrby),
    cmd!("incrbyfloat", 3, WDF, K1, st::incrbyfloat),
    cmd!("append", 3, WDF, K1, st::append),
    cmd!("strlen", 2, RF, K1, st::strlen),
    cmd!("getrange", 4, R, K1, st::getrange),
    cmd!("substr", 4, R, K1, st::getrange),
    cmd!("setrange", 4, WD, K1, st::setrange),
    // Keys.
    cmd!("del", -2, W, KALL, k::del),
    cmd!("unlink", -2, WF, KALL, k::del),
    cmd!("exists", -2, RF, KALL, k::exists),
    cmd!("touch", -2, RF, KALL, k::exists),
    cmd!("type", 2, RF, K1, k::type_),
    cmd!("expire", -3, WF, K1, k::expire),
    cmd!("pexpire", -3, WF, K1, k::pexpire),
    cmd!("expireat", -3, WF, K1, k::expireat),
    cmd!("pexpireat", -3, WF, K1, k::pexpireat),
    cmd!("ttl", 2, RF, K1, k::ttl),
    cmd!("pttl", 2, RF, K1, k::pttl),
    cmd!("expiretime", 2, RF, K1, k::expiretime),
    cmd!("pexpiretime", 2, RF, K1, k::pexpiretime),
    cmd!("persist", 2, WF, K1, k::persist),
    cmd!("keys", 2, R, K0, k::keys),
    cmd!("scan", -2, R, K0, k::scan),
    cmd!("randomkey", 1, R, K0, k::randomkey),
    cmd!("rename", 3, W, (1, 2, 1), k::rename),
    cmd!("renamenx", 3, WF, (1, 2, 1), k::renamenx),
    cmd!("dbsize", 1, RF, K0, k::dbsize),
    cmd!("flushdb", -1, W, K0, k::flushdb),
    cmd!("flushall", -1, W, K0, k::flushall),
    cmd!("select", 2, &["loading", "stale", "fast"], K0, k::select),
    cmd!("swapdb", 3, WF, K0, k::swapdb),
    // Lists.
    cmd!("lpush", -3, WDF, K1, l::lpush),
    cmd!("rpush", -3, WDF, K1, l::rpush),
    cmd!("lpushx", -3, WDF, K1, l::lpushx),
    cmd!("rpushx", -3, WDF, K1, l::rpushx),
    cmd!("lpop", -2, WF, K1, l::lpop),
    cmd!("rpop", -2, WF, K1, l::rpop),
    cmd!("llen", 2, RF, K1, l::llen),
    cmd!("lindex", 3, R, K1, l::lindex),
    cmd!("lset", 4, WD, K1, l::lset),
    cmd!("ltrim", 4, W, K1, l::ltrim),
    cmd!("lrange", 4, R, K1, l::lrange),
    cmd!("lrem", 4, W, K1, l::lrem),
    // Hashes.
    cmd!("hset", -4, WDF, K1, h::hset),
    cmd!("hmset", -4, WDF, K1, h::hmset),
    cmd!("hsetnx", 4, WDF, K1, h::hsetnx),
    cmd!("hget", 3, RF, K1, h::hget),
    cmd!("hmget", -3, RF, K1, h::hmget),
    cmd!("hgetall", 2, R, K1, h::hgetall),
    cmd!("hdel", -3, WF, K1, h::hdel),
    cmd!("hlen", 2, RF, K1, h::hlen),
    cmd!("hexists", 3, RF, K1, h::hexists),
    cmd!("hincrby", 4, WDF, K1, h::hincrby),
    cmd!("hincrbyfloat", 4, WDF, K1, h::hincrbyfloat),
    cmd!("hkeys", 2, R, K1, h::hkeys),
    cmd!("hvals", 2, R, K1, h::hvals),
    cmd!("hstrlen", 3, RF, K1, h::hstrlen),
    // Sets.
    cmd!("sadd", -3, WDF, K1, s::sadd),
    cmd!("srem", -3, WF, K1, s::srem),
    cmd!("smembers", 2, R, K1, s::smembers),
    cmd!("sismember", 3, RF, K1, s::sismember),
    cmd!("smismember", -3, RF, K1, s::smismember),
    cmd!("scard", 2, RF, K1, s::scard),
    cmd!("spop", -2, WF, K1, s::spop),
    cmd!("srandmember", -2, R, K1, s::srandmember),
    // Sorted sets.
    cmd!("zadd", -4, WDF, K1, z::zadd),
    cmd!("zincrby", 4, WDF, K1, z::zincrby),
    cmd!("zscore", 3, RF, K1, z::zscore),
    cmd!("zmscore", -3, RF, K1, z::zmscore),
    cmd!("zcard", 2, RF, K1, z::zcard),
    cmd!("zrem", -3, WF, K1, z::zrem),
    cmd!("zrank", 3, RF, K1, z::zrank),
    cmd!("zrevrank", 3, RF, K1, z::zrevrank),
    cmd!("zcount", 4, RF, K1, z::zcount),
    cmd!("zrange", -4, R, K1, z::zrange),
    cmd!("zrevrange", -4, R, K1, z::zrevrange),
    cmd!("zrangebyscore", -4, R, K1, z::zrangebyscore),
    cmd!("zrevrangebyscore", -4, R, K1, z::zrevrangebyscore),
    cmd!("zpopmin", -2, WF, K1, z::zpopmin),
    cmd!("zpopmax", -2, WF, K1, z::zpopmax),
    // Server and connection.
    cmd!("ping", -1, &["fast"], K0, srv::ping),
    cmd!("echo", 2, &["loading", "stale", "fast"], K0, srv::echo),
    cmd!("info", -1, &["loading", "stale"], K0, srv::info),
    cmd!("time", 1, &["loading", "stale", "fast"], K0, srv::time),
    cmd!(
        "lastsave",
        1,
        &["loading", "stale", "fast"],
        K0,
        srv::lastsave
    ),
    cmd!(
        "hello",
        -1,
        &[
            "noscript",
            "loading",
            "stale",
            "fast",
            "no_auth",
            "allow_busy"
        ],
        K0,
        srv::hello
    ),
    Command {
        name: "command",
        arity: -1,
        flags: &["loading", "stale"],
        keys: K0,
        handler: srv::command,
        subcommands: srv::COMMAND_SUBCOMMANDS,
    },
    Command {
        name: "config",
        arity: -2,
        flags: &[],
        keys: K0,
        handler: srv::unreachable_container,
        subcommands: srv::CONFIG_SUBCOMMANDS,
    },
    Command {
        name: "client",
        arity: -2,
        flags: &[],
        keys: K0,
        handler: srv::unreachable_container,
        subcommands: srv::CLIENT_SUBCOMMANDS,
    },
    cmd!(
        "quit",
        -1,
        &[
            "noscript",
            "loading",
            "stale",
            "fast",
            "no_auth",
            "allow_busy"
        ],
        K0,
        srv::quit
    ),
];

/// Longest command name (`zrevrangebyscore`): a longer name is no command.
const NAME_MAX: usize = 16;

/// The table is keyed by the lower-cased name packed into one integer (zero-padded), so a
/// lookup hashes and compares 16 bytes in a few instructions instead of hashing and comparing
/// a byte string (this runs once per request).
type Table = HashMap<u128, &'static Command, crate::store::Hasher>;

fn table() -> &'static Table {
    static TABLE: OnceLock<Table> = OnceLock::new();
    TABLE.get_or_init(|| {
        COMMANDS
            .iter()
            .map(|c| (name_key(c.name.as_bytes()), c))
            .collect()
    })
}

/// `name` (at most `NAME_MAX` bytes) lower-cased and packed, zero-padded, into an integer.
#[inline]
fn name_key(name: &[u8]) -> u128 {
    let mut packed = [0u8; NAME_MAX];
    packed[..name.len()].copy_from_slice(name);
    for b in &mut packed {
        *b = b.to_ascii_lowercase();
    }
    u128::from_le_bytes(packed)
}

/// Case-insensitive lookup of a command name.
pub fn lookup(name: &[u8]) -> Option<&'static Command> {
    if name.len() > NAME_MAX {
        return None;
    }
    // Zero padding makes "get" and "get\0" the same key: the length tells them apart.
    table()
        .get(&name_key(name))
        .copied()
        .filter(|c| c.name.len() == name.len())
}

fn lookup_subcommand(container: &'static Command, name: &[u8]) -> Option<&'static Command> {
    container.subcommands.iter().find(|c| {
        let sub = c.name.split('|').nth(1).unwrap_or("");
        sub.as_bytes().eq_ignore_ascii_case(name)
    })
}

/// A C string's view of an argument (redis formats names with `%s`, which stops at NUL),
/// cut to at most `max` bytes (`%.128s`).
fn c_str(b: &[u8], max: usize) -> &[u8] {
    let end = memchr::memchr(0, b).unwrap_or(b.len()).min(max);
    &b[..end]
}

/// Runs one command, as redis's `processCommand`: QUIT, lookup, arity, then the handler.
pub fn execute(ctx: &mut Ctx, args: Args) {
    let name = args.get(0);
    let Some(mut cmd) = lookup(name) else {
        return unknown_command(ctx, args);
    };
    if !cmd.subcommands.is_empty() && args.len() >= 2 {
        match lookup_subcommand(cmd, args.get(1)) {
            Some(sub) => cmd = sub,
            None => {
                let mut msg = b"unknown subcommand '".to_vec();
                msg.extend_from_slice(c_str(args.get(1), 128));
                msg.extend_from_slice(b"'. Try ");
                msg.extend_from_slice(cmd.name.to_ascii_uppercase().as_bytes());
                msg.extend_from_slice(b" HELP.");
                return reply::error_sanitized(ctx.out, &msg);
            }
        }
    }
    let argc = args.len() as i32;
    if (cmd.arity > 0 && cmd.arity != argc) || argc < -cmd.arity {
        return ctx.arity_error(cmd.name);
    }
    (cmd.handler)(ctx, args);
}

fn unknown_command(ctx: &mut Ctx, args: Args) {
    let mut msg = b"unknown command '".to_vec();
    msg.extend_from_slice(c_str(args.get(0), 128));
    msg.extend_from_slice(b"', with args beginning with: ");
    // As redis: arguments are appended while the list is under 128 bytes, each cut to the
    // room left.
    let mut listed = 0;
    for arg in args.iter_from(1) {
        if listed >= 128 {
            break;
        }
        let arg = c_str(arg, 128 - listed);
        msg.push(b'\'');
        msg.extend_from_slice(arg);
        msg.extend_from_slice(b"' ");
        listed += arg.len() + 3;
    }
    reply::error_sanitized(ctx.out, &msg);
}

#[cfg(test)]
mod tests {
    //! Command tests through the dispatcher: the reply bytes of a few commands per group.

    use super::{execute, Ctx, Session};
    use crate::protocol::reply::Out;
    use crate::protocol::request::{Parsed, Parser};
    use crate::store::Store;

    /// Runs inline commands in order against one store and session; returns all reply bytes.
    fn run(store: &mut Store, session: &mut Session, lines: &[&str]) -> String {
        let mut out = Out::default();
        for line in lines {
            let buf = format!("{line}\r\n").into_bytes();
            let mut parser = Parser::default();
            let mut pos = 0;
            assert_eq!(parser.parse(&buf, &mut pos), Ok(Parsed::Command));
            let mut ctx = Ctx {
                store,
                session,
                out: &mut out,
                now: 1_000_000,
            };
            execute(&mut ctx, parser.args(&buf));
        }
        String::from_utf8_lossy(&out).into_owned()
    }

    fn replies(lines: &[&str]) -> String {
        run(&mut Store::default(), &mut Session::new(1), lines)
    }

    #[test]
    fn lookup_ignores_case_and_nothing_else() {
        use super::{lookup, COMMANDS, NAME_MAX};
        assert!(COMMANDS.iter().all(|c| c.name.len() <= NAME_MAX));
        for c in COMMANDS {
            assert!(
                lookup(c.name.to_ascii_uppercase().as_bytes()).is_some_and(|f| f.name == c.name)
            );
        }
        assert_eq!(
            lookup(b"ZrevRangeByScore").map(|c| c.name),
            Some("zrevrangebyscore")
        );
        assert!(lookup(b"get\0").is_none());
        assert!(lookup(b"ge").is_none());
        assert!(lookup(b"").is_none());
        assert!(lookup(b"zrevrangebyscorex").is_none());
    }

    #[test]
    fn dispatch_errors() {
        assert_eq!(
            replies(&["FOO a b"]),
            "-ERR unknown command 'FOO', with args beginning with: 'a' 'b' \r\n"
        );
        assert_eq!(
            replies(&["get"]),
            "-ERR wrong number of arguments for 'get' command\r\n"
        );
        assert_eq!(
            replies(&["CONFIG foo"]),
            "-ERR unknown subcommand 'foo'. Try CONFIG HELP.\r\n"
        );
        assert_eq!(
            replies(&["config get"]),
            "-ERR wrong number of arguments for 'config|get' command\r\n"
        );
    }

    #[test]
    fn strings_and_counters() {
        assert_eq!(
            replies(&[
                "SET a 1",
                "INCR a",
                "INCRBY a x",
                "GET a",
                "SET m 9223372036854775807",
                "INCR m"
            ]),
            "+OK\r\n:2\r\n-ERR value is not an integer or out of range\r\n$1\r\n2\r\n+OK\r\n\
         -ERR increment or decrement would overflow\r\n"
        );
        assert_eq!(
            replies(&["SET f 10.50", "INCRBYFLOAT f 0.1"]),
            "+OK\r\n$4\r\n10.6\r\n"
        );
    }

    #[test]
    fn wrong_type() {
        assert_eq!(
            replies(&["SET s x", "LPUSH s a"]),
            "+OK\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"
        );
    }

    #[test]
    fn empty_collections_disappear() {
        assert_eq!(
            replies(&[
                "RPUSH l a",
                "LPOP l",
                "EXISTS l",
                "SADD s a",
                "SPOP s",
                "EXISTS s"
            ]),
            ":1\r\n$1\r\na\r\n:0\r\n:1\r\n$1\r\na\r\n:0\r\n"
        );
    }

    #[test]
    fn sorted_set_scores_use_17_digits() {
        assert_eq!(
            replies(&["ZADD z 0.1 a", "ZPOPMIN z", "ZPOPMIN z"]),
            ":1\r\n*2\r\n$1\r\na\r\n$19\r\n0.10000000000000001\r\n*0\r\n"
        );
    }

    #[test]
    fn select_and_ttl() {
        let mut store = Store::default();
        let mut session = Session::new(1);
        assert_eq!(
            run(
                &mut store,
                &mut session,
                &[
                    "SELECT 3",
                    "SET k v EX 10",
                    "TTL k",
                    "PTTL nokey",
                    "SELECT 16"
                ]
            ),
            "+OK\r\n+OK\r\n:10\r\n:-2\r\n-ERR DB index is out of range\r\n"
        );
        assert_eq!(session.db, 3);
        assert_eq!(store.dbs[3].len(), 1);
    }

    #[test]
    fn scan_visits_every_key() {
        let mut store = Store::default();
        let mut session = Session::new(1);
        let sets: Vec<String> = (0..50).map(|i| format!("SET k{i} v")).collect();
        let refs: Vec<&str> = sets.iter().map(String::as_str).collect();
        run(&mut store, &mut session, &refs);
        let mut cursor = "0".to_string();
        let mut seen = 0;
        loop {
            let r = run(
                &mut store,
                &mut session,
                &[&format!("SCAN {cursor} COUNT 7")],
            );
            let lines: Vec<&str> = r.split("\r\n").collect();
            cursor = lines[2].to_string();
            seen += lines.iter().filter(|l| l.starts_with('k')).count();
            if cursor == "0" {
                break;
            }
        }
        assert_eq!(seen, 50);
    }
}
