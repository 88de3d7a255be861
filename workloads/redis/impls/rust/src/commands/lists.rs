//! List commands. A list is a `VecDeque` of `SmallBytes`: O(1) push and pop at both ends,
//! O(1) indexing for LINDEX/LSET/LRANGE, and elements of up to 22 bytes stored inline.

use super::{get_or_create, Ctx};
use crate::protocol::reply;
use crate::protocol::request::Args;
use crate::store::small_bytes::SmallBytes;
use crate::store::Value;
use crate::{typed_get, typed_get_mut};
use std::collections::VecDeque;

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Left,
    Right,
}

fn push(ctx: &mut Ctx, args: Args, end: End, only_existing: bool) {
    let key = args.get(1);
    let list = if only_existing {
        match typed_get_mut!(ctx, key, List) {
            Ok(Some(l)) => l,
            Ok(None) => return reply::raw(ctx.out, reply::ZERO),
            Err(()) => return ctx.wrong_type(),
        }
    } else {
        match get_or_create(
            ctx,
            key,
            |v| matches!(v, Value::List(_)),
            || Value::List(Box::default()),
        ) {
            Some(Value::List(l)) => l,
            _ => return,
        }
    };
    for v in args.iter_from(2) {
        let v = SmallBytes::new(v);
        match end {
            End::Left => list.push_front(v),
            End::Right => list.push_back(v),
        }
    }
    let len = list.len();
    reply::int(ctx.out, len as i64);
}

pub fn lpush(ctx: &mut Ctx, args: Args) {
    push(ctx, args, End::Left, false);
}

pub fn rpush(ctx: &mut Ctx, args: Args) {
    push(ctx, args, End::Right, false);
}

pub fn lpushx(ctx: &mut Ctx, args: Args) {
    push(ctx, args, End::Left, true);
}

pub fn rpushx(ctx: &mut Ctx, args: Args) {
    push(ctx, args, End::Right, true);
}

/// LPOP/RPOP key [count]
fn pop(ctx: &mut Ctx, args: Args, end: End) {
    if args.len() > 3 {
        let name = if end == End::Left { "lpop" } else { "rpop" };
        return ctx.arity_error(name);
    }
    let count = if args.len() == 3 {
        match crate::numeric::parse_i64(args.get(2)) {
            Some(n) if n >= 0 => Some(n as usize),
            _ => return ctx.error("value is out of range, must be positive"),
        }
    } else {
        None
    };
    let key = args.get(1);
    let list = match typed_get_mut!(ctx, key, List) {
        Ok(Some(l)) => l,
        Ok(None) => {
            return if count.is_some() {
                reply::null_array(ctx.out)
            } else {
                reply::null(ctx.out)
            };
        }
        Err(()) => return ctx.wrong_type(),
    };
    let take = |list: &mut VecDeque<SmallBytes>| match end {
        End::Left => list.pop_front(),
        End::Right => list.pop_back(),
    };
    match count {
        None => {
            if let Some(v) = take(list) {
                reply::bulk(ctx.out, &v);
            }
        }
        Some(0) => return reply::raw(ctx.out, reply::EMPTY_ARRAY),
        Some(n) => {
            let n = n.min(list.len());
            reply::array(ctx.out, n);
            for _ in 0..n {
                if let Some(v) = take(list) {
                    reply::bulk(ctx.out, &v);
                }
            }
        }
    }
    ctx.db().remove_if_empty(key);
}

pub fn lpop(ctx: &mut Ctx, args: Args) {
    pop(ctx, args, End::Left);
}

pub fn rpop(ctx: &mut Ctx, args: Args) {
    pop(ctx, args, End::Right);
}

pub fn llen(ctx: &mut Ctx, args: Args) {
    match typed_get!(ctx, args.get(1), List) {
        Ok(l) => {
            let n = l.map_or(0, |l| l.len());
            reply::int(ctx.out, n as i64);
        }
        Err(()) => ctx.wrong_type(),
    }
}

/// A list index, negative from the end, to a position if in range.
fn position(index: i64, len: usize) -> Option<usize> {
    let i = if index < 0 { index + len as i64 } else { index };
    (0..len as i64).contains(&i).then_some(i as usize)
}

