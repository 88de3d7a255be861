//! Keyspace commands: DEL, EXISTS, TYPE, the EXPIRE family, KEYS, SCAN, RENAME, databases.

use super::Ctx;
use crate::globmatch;
use crate::protocol::reply;
use crate::protocol::request::Args;
use crate::store::{Value, DATABASES};

pub fn del(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    let db = ctx.db();
    let mut deleted = 0;
    for key in args.iter_from(1) {
        db.expire_if_needed(key, now);
        if db.remove(key).is_some() {
            deleted += 1;
        }
    }
    reply::int(ctx.out, deleted);
}

/// EXISTS (and TOUCH): how many of the keys exist, counting repeats.
pub fn exists(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    let db = ctx.db();
    let n = args.iter_from(1).filter(|k| db.contains(k, now)).count();
    reply::int(ctx.out, n as i64);
}

pub fn type_(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    let name = ctx
        .db()
        .get(args.get(1), now)
        .map_or("none", Value::type_name);
    reply::simple(ctx.out, name);
}

/// The EXPIRE family, as redis's `expireGenericCommand`. `base` is added to the argument
/// (now for EXPIRE/PEXPIRE, 0 for the *AT forms); `seconds` scales it by 1000.
fn expire_generic(ctx: &mut Ctx, args: Args, base: i64, seconds: bool) {
    let (mut nx, mut xx, mut gt, mut lt) = (false, false, false, false);
    for opt in args.iter_from(3) {
        match opt.to_ascii_lowercase().as_slice() {
            b"nx" => nx = true,
            b"xx" => xx = true,
            b"gt" => gt = true,
            b"lt" => lt = true,
            _ => {
                let mut msg = b"Unsupported option ".to_vec();
                msg.extend_from_slice(super::c_str(opt, usize::MAX));
                return reply::error_sanitized(ctx.out, &msg);
            }
        }
    }
    if nx && (xx || gt || lt) {
        return ctx.error("NX and XX, GT or LT options at the same time are not compatible");
    }
    if gt && lt {
        return ctx.error("GT and LT options at the same time are not compatible");
    }
    let Some(mut when) = ctx.int_arg(args.get(2)) else {
        return;
    };
    let name = String::from_utf8_lossy(&args.get(0).to_ascii_lowercase()).into_owned();
    if seconds {
        if !(i64::MIN / 1000..=i64::MAX / 1000).contains(&when) {
            return ctx.error(&format!("invalid expire time in '{name}' command"));
        }
        when *= 1000;
    }
    if when > i64::MAX - base {
        return ctx.error(&format!("invalid expire time in '{name}' command"));
    }
    when += base;
    let key = args.get(1);
    let now = ctx.now;
    let db = ctx.db();
    if !db.contains(key, now) {
        return reply::raw(ctx.out, reply::ZERO);
    }
    let current = db.expire_at(key);
    let refused = (nx && current.is_some())
        || (xx && current.is_none())
        || (gt && current.is_none_or(|c| when <= c))
        || (lt && current.is_some_and(|c| when >= c));
    if refused {
        return reply::raw(ctx.out, reply::ZERO);
    }
    if when <= now {
        db.remove(key);
    } else {
        db.set_expire(key, when);
    }
    reply::raw(ctx.out, reply::ONE);
}

pub fn expire(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    expire_generic(ctx, args, now, true);
}

pub fn pexpire(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    expire_generic(ctx, args, now, false);
}

pub fn expireat(ctx: &mut Ctx, args: Args) {
    expire_generic(ctx, args, 0, true);
}

pub fn pexpireat(ctx: &mut Ctx, args: Args) {
    expire_generic(ctx, args, 0, false);
}

/// TTL and friends: -2 for a missing key, -1 without a TTL.
fn ttl_generic(ctx: &mut Ctx, args: Args, ms: bool, absolute: bool) {
    let now = ctx.now;
    let db = ctx.db();
    let key = args.get(1);
    if !db.contains(key, now) {
        return reply::int(ctx.out, -2);
    }
    let Some(when) = db.expire_at(key) else {
        return reply::int(ctx.out, -1);
    };
    let ttl = if absolute { when } else { (when - now).max(0) };
    // redis's (ttl+500)/1000, without overflowing near i64::MAX (EXPIRETIME of PXAT
    // 9223372036854775807 is 9223372036854776 in redis).
    let seconds = ttl / 1000 + (ttl % 1000 + 500) / 1000;
    reply::int(ctx.out, if ms { ttl } else { seconds });
}

