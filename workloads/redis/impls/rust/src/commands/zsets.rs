//! Sorted-set commands: ZADD and its options, scores, ranks, ranges, pops.

use super::sets::positive_count;
use super::{get_or_create, Ctx};
use crate::numeric::{is_c_space, parse_f64, strtod};
use crate::protocol::reply;
use crate::protocol::request::Args;
use crate::store::sorted_set::{Entry, SortedSet};
use crate::store::Value;
use crate::{typed_get, typed_get_mut};

const NAN_SCORE: &str = "resulting score is not a number (NaN)";

#[derive(Default)]
struct AddFlags {
    nx: bool,
    xx: bool,
    gt: bool,
    lt: bool,
    ch: bool,
    incr: bool,
}

pub fn zadd(ctx: &mut Ctx, args: Args) {
    zadd_generic(ctx, args, false);
}

pub fn zincrby(ctx: &mut Ctx, args: Args) {
    zadd_generic(ctx, args, true);
}

/// ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member [score member …], as redis's
/// `zaddGenericCommand` (ZINCRBY is ZADD … INCR).
fn zadd_generic(ctx: &mut Ctx, args: Args, incr: bool) {
    let mut f = AddFlags {
        incr,
        ..AddFlags::default()
    };
    let mut idx = 2;
    while idx < args.len() {
        let opt = args.get(idx).to_ascii_lowercase();
        match opt.as_slice() {
            b"nx" => f.nx = true,
            b"xx" => f.xx = true,
            b"ch" => f.ch = true,
            b"incr" => f.incr = true,
            b"gt" => f.gt = true,
            b"lt" => f.lt = true,
            _ => break,
        }
        idx += 1;
    }
    let pairs = args.len() - idx;
    if pairs % 2 == 1 || pairs == 0 {
        return ctx.syntax_error();
    }
    let pairs = pairs / 2;
    if f.nx && f.xx {
        return ctx.error("XX and NX options at the same time are not compatible");
    }
    if (f.nx && (f.gt || f.lt)) || (f.gt && f.lt) {
        return ctx.error("GT, LT, and/or NX options at the same time are not compatible");
    }
    if f.incr && pairs > 1 {
        return ctx.error("INCR option supports a single increment-element pair");
    }
    // Every score is checked before anything changes: the command applies fully or not at all.
    let mut scores = Vec::with_capacity(pairs);
    for i in 0..pairs {
        match parse_f64(args.get(idx + 2 * i)) {
            Some(s) => scores.push(s),
            None => return ctx.error(reply::NOT_FLOAT),
        }
    }
    let key = args.get(1);
    let now = ctx.now;
    let exists = match ctx.db().get(key, now) {
        Some(Value::ZSet(_)) => true,
        Some(_) => return ctx.wrong_type(),
        None => false,
    };
    let (mut added, mut updated, mut processed) = (0, 0, 0);
    let mut last_score = 0.0;
    if exists || !f.xx {
        let Some(Value::ZSet(z)) = get_or_create(
            ctx,
            key,
            |v| matches!(v, Value::ZSet(_)),
            || Value::ZSet(Box::default()),
        ) else {
            return;
        };
        for (i, &score) in scores.iter().enumerate() {
            let member = args.get(idx + 2 * i + 1);
            match add_one(z, member, score, &f) {
                Err(()) => {
                    reply::error(ctx.out, NAN_SCORE);
                    ctx.db().remove_if_empty(key);
                    return;
                }
                Ok(Outcome::Added(s)) => {
                    added += 1;
                    processed += 1;
                    last_score = s;
                }
                Ok(Outcome::Updated(s)) => {
                    updated += 1;
                    processed += 1;
                    last_score = s;
                }
                Ok(Outcome::Unchanged(s)) => {
                    processed += 1;
                    last_score = s;
                }
                Ok(Outcome::Nop) => {}
            }
        }
        ctx.db().remove_if_empty(key);
    }
    if f.incr {
        if processed > 0 {
            reply::double(ctx.out, last_score);
        } else {
            reply::null(ctx.out);
        }
    } else {
        reply::int(ctx.out, if f.ch { added + updated } else { added });
    }
}

