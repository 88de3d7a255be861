"""Sorted-set commands on store.ZSet (a dict of scores plus a SortedList of (score, member)).

Scores are doubles, replied with `%.17g` (protocol.double): bulk strings in RESP2, doubles
in RESP3, where WITHSCORES ranges and counted pops also nest each member with its score.
ZADD, ZINCRBY and ZRANGE follow redis's generic implementations (zaddGenericCommand,
zrangeGenericCommand), so option parsing, the order of checks and the error messages are
the same for every variant.
"""

from __future__ import annotations

from numeric import parse_double_loose
from protocol import (
    EMPTY_ARRAY,
    ONE,
    ZERO,
    bulk_array,
    double,
    format_double,
    integer,
)
from store import ZSet

from commands.common import (
    SYNTAX_ERROR,
    WRONGTYPE,
    CommandError,
    float_arg,
    int_arg,
    option,
    positive_arg,
)

NAN_RESULT = b"-ERR resulting score is not a number (NaN)\r\n"
NOT_FLOAT_RANGE = b"-ERR min or max is not a float\r\n"
NOT_LEX_RANGE = b"-ERR min or max not valid string range item\r\n"


def _zset(c, key: bytes):
    """The sorted set at key, None when missing, WRONGTYPE (the reply) for another type."""
    value = c.db.get(key)
    if value is not None and type(value) is not ZSet:
        return WRONGTYPE
    return value


# --- ZADD / ZINCRBY ------------------------------------------------------------------------


def zadd(c, argv):
    score_arg = argv[2]
    if len(argv) == 4 and score_arg.isdigit() and len(score_arg) < 300:
        # ZADD key score member with a plain integer score ("0", "000000000123"): the
        # common case, and no option word is made of digits.
        return _zadd_one(c, argv[1], float(score_arg), argv[3])
    return _zadd(c, argv, False)


def _zadd_one(c, key: bytes, score: float, member: bytes) -> bytes:
    db = c.db
    zs = db.get(key)
    if zs is None:
        zs = db.data[key] = ZSet(len(member))
    elif type(zs) is not ZSet:
        return WRONGTYPE
    current = zs.scores.get(member)
    if current is None:
        zs.set_score(member, score)
        return ONE
    if score != current:
        zs.set_score(member, score)
    return ZERO


def zincrby(c, argv):
    return _zadd(c, argv, True)


def _zadd(c, argv, incr: bool) -> bytes:
    nx = xx = gt = lt = ch = False
    n = len(argv)
    i = 2
    while i < n:
        opt = option(argv[i])
        if opt == b"nx":
            nx = True
        elif opt == b"xx":
            xx = True
        elif opt == b"ch":
            ch = True
        elif opt == b"incr":
            incr = True
        elif opt == b"gt":
            gt = True
        elif opt == b"lt":
            lt = True
        else:
            break
        i += 1
    pairs = n - i
    if pairs % 2 or not pairs:
        return SYNTAX_ERROR
    if nx and xx:
        return b"-ERR XX and NX options at the same time are not compatible\r\n"
    if (gt and nx) or (lt and nx) or (gt and lt):
        return b"-ERR GT, LT, and/or NX options at the same time are not compatible\r\n"
    if incr and pairs > 2:
        return b"-ERR INCR option supports a single increment-element pair\r\n"
    scores = [float_arg(a) for a in argv[i::2]]
    members = argv[i + 1 :: 2]
    db = c.db
    key = argv[1]
    zs = db.get(key)
    if zs is None:
        if xx:
            return c.null if incr else ZERO
        zs = db.data[key] = ZSet(len(members[0]))
    elif type(zs) is not ZSet:
        return WRONGTYPE
    added = updated = processed = 0
    score = 0.0
    current_scores = zs.scores
    for score, member in zip(scores, members, strict=True):
        current = current_scores.get(member)
        if current is None:
            if xx:
                continue
            zs.set_score(member, score)
            added += 1
            processed += 1
            continue
        if nx:
            continue
        if incr:
            score += current
            if score != score:
                return NAN_RESULT
        if (lt and score >= current) or (gt and score <= current):
            continue
        processed += 1
        if score != current:
            zs.set_score(member, score)
            updated += 1
    if incr:
        return double(score, c.resp) if processed else c.null
    return integer(added + updated if ch else added)


