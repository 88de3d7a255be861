//! Hash commands. A hash is an `IndexMap` of field → value, both `SmallBytes`.

use super::{get_or_create, Ctx};
use crate::long_double;
use crate::numeric::parse_i64;
use crate::protocol::reply;
use crate::protocol::request::Args;
use crate::store::small_bytes::SmallBytes;
use crate::store::{Map, Value};
use crate::{typed_get, typed_get_mut};

type Hash = Map<SmallBytes, SmallBytes>;

/// The hash at `key`, created if absent; `None` after replying WRONGTYPE.
fn hash_or_create<'a>(ctx: &'a mut Ctx, key: &[u8]) -> Option<&'a mut Hash> {
    match get_or_create(
        ctx,
        key,
        |v| matches!(v, Value::Hash(_)),
        || Value::Hash(Box::default()),
    ) {
        Some(Value::Hash(h)) => Some(h),
        _ => None,
    }
}

/// Sets a field; true if it is new.
fn set_field(h: &mut Hash, field: &[u8], value: &[u8]) -> bool {
    match h.get_mut(field) {
        Some(v) => {
            *v = SmallBytes::new(value);
            false
        }
        None => {
            h.insert(SmallBytes::new(field), SmallBytes::new(value));
            true
        }
    }
}

fn hset_generic(ctx: &mut Ctx, args: Args, name: &str) -> Option<i64> {
    if !args.len().is_multiple_of(2) {
        ctx.arity_error(name);
        return None;
    }
    let h = hash_or_create(ctx, args.get(1))?;
    let mut added = 0;
    for i in (2..args.len()).step_by(2) {
        if set_field(h, args.get(i), args.get(i + 1)) {
            added += 1;
        }
    }
    Some(added)
}

pub fn hset(ctx: &mut Ctx, args: Args) {
    if let Some(added) = hset_generic(ctx, args, "hset") {
        reply::int(ctx.out, added);
    }
}

pub fn hmset(ctx: &mut Ctx, args: Args) {
    if hset_generic(ctx, args, "hmset").is_some() {
        ctx.ok();
    }
}

pub fn hsetnx(ctx: &mut Ctx, args: Args) {
    let Some(h) = hash_or_create(ctx, args.get(1)) else {
        return;
    };
    let added = if h.contains_key(args.get(2)) {
        false
    } else {
        set_field(h, args.get(2), args.get(3))
    };
    reply::int(ctx.out, i64::from(added));
}

pub fn hget(ctx: &mut Ctx, args: Args) {
    match typed_get!(ctx, args.get(1), Hash) {
        Ok(h) => {
            let v = h.and_then(|h| h.get(args.get(2))).map(|v| v.as_slice());
            reply::opt_bulk(ctx.out, v);
        }
        Err(()) => ctx.wrong_type(),
    }
}

pub fn hmget(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    let out = &mut *ctx.out;
    let h = match ctx.store.dbs[ctx.session.db].get(args.get(1), now) {
        Some(Value::Hash(h)) => Some(h),
        None => None,
        Some(_) => return reply::error(out, reply::WRONGTYPE),
    };
    reply::array(out, args.len() - 2);
    for f in args.iter_from(2) {
        let v = h.and_then(|h| h.get(f)).map(|v| v.as_slice());
        reply::opt_bulk(out, v);
    }
}

/// HGETALL / HKEYS / HVALS.
fn hget_all(ctx: &mut Ctx, args: Args, keys: bool, values: bool) {
    let now = ctx.now;
    let out = &mut *ctx.out;
    match ctx.store.dbs[ctx.session.db].get(args.get(1), now) {
        Some(Value::Hash(h)) => {
            if keys && values {
                reply::map(out, h.len());
            } else {
                reply::array(out, h.len());
            }
            for (k, v) in h.iter() {
                if keys {
                    reply::bulk(out, k);
                }
                if values {
                    reply::bulk(out, v);
                }
            }
        }
        None if keys && values => reply::map(out, 0),
        None => reply::raw(out, reply::EMPTY_ARRAY),
        Some(_) => reply::error(out, reply::WRONGTYPE),
    }
}

pub fn hgetall(ctx: &mut Ctx, args: Args) {
    hget_all(ctx, args, true, true);
}

pub fn hkeys(ctx: &mut Ctx, args: Args) {
    hget_all(ctx, args, true, false);
}

pub fn hvals(ctx: &mut Ctx, args: Args) {
    hget_all(ctx, args, false, true);
}

pub fn hdel(ctx: &mut Ctx, args: Args) {
    let key = args.get(1);
    let deleted = match typed_get_mut!(ctx, key, Hash) {
        Ok(Some(h)) => args
            .iter_from(2)
            .filter(|f| h.swap_remove(*f).is_some())
            .count(),
        Ok(None) => 0,
        Err(()) => return ctx.wrong_type(),
    };
    ctx.db().remove_if_empty(key);
    reply::int(ctx.out, deleted as i64);
}

pub fn hlen(ctx: &mut Ctx, args: Args) {
    match typed_get!(ctx, args.get(1), Hash) {
        Ok(h) => {
            let n = h.map_or(0, |h| h.len());
            reply::int(ctx.out, n as i64);
        }
        Err(()) => ctx.wrong_type(),
    }
}

pub fn hexists(ctx: &mut Ctx, args: Args) {
    match typed_get!(ctx, args.get(1), Hash) {
        Ok(h) => {
            let found = h.is_some_and(|h| h.contains_key(args.get(2)));
            reply::int(ctx.out, i64::from(found));
        }
        Err(()) => ctx.wrong_type(),
    }
}

pub fn hstrlen(ctx: &mut Ctx, args: Args) {
    match typed_get!(ctx, args.get(1), Hash) {
        Ok(h) => {
            let n = h.and_then(|h| h.get(args.get(2))).map_or(0, |v| v.len());
            reply::int(ctx.out, n as i64);
        }
        Err(()) => ctx.wrong_type(),
    }
}

pub fn hincrby(ctx: &mut Ctx, args: Args) {
    let Some(by) = ctx.int_arg(args.get(3)) else {
        return;
    };
    let field = args.get(2);
    let Some(h) = hash_or_create(ctx, args.get(1)) else {
        return;
    };
    let old = match h.get(field) {
        Some(v) => match parse_i64(v) {
            Some(n) => n,
            None => return reply::error(ctx.out, "hash value is not an integer"),
        },
        None => 0,
    };
    let Some(new) = old.checked_add(by) else {
        return reply::error(ctx.out, reply::OVERFLOW);
    };
    set_field(h, field, SmallBytes::from_i64(new).as_slice());
    reply::int(ctx.out, new);
}

pub fn hincrbyfloat(ctx: &mut Ctx, args: Args) {
    let Some(by) = long_double::parse(args.get(3)) else {
        return ctx.error(reply::NOT_FLOAT);
    };
    if !by.is_finite() {
        return ctx.error("value is NaN or Infinity");
    }
    let field = args.get(2);
    let Some(h) = hash_or_create(ctx, args.get(1)) else {
        return;
    };
    let old = match h.get(field) {
        Some(v) => match long_double::parse(v) {
            Some(n) => n,
            None => return reply::error(ctx.out, "hash value is not a float"),
        },
        None => long_double::LongDouble::ZERO,
    };
    let sum = old.add(by);
    if !sum.is_finite() {
        return reply::error(ctx.out, "increment would produce NaN or Infinity");
    }
    let text = sum.to_human_string();
    set_field(h, field, &text);
    reply::bulk(ctx.out, &text);
}