enum Outcome {
    Added(f64),
    Updated(f64),
    Unchanged(f64),
    Nop,
}

/// redis's `zsetAdd` for one member. `Err` when the result would be NaN.
fn add_one(z: &mut SortedSet, member: &[u8], score: f64, f: &AddFlags) -> Result<Outcome, ()> {
    match z.score(member) {
        Some(current) => {
            if f.nx {
                return Ok(Outcome::Nop);
            }
            let mut score = score;
            if f.incr {
                score += current;
                if score.is_nan() {
                    return Err(());
                }
            }
            if (f.lt && score >= current) || (f.gt && score <= current) {
                return Ok(Outcome::Nop);
            }
            if score != current {
                z.insert(member, score);
                Ok(Outcome::Updated(score))
            } else {
                Ok(Outcome::Unchanged(score))
            }
        }
        None if !f.xx => {
            z.insert(member, score);
            Ok(Outcome::Added(score))
        }
        None => Ok(Outcome::Nop),
    }
}

pub fn zscore(ctx: &mut Ctx, args: Args) {
    match typed_get!(ctx, args.get(1), ZSet) {
        Ok(z) => match z.and_then(|z| z.score(args.get(2))) {
            Some(s) => reply::double(ctx.out, s),
            None => reply::null(ctx.out),
        },
        Err(()) => ctx.wrong_type(),
    }
}

pub fn zmscore(ctx: &mut Ctx, args: Args) {
    let now = ctx.now;
    let out = &mut *ctx.out;
    let z = match ctx.store.dbs[ctx.session.db].get(args.get(1), now) {
        Some(Value::ZSet(z)) => Some(z),
        None => None,
        Some(_) => return reply::error(out, reply::WRONGTYPE),
    };
    reply::array(out, args.len() - 2);
    for m in args.iter_from(2) {
        match z.and_then(|z| z.score(m)) {
            Some(s) => reply::double(out, s),
            None => reply::null(out),
        }
    }
}

pub fn zcard(ctx: &mut Ctx, args: Args) {
    match typed_get!(ctx, args.get(1), ZSet) {
        Ok(z) => {
            let n = z.map_or(0, |z| z.len());
            reply::int(ctx.out, n as i64);
        }
        Err(()) => ctx.wrong_type(),
    }
}

pub fn zrem(ctx: &mut Ctx, args: Args) {
    let key = args.get(1);
    let removed = match typed_get_mut!(ctx, key, ZSet) {
        Ok(Some(z)) => args.iter_from(2).filter(|m| z.remove(m)).count(),
        Ok(None) => 0,
        Err(()) => return ctx.wrong_type(),
    };
    ctx.db().remove_if_empty(key);
    reply::int(ctx.out, removed as i64);
}

fn rank_generic(ctx: &mut Ctx, args: Args, reverse: bool) {
    match typed_get!(ctx, args.get(1), ZSet) {
        Ok(Some(z)) => match z.rank(args.get(2)) {
            Some(r) => {
                let r = if reverse { z.len() - 1 - r } else { r };
                reply::int(ctx.out, r as i64);
            }
            None => reply::null(ctx.out),
        },
        Ok(None) => reply::null(ctx.out),
        Err(()) => ctx.wrong_type(),
    }
}

pub fn zrank(ctx: &mut Ctx, args: Args) {
    rank_generic(ctx, args, false);
}

pub fn zrevrank(ctx: &mut Ctx, args: Args) {
    rank_generic(ctx, args, true);
}

/// One end of a score range: `(1.5` is exclusive, `1.5` inclusive (redis's `zslParseRange`,
/// which uses plain `strtod`: leading blanks allowed, `inf` allowed, NaN refused).
#[derive(Clone, Copy)]
struct ScoreBound {
    value: f64,
    exclusive: bool,
}

fn parse_score_bound(s: &[u8]) -> Option<ScoreBound> {
    let (exclusive, rest) = match s.first() {
        Some(b'(') => (true, &s[1..]),
        _ => (false, s),
    };
    let start = rest
        .iter()
        .position(|&c| !is_c_space(c))
        .unwrap_or(rest.len());
    let rest = &rest[start..];
    let value = if rest.is_empty() { 0.0 } else { strtod(rest)? };
    if value.is_nan() {
        return None;
    }
    Some(ScoreBound { value, exclusive })
}