# --- reads ---------------------------------------------------------------------------------


def zscore(c, argv):
    zs = _zset(c, argv[1])
    if zs is None:
        return c.null
    if zs is WRONGTYPE:
        return WRONGTYPE
    score = zs.scores.get(argv[2])
    return c.null if score is None else double(score, c.resp)


def zmscore(c, argv):
    zs = _zset(c, argv[1])
    if zs is WRONGTYPE:
        return WRONGTYPE
    scores = zs.scores if zs is not None else {}
    values = [scores.get(m) for m in argv[2:]]
    null, resp = c.null, c.resp
    return b"*%d\r\n" % len(values) + b"".join(
        null if s is None else double(s, resp) for s in values
    )


def zcard(c, argv):
    zs = _zset(c, argv[1])
    if zs is None:
        return ZERO
    if zs is WRONGTYPE:
        return WRONGTYPE
    return integer(len(zs))


def zrank(c, argv):
    return _rank(c, argv, False)


def zrevrank(c, argv):
    return _rank(c, argv, True)


def _rank(c, argv, reverse: bool) -> bytes:
    zs = _zset(c, argv[1])
    if zs is None:
        return c.null
    if zs is WRONGTYPE:
        return WRONGTYPE
    rank = zs.rank(argv[2])
    if rank is None:
        return c.null
    return integer(len(zs) - 1 - rank if reverse else rank)


def zcount(c, argv):
    low, high = _score_range(argv[2], argv[3])
    zs = _zset(c, argv[1])
    if zs is None:
        return ZERO
    if zs is WRONGTYPE:
        return WRONGTYPE
    lo, hi = _score_bounds(zs, low, high)
    return integer(max(hi - lo, 0))


# --- ZRANGE and its older variants ---------------------------------------------------------

RANK, SCORE, LEX = "rank", "score", "lex"


def zrange(c, argv):
    return _zrange(c, argv, None, None)


def zrevrange(c, argv):
    return _zrange(c, argv, RANK, True)


def zrangebyscore(c, argv):
    return _zrange(c, argv, SCORE, False)


def zrevrangebyscore(c, argv):
    return _zrange(c, argv, SCORE, True)


def zrangebylex(c, argv):
    return _zrange(c, argv, LEX, False)


def zrevrangebylex(c, argv):
    return _zrange(c, argv, LEX, True)


def _zrange(c, argv, kind: str | None, reverse: bool | None) -> bytes:
    """zrangeGenericCommand: `key min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]
    [WITHSCORES]`, where the variants fix the kind and/or the direction."""
    withscores = False
    offset, limit = 0, -1
    n = len(argv)
    j = 4
    while j < n:
        opt = option(argv[j])
        if opt == b"withscores":
            withscores = True
        elif opt == b"limit" and n - j - 1 >= 2:
            offset = int_arg(argv[j + 1])
            limit = int_arg(argv[j + 2])
            j += 2
        elif reverse is None and opt == b"rev":
            reverse = True
        elif kind is None and opt == b"bylex":
            kind = LEX
        elif kind is None and opt == b"byscore":
            kind = SCORE
        else:
            return SYNTAX_ERROR
        j += 1
    reverse = bool(reverse)
    kind = kind or RANK
    if limit != -1 and kind is RANK:
        return (
            b"-ERR syntax error, LIMIT is only supported in combination with either BYSCORE "
            b"or BYLEX\r\n"
        )
    if withscores and kind is LEX:
        return b"-ERR syntax error, WITHSCORES not supported in combination with BYLEX\r\n"
    low_arg, high_arg = (argv[3], argv[2]) if reverse and kind is not RANK else (argv[2], argv[3])
    if kind is RANK:
        start, end = int_arg(low_arg), int_arg(high_arg)
    elif kind is SCORE:
        low, high = _score_range(low_arg, high_arg)
    else:
        low, high = _lex_bound(low_arg), _lex_bound(high_arg)
    zs = _zset(c, argv[1])
    if zs is None:
        return EMPTY_ARRAY
    if zs is WRONGTYPE:
        return WRONGTYPE
    if kind is RANK:
        entries = _rank_range(zs, start, end, reverse)
    elif kind is SCORE:
        entries = _score_range_entries(zs, low, high, offset, limit, reverse)
    else:
        entries = _lex_range_entries(zs, low, high, offset, limit, reverse)
    return _entries_reply(entries, withscores, c.resp)


