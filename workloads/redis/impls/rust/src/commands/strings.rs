//! String commands: GET, SET and its options, counters, APPEND, ranges, MGET/MSET.

use super::Ctx;
use crate::numeric::parse_i64;
use crate::protocol::reply;
use crate::protocol::request::Args;
use crate::store::small_bytes::SmallBytes;
use crate::store::Value;

/// Largest string a command may build (redis's `proto-max-bulk-len`).
const STRING_MAX: usize = 512 * 1024 * 1024;
const TOO_BIG: &str = "string exceeds maximum allowed size (proto-max-bulk-len)";

/// The string at `key`: `Ok(None)` if absent, `Err(())` after replying WRONGTYPE.
/// A macro rather than a function so that the borrow of the database stays disjoint from
/// the borrow of the output buffer.
macro_rules! get_str {
    ($ctx:expr, $key:expr) => {{
        let now = $ctx.now;
        match $ctx.store.dbs[$ctx.session.db].get($key, now) {
            None => Ok(None),
            Some(Value::Str(s)) => Ok(Some(s)),
            Some(_) => {
                reply::error($ctx.out, reply::WRONGTYPE);
                Err(())
            }
        }
    }};
}

pub fn get(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    match ctx.store.dbs[ctx.session.db].get(args.get(1), now) {
        Some(Value::Str(s)) => reply::bulk(ctx.out, s),
        None => reply::null(ctx.out),
        Some(_) => reply::error(ctx.out, reply::WRONGTYPE),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Expiry {
    None,
    /// Relative seconds / milliseconds, absolute seconds / milliseconds.
    Ex,
    Px,
    ExAt,
    PxAt,
    Persist,
    KeepTtl,
}

/// The options of SET and GETEX, as redis's `parseExtendedStringArgumentsOrReply`.
struct SetOptions<'a> {
    nx: bool,
    xx: bool,
    get: bool,
    expiry: Expiry,
    expire_arg: Option<&'a [u8]>,
}

#[derive(PartialEq, Eq)]
enum Kind {
    Set,
    GetEx,
}

fn parse_options<'a>(args: &Args<'a>, from: usize, kind: Kind) -> Option<SetOptions<'a>> {
    let mut o = SetOptions {
        nx: false,
        xx: false,
        get: false,
        expiry: Expiry::None,
        expire_arg: None,
    };
    let mut j = from;
    while j < args.len() {
        let opt = args.get(j);
        let next = (j + 1 < args.len()).then(|| args.get(j + 1));
        let is = |name: &str| opt.eq_ignore_ascii_case(name.as_bytes());
        if is("nx") && !o.xx && kind == Kind::Set {
            o.nx = true;
        } else if is("xx") && !o.nx && kind == Kind::Set {
            o.xx = true;
        } else if is("get") && kind == Kind::Set {
            o.get = true;
        } else if is("keepttl")
            && matches!(o.expiry, Expiry::None | Expiry::KeepTtl)
            && kind == Kind::Set
        {
            o.expiry = Expiry::KeepTtl;
        } else if is("persist")
            && matches!(o.expiry, Expiry::None | Expiry::Persist)
            && kind == Kind::GetEx
        {
            o.expiry = Expiry::Persist;
        } else if let (Some(unit), Some(next)) = (expiry_unit(opt), next) {
            // The same unit may repeat (the last wins); any other expiry option conflicts.
            if o.expiry != Expiry::None && o.expiry != unit {
                return None;
            }
            o.expiry = unit;
            o.expire_arg = Some(next);
            j += 1;
        } else {
            return None;
        }
        j += 1;
    }
    Some(o)
}

fn expiry_unit(opt: &[u8]) -> Option<Expiry> {
    [
        ("ex", Expiry::Ex),
        ("px", Expiry::Px),
        ("exat", Expiry::ExAt),
        ("pxat", Expiry::PxAt),
    ]
    .into_iter()
    .find(|(n, _)| opt.eq_ignore_ascii_case(n.as_bytes()))
    .map(|(_, u)| u)
}