pub fn ttl(ctx: &mut Ctx, args: Args) {
    ttl_generic(ctx, args, false, false);
}

pub fn pttl(ctx: &mut Ctx, args: Args) {
    ttl_generic(ctx, args, true, false);
}

pub fn expiretime(ctx: &mut Ctx, args: Args) {
    ttl_generic(ctx, args, false, true);
}

pub fn pexpiretime(ctx: &mut Ctx, args: Args) {
    ttl_generic(ctx, args, true, true);
}

pub fn persist(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    let db = ctx.db();
    let key = args.get(1);
    let done = db.contains(key, now) && db.persist(key);
    reply::int(ctx.out, i64::from(done));
}

pub fn keys(ctx: &mut Ctx, args: Args) {
    let pattern = args.get(1);
    let all = pattern == b"*";
    let now = ctx.now;
    let db = &ctx.store.dbs[ctx.session.db];
    let live = |k: &[u8]| db.expires.is_empty() || db.expires.get(k).is_none_or(|&w| w > now);
    let found: Vec<&[u8]> = db
        .keys
        .keys()
        .map(|k| k.as_slice())
        .filter(|k| (all || globmatch::matches(pattern, k)) && live(k))
        .collect();
    reply::array(ctx.out, found.len());
    for k in found {
        reply::bulk(ctx.out, k);
    }
}