def _entries_reply(entries: list[tuple[float, bytes]], withscores: bool, resp: int) -> bytes:
    """Members; WITHSCORES adds each score after its member (RESP2: one flat array; RESP3:
    an array of [member, score] pairs)."""
    if not withscores:
        return bulk_array([m for _, m in entries])
    if resp == 3:
        return b"*%d\r\n" % len(entries) + b"".join(_pair3(s, m) for s, m in entries)
    flat: list[bytes] = []
    for score, member in entries:
        flat.append(member)
        flat.append(format_double(score))
    return bulk_array(flat)


def _pair3(score: float, member: bytes) -> bytes:
    return b"*2\r\n$%d\r\n%s\r\n%s" % (len(member), member, double(score, 3))


def _rank_range(zs: ZSet, start: int, end: int, reverse: bool) -> list:
    length = len(zs)
    if start < 0:
        start += length
    if end < 0:
        end += length
    if start < 0:
        start = 0
    if start > end or start >= length:
        return []
    if end >= length:
        end = length - 1
    if reverse:
        entries = list(zs.order.islice(length - 1 - end, length - start))
        entries.reverse()
        return entries
    return list(zs.order.islice(start, end + 1))


def _score_range(low_arg: bytes, high_arg: bytes) -> tuple[tuple[float, bool], ...]:
    """zslParseRange: each bound a float, `(` making it exclusive."""
    return _score_bound(low_arg), _score_bound(high_arg)


def _score_bound(arg: bytes) -> tuple[float, bool]:
    exclusive = arg[:1] == b"("
    value = parse_double_loose(arg[1:] if exclusive else arg)
    if value is None:
        raise CommandError(NOT_FLOAT_RANGE)
    return value, exclusive


def _score_bounds(zs: ZSet, low, high) -> tuple[int, int]:
    """[lo, hi): the index range of entries between the two bounds."""
    (low_value, low_ex), (high_value, high_ex) = low, high
    lo = zs.first_above(low_value) if low_ex else zs.first_at_or_above(low_value)
    hi = zs.first_at_or_above(high_value) if high_ex else zs.first_above(high_value)
    return lo, hi


def _score_range_entries(zs: ZSet, low, high, offset: int, limit: int, reverse: bool) -> list:
    if offset < 0:  # redis skips "offset" entries with a post-decrement: never stops
        return []
    lo, hi = _score_bounds(zs, low, high)
    if lo >= hi:
        return []
    if reverse:
        first, last = hi - 1 - offset, lo
        if first < last:
            return []
        stop = last - 1 if limit < 0 else max(first - limit, last - 1)
        return [zs.order[i] for i in range(first, stop, -1)]
    first = lo + offset
    stop = hi if limit < 0 else min(first + limit, hi)
    return list(zs.order.islice(first, stop)) if first < stop else []


_MIN, _MAX = object(), object()  # the `-` and `+` lex bounds


def _lex_bound(arg: bytes):
    """zslParseLexRangeItem: `-`, `+`, `(member` (exclusive) or `[member` (inclusive)."""
    head = arg[:1]
    if head in (b"+", b"-"):
        if len(arg) > 1 and arg[1] != 0:
            raise CommandError(NOT_LEX_RANGE)
        return (_MAX if head == b"+" else _MIN), True
    if head == b"(":
        return arg[1:], True
    if head == b"[":
        return arg[1:], False
    raise CommandError(NOT_LEX_RANGE)