/// The absolute expiry time in ms for an EX/PX/EXAT/PXAT argument, as redis's
/// `getExpireMillisecondsOrReply` (replies with the error and returns None when invalid).
fn expire_time(ctx: &mut Ctx, unit: Expiry, arg: &[u8], command: &str) -> Option<i64> {
    let v = ctx.int_arg(arg)?;
    let seconds = matches!(unit, Expiry::Ex | Expiry::ExAt);
    if v <= 0 || (seconds && v > i64::MAX / 1000) {
        invalid_expire(ctx, command);
        return None;
    }
    let mut ms = if seconds { v * 1000 } else { v };
    if matches!(unit, Expiry::Ex | Expiry::Px) {
        ms = ms.wrapping_add(ctx.now);
    }
    if ms <= 0 {
        invalid_expire(ctx, command);
        return None;
    }
    Some(ms)
}

fn invalid_expire(ctx: &mut Ctx, command: &str) {
    ctx.error(&format!("invalid expire time in '{command}' command"));
}

/// SET key value [NX|XX] [GET] [EX s|PX ms|EXAT t|PXAT t|KEEPTTL]
pub fn set(ctx: &mut Ctx, args: Args) {
    let (key, value) = (args.get(1), args.get(2));
    if args.len() == 3 {
        // The common case, no options: one hash lookup.
        ctx.db().set(key, Value::Str(SmallBytes::new(value)), false);
        return ctx.ok();
    }
    let Some(opts) = parse_options(&args, 3, Kind::Set) else {
        return ctx.syntax_error();
    };
    set_generic(ctx, key, value, &opts, "set");
}

fn set_generic(ctx: &mut Ctx, key: &[u8], value: &[u8], opts: &SetOptions, command: &str) {
    let when = match opts.expire_arg {
        Some(arg) => match expire_time(ctx, opts.expiry, arg, command) {
            Some(w) => Some(w),
            None => return,
        },
        None => None,
    };
    let found = if opts.get {
        match get_str!(ctx, key) {
            Err(()) => return,
            Ok(old) => {
                let found = old.is_some();
                reply::opt_bulk(ctx.out, old.map(|s| s.as_slice()));
                found
            }
        }
    } else {
        let now = ctx.now;
        ctx.db().contains(key, now)
    };
    if (opts.nx && found) || (opts.xx && !found) {
        if !opts.get {
            reply::null(ctx.out);
        }
        return;
    }
    let db = ctx.db();
    db.set(
        key,
        Value::Str(SmallBytes::new(value)),
        opts.expiry == Expiry::KeepTtl,
    );
    if let Some(when) = when {
        db.set_expire(key, when);
    }
    if !opts.get {
        ctx.ok();
    }
}

pub fn setnx(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    let db = ctx.db();
    if db.contains(args.get(1), now) {
        reply::raw(ctx.out, reply::ZERO);
    } else {
        db.set(args.get(1), Value::Str(SmallBytes::new(args.get(2))), false);
        reply::raw(ctx.out, reply::ONE);
    }
}

fn set_with_expiry(ctx: &mut Ctx, args: Args, unit: Expiry, command: &str) {
    let opts = SetOptions {
        nx: false,
        xx: false,
        get: false,
        expiry: unit,
        expire_arg: Some(args.get(2)),
    };
    set_generic(ctx, args.get(1), args.get(3), &opts, command);
}

pub fn setex(ctx: &mut Ctx, args: Args) {
    set_with_expiry(ctx, args, Expiry::Ex, "setex");
}

pub fn psetex(ctx: &mut Ctx, args: Args) {
    set_with_expiry(ctx, args, Expiry::Px, "psetex");
}

pub fn getset(ctx: &mut Ctx, args: Args) {
    let opts = SetOptions {
        nx: false,
        xx: false,
        get: true,
        expiry: Expiry::None,
        expire_arg: None,
    };
    set_generic(ctx, args.get(1), args.get(2), &opts, "getset");
}

pub fn getdel(ctx: &mut Ctx, args: Args) {
    let key = args.get(1);
    match get_str!(ctx, key) {
        Err(()) => {}
        Ok(None) => reply::null(ctx.out),
        Ok(Some(s)) => {
            reply::bulk(ctx.out, s);
            ctx.db().remove(key);
        }
    }
}

