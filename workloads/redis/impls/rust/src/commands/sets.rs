//! Set commands. A set is an `IndexSet` of `SmallBytes`: O(1) membership, and O(1) uniform
//! random picks for SPOP/SRANDMEMBER (a random position in the dense entry vector).

use super::{get_or_create, Ctx};
use crate::protocol::reply;
use crate::protocol::request::Args;
use crate::store::small_bytes::SmallBytes;
use crate::store::Value;
use crate::{typed_get, typed_get_mut};

pub fn sadd(ctx: &mut Ctx, args: Args) {
    let Some(Value::Set(set)) = get_or_create(
        ctx,
        args.get(1),
        |v| matches!(v, Value::Set(_)),
        || Value::Set(Box::default()),
    ) else {
        return;
    };
    let mut added = 0;
    for m in args.iter_from(2) {
        if !set.contains(m) {
            set.insert(SmallBytes::new(m));
            added += 1;
        }
    }
    reply::int(ctx.out, added);
}

pub fn srem(ctx: &mut Ctx, args: Args) {
    let key = args.get(1);
    let removed = match typed_get_mut!(ctx, key, Set) {
        Ok(Some(s)) => args.iter_from(2).filter(|m| s.swap_remove(*m)).count(),
        Ok(None) => 0,
        Err(()) => return ctx.wrong_type(),
    };
    ctx.db().remove_if_empty(key);
    reply::int(ctx.out, removed as i64);
}

pub fn smembers(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    let out = &mut *ctx.out;
    match ctx.store.dbs[ctx.session.db].get(args.get(1), now) {
        Some(Value::Set(s)) => {
            reply::set(out, s.len());
            for m in s.iter() {
                reply::bulk(out, m);
            }
        }
        None => reply::set(out, 0),
        Some(_) => reply::error(out, reply::WRONGTYPE),
    }
}

pub fn sismember(ctx: &mut Ctx, args: Args) {
    match typed_get!(ctx, args.get(1), Set) {
        Ok(s) => {
            let found = s.is_some_and(|s| s.contains(args.get(2)));
            reply::int(ctx.out, i64::from(found));
        }
        Err(()) => ctx.wrong_type(),
    }
}

pub fn smismember(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    let out = &mut *ctx.out;
    let set = match ctx.store.dbs[ctx.session.db].get(args.get(1), now) {
        Some(Value::Set(s)) => Some(s),
        None => None,
        Some(_) => return reply::error(out, reply::WRONGTYPE),
    };
    reply::array(out, args.len() - 2);
    for m in args.iter_from(2) {
        let found = set.is_some_and(|s| s.contains(m));
        reply::raw(out, if found { reply::ONE } else { reply::ZERO });
    }
}

pub fn scard(ctx: &mut Ctx, args: Args) {
    match typed_get!(ctx, args.get(1), Set) {
        Ok(s) => {
            let n = s.map_or(0, |s| s.len());
            reply::int(ctx.out, n as i64);
        }
        Err(()) => ctx.wrong_type(),
    }
}

/// A count argument that must be ≥ 0 (SPOP, LPOP, ZPOPMIN …).
pub fn positive_count(ctx: &mut Ctx, arg: &[u8]) -> Option<usize> {
    match crate::numeric::parse_i64(arg) {
        Some(n) if n >= 0 => Some(n as usize),
        _ => {
            ctx.error("value is out of range, must be positive");
            None
        }
    }
}

/// SPOP key [count]
pub fn spop(ctx: &mut Ctx, args: Args) {
    if args.len() > 3 {
        return ctx.syntax_error();
    }
    let count = if args.len() == 3 {
        match positive_count(ctx, args.get(2)) {
            Some(n) => Some(n),
            None => return,
        }
    } else {
        None
    };
    let key = args.get(1);
    let now = ctx.now;
    let store = &mut *ctx.store;
    let out = &mut *ctx.out;
    let db = &mut store.dbs[ctx.session.db];
    let set = match db.get_mut(key, now) {
        Some(Value::Set(s)) => s,
        None if count.is_some() => return reply::set(out, 0),
        None => return reply::null(out),
        Some(_) => return reply::error(out, reply::WRONGTYPE),
    };
    match count {
        None => {
            let i = store.rng.below(set.len());
            if let Some(m) = set.swap_remove_index(i) {
                reply::bulk(out, &m);
            }
        }
        Some(n) => {
            let n = n.min(set.len());
            reply::set(out, n);
            for _ in 0..n {
                let i = store.rng.below(set.len());
                if let Some(m) = set.swap_remove_index(i) {
                    reply::bulk(out, &m);
                }
            }
        }
    }
    db.remove_if_empty(key);
}

/// SRANDMEMBER key [count]: a positive count gives distinct members, a negative one allows
/// repeats.
pub fn srandmember(ctx: &mut Ctx, args: Args) {
    if args.len() > 3 {
        return ctx.syntax_error();
    }
    let count = if args.len() == 3 {
        match crate::numeric::parse_i64(args.get(2)) {
            Some(n) if n != i64::MIN => Some(n),
            Some(_) => {
                return ctx.error(
                    "value is out of range, value must between -9223372036854775807 and 9223372036854775807",
                )
            }
            None => return ctx.not_integer(),
        }
    } else {
        None
    };
    let now = ctx.now;
    let store = &mut *ctx.store;
    let out = &mut *ctx.out;
    let set = match store.dbs[ctx.session.db].get(args.get(1), now) {
        Some(Value::Set(s)) => s,
        None if count.is_some() => return reply::raw(out, reply::EMPTY_ARRAY),
        None => return reply::null(out),
        Some(_) => return reply::error(out, reply::WRONGTYPE),
    };
    let rng = &mut store.rng;
    match count {
        None => {
            let i = rng.below(set.len());
            reply::opt_bulk(out, set.get_index(i).map(|m| m.as_slice()));
        }
        Some(n) if n < 0 => {
            let n = n.unsigned_abs() as usize;
            reply::array(out, n);
            for _ in 0..n {
                // The count is unbounded; a reply past the output cap closes the client, so
                // there is no point building the rest of it.
                if out.len() > crate::connection::OUTPUT_LIMIT {
                    break;
                }
                let i = rng.below(set.len());
                reply::opt_bulk(out, set.get_index(i).map(|m| m.as_slice()));
            }
        }
        Some(n) => {
            let n = (n as usize).min(set.len());
            // A partial Fisher-Yates shuffle of positions picks n distinct members.
            let mut idx: Vec<usize> = (0..set.len()).collect();
            reply::array(out, n);
            for k in 0..n {
                let j = k + rng.below(idx.len() - k);
                idx.swap(k, j);
                reply::opt_bulk(out, set.get_index(idx[k]).map(|m| m.as_slice()));
            }
        }
    }
}