def _gte_min(member: bytes, bound) -> bool:
    value, exclusive = bound
    if value is _MIN:
        return True
    if value is _MAX:
        return False
    return member > value if exclusive else member >= value


def _lte_max(member: bytes, bound) -> bool:
    value, exclusive = bound
    if value is _MAX:
        return True
    if value is _MIN:
        return False
    return member < value if exclusive else member <= value


def _lex_range_entries(zs: ZSet, low, high, offset: int, limit: int, reverse: bool) -> list:
    """As redis walks a small sorted set: find the first entry inside the range from one end,
    skip `offset` entries, then take entries while they stay inside."""
    order = zs.order
    length = len(order)
    if offset < 0:
        return []
    if reverse:
        i = length - 1
        while i >= 0 and not _lte_max(order[i][1], high):
            i -= 1
        if i < 0 or not _gte_min(order[i][1], low):
            return []
        i -= offset
        out = []
        while i >= 0 and limit != 0:
            entry = order[i]
            if not _gte_min(entry[1], low):
                break
            out.append(entry)
            limit -= 1
            i -= 1
        return out
    i = 0
    while i < length and not _gte_min(order[i][1], low):
        i += 1
    if i >= length or not _lte_max(order[i][1], high):
        return []
    i += offset
    out = []
    while i < length and limit != 0:
        entry = order[i]
        if not _lte_max(entry[1], high):
            break
        out.append(entry)
        limit -= 1
        i += 1
    return out


# --- removals ------------------------------------------------------------------------------


def zrem(c, argv):
    zs = _zset(c, argv[1])
    if zs is None:
        return ZERO
    if zs is WRONGTYPE:
        return WRONGTYPE
    removed = sum(1 for m in argv[2:] if zs.remove(m))
    if not len(zs):
        c.db.delete(argv[1])
    return integer(removed)


def zpopmin(c, argv):
    return _zpop(c, argv, False)


def zpopmax(c, argv):
    return _zpop(c, argv, True)


def _zpop(c, argv, highest: bool) -> bytes:
    n = len(argv)
    if n > 3:
        return SYNTAX_ERROR
    count = positive_arg(argv[2]) if n == 3 else None
    db = c.db
    zs = db.get(argv[1])
    if zs is None:
        return EMPTY_ARRAY
    if type(zs) is not ZSet:
        return WRONGTYPE
    if count == 0:
        return EMPTY_ARRAY
    pop = zs.pop_last if highest else zs.pop_first
    if count is None:  # one member and its score, flat in both protocols
        score, member = pop()
        reply = b"*2\r\n$%d\r\n%s\r\n%s" % (len(member), member, double(score, c.resp))
    else:
        popped = [pop() for _ in range(min(count, len(zs)))]
        reply = _entries_reply(popped, True, c.resp)
    if not zs.scores:
        db.delete(argv[1])
    return reply


COMMANDS = {
    b"zadd": (zadd, -4),
    b"zincrby": (zincrby, 4),
    b"zscore": (zscore, 3),
    b"zmscore": (zmscore, -3),
    b"zcard": (zcard, 2),
    b"zrank": (zrank, 3),
    b"zrevrank": (zrevrank, 3),
    b"zcount": (zcount, 4),
    b"zrange": (zrange, -4),
    b"zrevrange": (zrevrange, -4),
    b"zrangebyscore": (zrangebyscore, -4),
    b"zrevrangebyscore": (zrevrangebyscore, -4),
    b"zrangebylex": (zrangebylex, -4),
    b"zrevrangebylex": (zrevrangebylex, -4),
    b"zrem": (zrem, -3),
    b"zpopmin": (zpopmin, -2),
    b"zpopmax": (zpopmax, -2),
}