/// GETEX key [EX s|PX ms|EXAT t|PXAT t|PERSIST]
pub fn getex(ctx: &mut Ctx, args: Args) {
    let Some(opts) = parse_options(&args, 2, Kind::GetEx) else {
        return ctx.syntax_error();
    };
    let key = args.get(1);
    // As redis: a missing key or a wrong type is reported before a bad expiry time.
    match get_str!(ctx, key) {
        Err(()) => return,
        Ok(None) => return reply::null(ctx.out),
        Ok(Some(_)) => {}
    }
    let when = match opts.expire_arg {
        Some(arg) => match expire_time(ctx, opts.expiry, arg, "getex") {
            Some(w) => Some(w),
            None => return,
        },
        None => None,
    };
    let now = ctx.now;
    let db = &mut ctx.store.dbs[ctx.session.db];
    if let Some(Value::Str(s)) = db.keys.get(key) {
        reply::bulk(ctx.out, s);
    }
    match when {
        // An absolute time already past deletes the key, as redis does.
        Some(w) if w <= now => {
            db.remove(key);
        }
        Some(w) => db.set_expire(key, w),
        None if opts.expiry == Expiry::Persist => {
            db.persist(key);
        }
        None => {}
    }
}

pub fn mget(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    reply::array(ctx.out, args.len() - 1);
    let db = &mut ctx.store.dbs[ctx.session.db];
    for key in args.iter_from(1) {
        match db.get(key, now) {
            Some(Value::Str(s)) => reply::bulk(ctx.out, s),
            _ => reply::null(ctx.out),
        }
    }
}

pub fn mset(ctx: &mut Ctx, args: Args) {
    if args.len().is_multiple_of(2) {
        return ctx.arity_error("mset");
    }
    let db = ctx.db();
    for i in (1..args.len()).step_by(2) {
        db.set(
            args.get(i),
            Value::Str(SmallBytes::new(args.get(i + 1))),
            false,
        );
    }
    ctx.ok();
}

pub fn msetnx(ctx: &mut Ctx, args: Args) {
    if args.len().is_multiple_of(2) {
        return ctx.arity_error("msetnx");
    }
    let now = ctx.now;
    let db = ctx.db();
    if (1..args.len())
        .step_by(2)
        .any(|i| db.contains(args.get(i), now))
    {
        return reply::raw(ctx.out, reply::ZERO);
    }
    for i in (1..args.len()).step_by(2) {
        db.set(
            args.get(i),
            Value::Str(SmallBytes::new(args.get(i + 1))),
            false,
        );
    }
    reply::raw(ctx.out, reply::ONE);
}

/// INCR/DECR/INCRBY/DECRBY: the stored string must be a canonical i64.
fn incr_by(ctx: &mut Ctx, key: &[u8], by: i64) {
    let now = ctx.now;
    let db = &mut ctx.store.dbs[ctx.session.db];
    let slot = match db.get_mut(key, now) {
        Some(Value::Str(s)) => Some(s),
        Some(_) => return reply::error(ctx.out, reply::WRONGTYPE),
        None => None,
    };
    let old = match &slot {
        Some(s) => match parse_i64(s) {
            Some(v) => v,
            None => return reply::error(ctx.out, reply::NOT_INTEGER),
        },
        None => 0,
    };
    let Some(new) = old.checked_add(by) else {
        return reply::error(ctx.out, reply::OVERFLOW);
    };
    let value = SmallBytes::from_i64(new);
    match slot {
        Some(s) => *s = value,
        None => {
            db.insert_new(key, Value::Str(value));
        }
    }
    reply::int(ctx.out, new);
}

pub fn incr(ctx: &mut Ctx, args: Args) {
    incr_by(ctx, args.get(1), 1);
}

pub fn decr(ctx: &mut Ctx, args: Args) {
    incr_by(ctx, args.get(1), -1);
}

pub fn incrby(ctx: &mut Ctx, args: Args) {
    if let Some(by) = ctx.int_arg(args.get(2)) {
        incr_by(ctx, args.get(1), by);
    }
}

pub fn decrby(ctx: &mut Ctx, args: Args) {
    let Some(by) = ctx.int_arg(args.get(2)) else {
        return;
    };
    if by == i64::MIN {
        return ctx.error("decrement would overflow");
    }
    incr_by(ctx, args.get(1), -by);
}