impl ScoreBound {
    /// True if `score` lies below this bound taken as a minimum.
    fn below_min(&self, score: f64) -> bool {
        if self.exclusive {
            score <= self.value
        } else {
            score < self.value
        }
    }

    /// True if `score` lies at or below this bound taken as a maximum.
    fn within_max(&self, score: f64) -> bool {
        if self.exclusive {
            score < self.value
        } else {
            score <= self.value
        }
    }
}

/// One end of a lexicographic range: `-`, `+`, `[x` or `(x`.
#[derive(Clone, Copy)]
enum LexBound<'a> {
    Min,
    Max,
    Inclusive(&'a [u8]),
    Exclusive(&'a [u8]),
}

fn parse_lex_bound(s: &[u8]) -> Option<LexBound<'_>> {
    match s.first() {
        Some(b'-') if s.len() == 1 => Some(LexBound::Min),
        Some(b'+') if s.len() == 1 => Some(LexBound::Max),
        Some(b'[') => Some(LexBound::Inclusive(&s[1..])),
        Some(b'(') => Some(LexBound::Exclusive(&s[1..])),
        _ => None,
    }
}

impl LexBound<'_> {
    fn below_min(&self, m: &[u8]) -> bool {
        match *self {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Inclusive(b) => m < b,
            LexBound::Exclusive(b) => m <= b,
        }
    }

    fn within_max(&self, m: &[u8]) -> bool {
        match *self {
            LexBound::Min => false,
            LexBound::Max => true,
            LexBound::Inclusive(b) => m <= b,
            LexBound::Exclusive(b) => m < b,
        }
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum RangeType {
    Auto,
    Rank,
    Score,
    Lex,
}

/// ZRANGE and its older forms, as redis 7.0's `zrangeGenericCommand`.
/// `preset` / `preset_rev` are what the command name fixes (ZREVRANGE, ZRANGEBYSCORE …).
fn zrange_generic(ctx: &mut Ctx, args: Args, preset: RangeType, preset_rev: Option<bool>) {
    let mut rtype = preset;
    let mut reverse = preset_rev;
    let mut withscores = false;
    let (mut offset, mut limit) = (0i64, -1i64);
    let mut j = 4;
    while j < args.len() {
        let opt = args.get(j);
        let left = args.len() - j - 1;
        if opt.eq_ignore_ascii_case(b"withscores") {
            withscores = true;
        } else if opt.eq_ignore_ascii_case(b"limit") && left >= 2 {
            let Some(o) = ctx.int_arg(args.get(j + 1)) else {
                return;
            };
            let Some(l) = ctx.int_arg(args.get(j + 2)) else {
                return;
            };
            (offset, limit) = (o, l);
            j += 2;
        } else if reverse.is_none() && opt.eq_ignore_ascii_case(b"rev") {
            reverse = Some(true);
        } else if rtype == RangeType::Auto && opt.eq_ignore_ascii_case(b"bylex") {
            rtype = RangeType::Lex;
        } else if rtype == RangeType::Auto && opt.eq_ignore_ascii_case(b"byscore") {
            rtype = RangeType::Score;
        } else {
            return ctx.syntax_error();
        }
        j += 1;
    }
    let reverse = reverse.unwrap_or(false);
    if rtype == RangeType::Auto {
        rtype = RangeType::Rank;
    }
    if limit != -1 && rtype == RangeType::Rank {
        return ctx.error(
            "syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX",
        );
    }
    if withscores && rtype == RangeType::Lex {
        return ctx.error("syntax error, WITHSCORES not supported in combination with BYLEX");
    }
    // Score and lex ranges are given as max, min when reversed.
    let (min_arg, max_arg) = if reverse && rtype != RangeType::Rank {
        (args.get(3), args.get(2))
    } else {
        (args.get(2), args.get(3))
    };
    enum Range<'a> {
        Rank(i64, i64),
        Score(ScoreBound, ScoreBound),
        Lex(LexBound<'a>, LexBound<'a>),
    }
    let range = match rtype {
        RangeType::Score => match (parse_score_bound(min_arg), parse_score_bound(max_arg)) {
            (Some(a), Some(b)) => Range::Score(a, b),
            _ => return ctx.error("min or max is not a float"),
        },
        RangeType::Lex => match (parse_lex_bound(min_arg), parse_lex_bound(max_arg)) {
            (Some(a), Some(b)) => Range::Lex(a, b),
            _ => return ctx.error("min or max not valid string range item"),
        },
        _ => {
            let Some(s) = ctx.int_arg(min_arg) else {
                return;
            };
            let Some(e) = ctx.int_arg(max_arg) else {
                return;
            };
            Range::Rank(s, e)
        }
    };
    let now = ctx.now;
    let out = &mut *ctx.out;
    let z = match ctx.store.dbs[ctx.session.db].get(args.get(1), now) {
        Some(Value::ZSet(z)) => z,
        None => return reply::raw(out, reply::EMPTY_ARRAY),
        Some(_) => return reply::error(out, reply::WRONGTYPE),
    };
    let len = z.len() as i64;
    // (first rank in iteration order, number of entries)
    let (first, count) = match range {
        Range::Rank(mut s, mut e) => {
            if s < 0 {
                s += len;
            }
            if e < 0 {
                e += len;
            }
            s = s.max(0);
            if s > e || s >= len {
                return reply::raw(out, reply::EMPTY_ARRAY);
            }
            e = e.min(len - 1);
            (s as usize, (e - s + 1) as usize)
        }
        Range::Score(min, max) => {
            let lo = z.count_below(|en: &Entry| min.below_min(en.score));
            let hi = z.count_below(|en: &Entry| max.within_max(en.score));
            window(lo, hi, len as usize, reverse, offset, limit)
        }
        Range::Lex(min, max) => lex_window(z, min, max, reverse, offset, limit),
    };
    // RESP2 flattens member, score pairs; RESP3 nests each pair in its own array.
    let nested = withscores && out.resp3;
    let per = if withscores && !nested { 2 } else { 1 };
    reply::array(out, count * per);
    let mut emit = |e: &Entry| {
        if nested {
            reply::array(out, 2);
        }
        reply::bulk(out, &e.member);
        if withscores {
            reply::double(out, e.score);
        }
    };
    if reverse {
        z.iter_rev_from(first).take(count).for_each(&mut emit);
    } else {
        z.iter_from(first).take(count).for_each(&mut emit);
    }
}