/// `strtoul` as redis's `parseScanCursorOrReply` uses it: decimal, optional sign (a minus
/// wraps around, as in C), no blanks, no overflow.
fn parse_cursor(s: &[u8]) -> Option<u64> {
    let (neg, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let v = std::str::from_utf8(digits).ok()?.parse::<u64>().ok()?;
    Some(if neg { v.wrapping_neg() } else { v })
}

/// SCAN cursor [MATCH pattern] [COUNT count] [TYPE type]
///
/// The cursor is a position in the database's dense entry vector, walked from the end
/// towards the start: cursor 0 starts at the end, and the reply's cursor is the position the
/// next call continues below. Deletions move the last entry into the hole (`swap_remove`);
/// the last entry sits at or above any cursor handed out, so it is either already returned
/// (and may be returned again) or moves to a position still ahead of the cursor. Every key
/// present for the whole scan is therefore returned at least once, SCAN's guarantee.
pub fn scan(ctx: &mut Ctx, args: Args) {
    let Some(cursor) = parse_cursor(args.get(1)) else {
        return ctx.error("invalid cursor");
    };
    let mut count: usize = 10;
    let mut pattern: Option<&[u8]> = None;
    let mut type_filter: Option<&[u8]> = None;
    let mut i = 2;
    while i < args.len() {
        let opt = args.get(i);
        let has_value = args.len() - i >= 2;
        if opt.eq_ignore_ascii_case(b"count") && has_value {
            let Some(n) = ctx.int_arg(args.get(i + 1)) else {
                return;
            };
            if n < 1 {
                return ctx.syntax_error();
            }
            count = n as usize;
        } else if opt.eq_ignore_ascii_case(b"match") && has_value {
            let p = args.get(i + 1);
            pattern = (p != b"*").then_some(p);
        } else if opt.eq_ignore_ascii_case(b"type") && has_value {
            type_filter = Some(args.get(i + 1));
        } else {
            return ctx.syntax_error();
        }
        i += 2;
    }
    let now = ctx.now;
    let db = ctx.db();
    let len = db.keys.len() as u64;
    let top = if cursor == 0 || cursor > len {
        len
    } else {
        cursor
    } as usize;
    let bottom = top.saturating_sub(count);
    let mut found: Vec<Vec<u8>> = Vec::new();
    let mut expired: Vec<Vec<u8>> = Vec::new();
    for idx in (bottom..top).rev() {
        let Some((key, value)) = db.keys.get_index(idx) else {
            continue;
        };
        // As redis's scanGenericCommand: a key that matched the pattern and has expired is
        // deleted; one that did not match is left alone.
        if pattern.is_some_and(|p| !globmatch::matches(p, key)) {
            continue;
        }
        if db.expires.get(key.as_slice()).is_some_and(|&w| w <= now) {
            expired.push(key.to_vec());
            continue;
        }
        if type_filter.is_some_and(|t| !t.eq_ignore_ascii_case(value.type_name().as_bytes())) {
            continue;
        }
        found.push(key.to_vec());
    }
    for key in expired {
        db.remove(&key);
    }
    reply::array(ctx.out, 2);
    reply::int_bulk(ctx.out, bottom as i64);
    reply::array(ctx.out, found.len());
    for k in &found {
        reply::bulk(ctx.out, k);
    }
}

pub fn randomkey(ctx: &mut Ctx, _args: Args) {
    let now = ctx.now;
    let store = &mut *ctx.store;
    let db = &mut store.dbs[ctx.session.db];
    // A few tries past expired keys (which are deleted on the way), as redis.
    for _ in 0..100 {
        if db.keys.is_empty() {
            break;
        }
        let i = store.rng.below(db.keys.len());
        let Some((key, _)) = db.keys.get_index(i) else {
            break;
        };
        let key = key.to_vec();
        if db.expire_if_needed(&key, now) {
            continue;
        }
        return reply::bulk(ctx.out, &key);
    }
    reply::null(ctx.out);
}

fn rename_generic(ctx: &mut Ctx, args: Args, nx: bool) {
    let (src, dst) = (args.get(1), args.get(2));
    let now = ctx.now;
    let db = ctx.db();
    if !db.contains(src, now) {
        return ctx.error(reply::NO_SUCH_KEY);
    }
    if src == dst {
        return if nx {
            reply::raw(ctx.out, reply::ZERO)
        } else {
            ctx.ok()
        };
    }
    if nx && db.contains(dst, now) {
        return reply::raw(ctx.out, reply::ZERO);
    }
    let when = db.expire_at(src);
    let Some(value) = db.remove(src) else {
        return ctx.error(reply::NO_SUCH_KEY);
    };
    db.remove(dst);
    db.set(dst, value, false);
    if let Some(w) = when {
        db.set_expire(dst, w);
    }
    if nx {
        reply::raw(ctx.out, reply::ONE);
    } else {
        ctx.ok();
    }
}

pub fn rename(ctx: &mut Ctx, args: Args) {
    rename_generic(ctx, args, false);
}

pub fn renamenx(ctx: &mut Ctx, args: Args) {
    rename_generic(ctx, args, true);
}

pub fn dbsize(ctx: &mut Ctx, _args: Args) {
    let n = ctx.db().len();
    reply::int(ctx.out, n as i64);
}

/// FLUSHDB / FLUSHALL accept one optional SYNC or ASYNC (both flush at once here).
fn flush_mode_ok(args: &Args) -> bool {
    args.len() == 1
        || (args.len() == 2
            && (args.get(1).eq_ignore_ascii_case(b"sync")
                || args.get(1).eq_ignore_ascii_case(b"async")))
}

pub fn flushdb(ctx: &mut Ctx, args: Args) {
    if !flush_mode_ok(&args) {
        return ctx.syntax_error();
    }
    ctx.db().clear();
    ctx.ok();
}

pub fn flushall(ctx: &mut Ctx, args: Args) {
    if !flush_mode_ok(&args) {
        return ctx.syntax_error();
    }
    for db in &mut ctx.store.dbs {
        db.clear();
    }
    ctx.ok();
}

/// A database index argument: an integer that fits a C int (else `not_int` is the error).
fn db_index(ctx: &mut Ctx, arg: &[u8], not_int: &str) -> Option<i64> {
    match crate::numeric::parse_i64(arg) {
        Some(n) if i32::try_from(n).is_ok() => Some(n),
        _ => {
            ctx.error(not_int);
            None
        }
    }
}

pub fn select(ctx: &mut Ctx, args: Args) {
    let Some(id) = db_index(ctx, args.get(1), reply::NOT_INTEGER) else {
        return;
    };
    if !(0..DATABASES as i64).contains(&id) {
        return ctx.error("DB index is out of range");
    }
    ctx.session.db = id as usize;
    ctx.ok();
}

pub fn swapdb(ctx: &mut Ctx, args: Args) {
    let Some(a) = db_index(ctx, args.get(1), "invalid first DB index") else {
        return;
    };
    let Some(b) = db_index(ctx, args.get(2), "invalid second DB index") else {
        return;
    };
    let range = 0..DATABASES as i64;
    if !range.contains(&a) || !range.contains(&b) {
        return ctx.error("DB index is out of range");
    }
    ctx.store.dbs.swap(a as usize, b as usize);
    ctx.ok();
}