/// INCRBYFLOAT: redis computes in C `long double` (x87 80-bit) and prints with `%.17Lf`,
/// trailing zeros trimmed; `long_double` reproduces that arithmetic exactly.
pub fn incrbyfloat(ctx: &mut Ctx, args: Args) {
    use crate::long_double::{self, LongDouble};
    let key = args.get(1);
    let old = match get_str!(ctx, key) {
        Err(()) => return,
        Ok(v) => v.map(|s| long_double::parse(s)),
    };
    let value = match old {
        None => Some(LongDouble::ZERO),
        Some(v) => v,
    };
    let (Some(value), Some(incr)) = (value, long_double::parse(args.get(2))) else {
        return ctx.error(reply::NOT_FLOAT);
    };
    let sum = value.add(incr);
    if !sum.is_finite() {
        return ctx.error("increment would produce NaN or Infinity");
    }
    let text = sum.to_human_string();
    reply::bulk(ctx.out, &text);
    ctx.db()
        .set(key, Value::Str(SmallBytes::from_vec(text)), true);
}

pub fn append(ctx: &mut Ctx, args: Args) {
    let (key, tail) = (args.get(1), args.get(2));
    let now = ctx.now;
    let db = &mut ctx.store.dbs[ctx.session.db];
    match db.get_mut(key, now) {
        None => {
            db.insert_new(key, Value::Str(SmallBytes::new(tail)));
            reply::int(ctx.out, tail.len() as i64);
        }
        Some(Value::Str(s)) => {
            if s.len() + tail.len() > STRING_MAX {
                return reply::error(ctx.out, TOO_BIG);
            }
            let mut v = Vec::with_capacity(s.len() + tail.len());
            v.extend_from_slice(s);
            v.extend_from_slice(tail);
            let len = v.len();
            *s = SmallBytes::from_vec(v);
            reply::int(ctx.out, len as i64);
        }
        Some(_) => reply::error(ctx.out, reply::WRONGTYPE),
    }
}

pub fn strlen(ctx: &mut Ctx, args: Args) {
    if let Ok(s) = get_str!(ctx, args.get(1)) {
        let n = s.map_or(0, |s| s.len());
        reply::int(ctx.out, n as i64);
    }
}

/// GETRANGE key start end (inclusive, negative from the end), as redis 7.0.
pub fn getrange(ctx: &mut Ctx, args: Args) {
    let Some(mut start) = ctx.int_arg(args.get(2)) else {
        return;
    };
    let Some(mut end) = ctx.int_arg(args.get(3)) else {
        return;
    };
    let Ok(s) = get_str!(ctx, args.get(1)) else {
        return;
    };
    let s = s.map_or(&[][..], |s| s.as_slice());
    if start < 0 && end < 0 && start > end {
        return reply::bulk(ctx.out, b"");
    }
    let len = s.len() as i64;
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    end = end.max(0);
    if end >= len {
        end = len - 1;
    }
    if start > end || len == 0 {
        return reply::bulk(ctx.out, b"");
    }
    let slice = &s[start as usize..=end as usize];
    reply::bulk(ctx.out, slice);
}

/// SETRANGE key offset value: overwrite from `offset`, zero-padding as needed.
pub fn setrange(ctx: &mut Ctx, args: Args) {
    let (key, value) = (args.get(1), args.get(3));
    let Some(offset) = ctx.int_arg(args.get(2)) else {
        return;
    };
    if offset < 0 {
        return ctx.error("offset is out of range");
    }
    let offset = offset as usize;
    let old = match get_str!(ctx, key) {
        Err(()) => return,
        Ok(old) => old.map(|s| s.to_vec()),
    };
    if old.is_none() && value.is_empty() {
        return reply::raw(ctx.out, reply::ZERO);
    }
    let mut v = old.unwrap_or_default();
    if value.is_empty() {
        return reply::int(ctx.out, v.len() as i64);
    }
    if offset + value.len() > STRING_MAX {
        return ctx.error(TOO_BIG);
    }
    if v.len() < offset + value.len() {
        v.resize(offset + value.len(), 0);
    }
    v[offset..offset + value.len()].copy_from_slice(value);
    let len = v.len();
    ctx.db().set(key, Value::Str(SmallBytes::from_vec(v)), true);
    reply::int(ctx.out, len as i64);
}