/// Applies LIMIT to the ascending rank range `lo..hi`: returns the first position in
/// iteration order (ascending rank, or reverse rank when `reverse`) and the count.
fn window(
    lo: usize,
    hi: usize,
    len: usize,
    reverse: bool,
    offset: i64,
    limit: i64,
) -> (usize, usize) {
    if hi <= lo || offset < 0 || (offset > 0 && offset as usize >= len) {
        return (0, 0);
    }
    let total = hi - lo;
    let offset = offset as usize;
    if offset >= total {
        return (0, 0);
    }
    let avail = total - offset;
    let count = if limit < 0 {
        avail
    } else {
        avail.min(limit as usize)
    };
    let first = if reverse {
        len - hi + offset
    } else {
        lo + offset
    };
    (first, count)
}

/// The lexicographic range in iteration order, as redis walks it: lex ranges are only
/// meaningful when all scores are equal, and for other sets redis's answer depends on its
/// walk (start at the first member ≥ min, stop at the first one > max), reproduced here.
fn lex_window(
    z: &SortedSet,
    min: LexBound,
    max: LexBound,
    reverse: bool,
    offset: i64,
    limit: i64,
) -> (usize, usize) {
    let len = z.len();
    let empty = (0, 0);
    if len == 0 || lex_range_is_empty(min, max) {
        return empty;
    }
    let (Some(first), Some(last)) = (z.iter_from(0).next(), z.iter_rev_from(0).next()) else {
        return empty;
    };
    if min.below_min(&last.member) || !max.within_max(&first.member) {
        return empty;
    }
    if offset < 0 || (offset > 0 && offset as usize >= len) {
        return empty;
    }
    let in_range_end = |e: &Entry| {
        if reverse {
            !min.below_min(&e.member)
        } else {
            max.within_max(&e.member)
        }
    };
    let start = if reverse {
        z.iter_rev_from(0).position(|e| max.within_max(&e.member))
    } else {
        z.iter_from(0).position(|e| !min.below_min(&e.member))
    };
    let Some(start) = start else {
        return empty;
    };
    let start = start + offset as usize;
    let limit = if limit < 0 {
        usize::MAX
    } else {
        limit as usize
    };
    let count = if reverse {
        z.iter_rev_from(start)
            .take(limit)
            .take_while(|e| in_range_end(e))
            .count()
    } else {
        z.iter_from(start)
            .take(limit)
            .take_while(|e| in_range_end(e))
            .count()
    };
    (start, count)
}