// LINDEX and LSET look the key up (nil / no such key, WRONGTYPE) before they read the index,
// as redis's lindexCommand and lsetCommand do.
pub fn lindex(ctx: &mut Ctx, args: Args) {
    let index = crate::numeric::parse_i64(args.get(2));
    match typed_get!(ctx, args.get(1), List) {
        Ok(Some(l)) => match index {
            Some(index) => {
                let v = position(index, l.len()).map(|i| l[i].as_slice());
                reply::opt_bulk(ctx.out, v);
            }
            None => ctx.not_integer(),
        },
        Ok(None) => reply::null(ctx.out),
        Err(()) => ctx.wrong_type(),
    }
}

pub fn lset(ctx: &mut Ctx, args: Args) {
    let index = crate::numeric::parse_i64(args.get(2));
    match typed_get_mut!(ctx, args.get(1), List) {
        Ok(Some(l)) => match index.map(|index| position(index, l.len())) {
            Some(Some(i)) => {
                l[i] = SmallBytes::new(args.get(3));
                ctx.ok();
            }
            Some(None) => ctx.error(reply::OUT_OF_RANGE),
            None => ctx.not_integer(),
        },
        Ok(None) => ctx.error(reply::NO_SUCH_KEY),
        Err(()) => ctx.wrong_type(),
    }
}

/// redis's range normalisation for LRANGE/LTRIM: `None` when the range is empty.
fn normalize(mut start: i64, mut end: i64, len: usize) -> Option<(usize, usize)> {
    let len = len as i64;
    if start < 0 {
        start += len;
    }
    if end < 0 {
        end += len;
    }
    start = start.max(0);
    if start > end || start >= len {
        return None;
    }
    Some((start as usize, end.min(len - 1) as usize))
}

pub fn ltrim(ctx: &mut Ctx, args: Args) {
    let Some(start) = ctx.int_arg(args.get(2)) else {
        return;
    };
    let Some(end) = ctx.int_arg(args.get(3)) else {
        return;
    };
    let key = args.get(1);
    match typed_get_mut!(ctx, key, List) {
        Ok(Some(l)) => match normalize(start, end, l.len()) {
            Some((s, e)) => {
                l.truncate(e + 1);
                l.drain(..s);
            }
            None => l.clear(),
        },
        Ok(None) => {}
        Err(()) => return ctx.wrong_type(),
    }
    ctx.db().remove_if_empty(key);
    ctx.ok();
}

pub fn lrange(ctx: &mut Ctx, args: Args) {
    let Some(start) = ctx.int_arg(args.get(2)) else {
        return;
    };
    let Some(end) = ctx.int_arg(args.get(3)) else {
        return;
    };
    let now = ctx.now;
    let out = &mut *ctx.out;
    match ctx.store.dbs[ctx.session.db].get(args.get(1), now) {
        Some(Value::List(l)) => match normalize(start, end, l.len()) {
            Some((s, e)) => {
                reply::bulk_array(out, l.range(s..=e));
            }
            None => reply::raw(out, reply::EMPTY_ARRAY),
        },
        None => reply::raw(out, reply::EMPTY_ARRAY),
        Some(_) => reply::error(out, reply::WRONGTYPE),
    }
}

/// LREM key count element: remove up to |count| matches from the head (count > 0), the tail
/// (count < 0), or all of them (0).
pub fn lrem(ctx: &mut Ctx, args: Args) {
    let Some(count) = ctx.int_arg(args.get(2)) else {
        return;
    };
    let (key, elem) = (args.get(1), args.get(3));
    let removed = match typed_get_mut!(ctx, key, List) {
        Ok(Some(l)) => {
            let limit = if count == 0 {
                usize::MAX
            } else {
                count.unsigned_abs() as usize
            };
            let mut removed = 0;
            if count >= 0 {
                let mut i = 0;
                while i < l.len() && removed < limit {
                    if l[i].as_slice() == elem {
                        l.remove(i);
                        removed += 1;
                    } else {
                        i += 1;
                    }
                }
            } else {
                let mut i = l.len();
                while i > 0 && removed < limit {
                    i -= 1;
                    if l[i].as_slice() == elem {
                        l.remove(i);
                        removed += 1;
                    }
                }
            }
            removed
        }
        Ok(None) => 0,
        Err(()) => return ctx.wrong_type(),
    };
    ctx.db().remove_if_empty(key);
    reply::int(ctx.out, removed as i64);
}