/// redis's `sdscmplex` test for ranges that can never hold anything.
fn lex_range_is_empty(min: LexBound, max: LexBound) -> bool {
    fn key<'a>(b: LexBound<'a>) -> (u8, &'a [u8], bool) {
        match b {
            LexBound::Min => (0, &[], false),
            LexBound::Max => (2, &[], false),
            LexBound::Inclusive(s) => (1, s, false),
            LexBound::Exclusive(s) => (1, s, true),
        }
    }
    let (a, b) = (key(min), key(max));
    match (a.0, a.1).cmp(&(b.0, b.1)) {
        std::cmp::Ordering::Greater => true,
        std::cmp::Ordering::Equal => a.2 || b.2,
        std::cmp::Ordering::Less => false,
    }
}

pub fn zrange(ctx: &mut Ctx, args: Args) {
    zrange_generic(ctx, args, RangeType::Auto, None);
}

pub fn zrevrange(ctx: &mut Ctx, args: Args) {
    zrange_generic(ctx, args, RangeType::Rank, Some(true));
}

pub fn zrangebyscore(ctx: &mut Ctx, args: Args) {
    zrange_generic(ctx, args, RangeType::Score, Some(false));
}

pub fn zrevrangebyscore(ctx: &mut Ctx, args: Args) {
    zrange_generic(ctx, args, RangeType::Score, Some(true));
}

pub fn zcount(ctx: &mut Ctx, args: Args) {
    let (Some(min), Some(max)) = (
        parse_score_bound(args.get(2)),
        parse_score_bound(args.get(3)),
    ) else {
        return ctx.error("min or max is not a float");
    };
    match typed_get!(ctx, args.get(1), ZSet) {
        Ok(Some(z)) => {
            let lo = z.count_below(|e: &Entry| min.below_min(e.score));
            let hi = z.count_below(|e: &Entry| max.within_max(e.score));
            reply::int(ctx.out, hi.saturating_sub(lo) as i64);
        }
        Ok(None) => reply::raw(ctx.out, reply::ZERO),
        Err(()) => ctx.wrong_type(),
    }
}

/// ZPOPMIN/ZPOPMAX key [count]: a flat array of member, score pairs.
fn zpop(ctx: &mut Ctx, args: Args, max: bool) {
    if args.len() > 3 {
        return ctx.syntax_error();
    }
    let count = if args.len() == 3 {
        match positive_count(ctx, args.get(2)) {
            Some(n) => n,
            None => return,
        }
    } else {
        1
    };
    let key = args.get(1);
    let z = match typed_get_mut!(ctx, key, ZSet) {
        Ok(Some(z)) => z,
        Ok(None) => return reply::raw(ctx.out, reply::EMPTY_ARRAY),
        Err(()) => return ctx.wrong_type(),
    };
    let n = count.min(z.len());
    // RESP3 nests pairs when a count was given.
    let nested = ctx.out.resp3 && args.len() == 3;
    reply::array(ctx.out, if nested { n } else { n * 2 });
    for _ in 0..n {
        let e = if max { z.pop_last() } else { z.pop_first() };
        if let Some(e) = e {
            if nested {
                reply::array(ctx.out, 2);
            }
            reply::bulk(ctx.out, &e.member);
            reply::double(ctx.out, e.score);
        }
    }
    ctx.db().remove_if_empty(key);
}

pub fn zpopmin(ctx: &mut Ctx, args: Args) {
    zpop(ctx, args, false);
}

pub fn zpopmax(ctx: &mut Ctx, args: Args) {
    zpop(ctx, args, true);
}
