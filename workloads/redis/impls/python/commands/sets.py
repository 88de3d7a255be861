"""Set commands on store.RandomSet (O(1) add, remove, membership and random pick)."""

from __future__ import annotations

import random

from numeric import parse_int64
from protocol import EMPTY_ARRAY, EMPTY_SET3, ONE, ZERO, bulk_array, integer, set_reply
from store import RandomSet

from commands.common import (
    OUT_OF_RANGE,
    SYNTAX_ERROR,
    WRONGTYPE,
    CommandError,
    int_arg,
    positive_arg,
)

SRANDMEMBER_MAX = 1 << 20  # a negative count asks for that many picks: bound the reply
INTSET_MAX = 512  # set-max-intset-entries: up to this size an all-integer set is sorted


def _set(c, key: bytes):
    """The set at key, None when missing, WRONGTYPE (the reply) for another type."""
    value = c.db.get(key)
    if value is not None and type(value) is not RandomSet:
        return WRONGTYPE
    return value


def sadd(c, argv):
    db = c.db
    key = argv[1]
    members = db.get(key)
    if members is None:
        members = db.data[key] = RandomSet()
    elif type(members) is not RandomSet:
        return WRONGTYPE
    if len(argv) == 3:
        return ONE if members.add(argv[2]) else ZERO
    return integer(sum(map(members.add, argv[2:])))


def srem(c, argv):
    members = _set(c, argv[1])
    if members is None:
        return ZERO
    if members is WRONGTYPE:
        return WRONGTYPE
    removed = sum(map(members.discard, argv[2:]))
    if not members:
        c.db.delete(argv[1])
    return integer(removed)


def smembers(c, argv):
    members = _set(c, argv[1])
    if members is None:
        return EMPTY_ARRAY if c.resp == 2 else EMPTY_SET3
    if members is WRONGTYPE:
        return WRONGTYPE
    return set_reply(_ordered(members), c.resp)


def _ordered(members: RandomSet) -> list[bytes]:
    """Reply order: redis keeps a small set of integers as a sorted intset, so it lists those
    in numeric order; any other set comes out in hash-table order (here: insertion order,
    shuffled by removals)."""
    items = list(members)
    if len(items) <= INTSET_MAX:
        numbers = [parse_int64(m) for m in items]
        if None not in numbers:
            return [m for _, m in sorted(zip(numbers, items, strict=True))]
    return items


def sismember(c, argv):
    members = _set(c, argv[1])
    if members is None:
        return ZERO
    if members is WRONGTYPE:
        return WRONGTYPE
    return ONE if argv[2] in members else ZERO


def smismember(c, argv):
    members = _set(c, argv[1])
    if members is WRONGTYPE:
        return WRONGTYPE
    if members is None:
        members = RandomSet()
    return b"*%d\r\n" % (len(argv) - 2) + b"".join(ONE if m in members else ZERO for m in argv[2:])


def scard(c, argv):
    members = _set(c, argv[1])
    if members is None:
        return ZERO
    if members is WRONGTYPE:
        return WRONGTYPE
    return integer(len(members))


def spop(c, argv):
    n = len(argv)
    if n > 3:
        return SYNTAX_ERROR
    count = positive_arg(argv[2]) if n == 3 else None
    members = _set(c, argv[1])
    if members is None:
        return c.null if count is None else _empty_set(c)
    if members is WRONGTYPE:
        return WRONGTYPE
    if count is None:
        member = members.pop_random()
        if not members:
            c.db.delete(argv[1])
        return b"$%d\r\n%s\r\n" % (len(member), member)
    if count == 0:
        return _empty_set(c)
    if count >= len(members):
        popped = list(members)
        random.shuffle(popped)
        c.db.delete(argv[1])
    else:
        popped = [members.pop_random() for _ in range(count)]
    return set_reply(popped, c.resp)


def _empty_set(c) -> bytes:
    return EMPTY_ARRAY if c.resp == 2 else EMPTY_SET3


def srandmember(c, argv):
    n = len(argv)
    if n > 3:
        return SYNTAX_ERROR
    count = int_arg(argv[2]) if n == 3 else None
    if count == -(1 << 63):  # getRangeLongFromObjectOrReply(-LONG_MAX, LONG_MAX), before the key
        raise CommandError(
            b"-ERR value is out of range, value must between -9223372036854775807 and "
            b"9223372036854775807\r\n"
        )
    members = _set(c, argv[1])
    if members is None:
        return c.null if count is None else EMPTY_ARRAY
    if members is WRONGTYPE:
        return WRONGTYPE
    if count is None:
        member = members.random_member()
        return b"$%d\r\n%s\r\n" % (len(member), member)
    if count >= 0:
        return bulk_array(random.sample(members.members, min(count, len(members))))
    if -count > SRANDMEMBER_MAX:  # repeats allowed: the reply could be any size
        return OUT_OF_RANGE
    return bulk_array(random.choices(members.members, k=-count))


COMMANDS = {
    b"sadd": (sadd, -3),
    b"srem": (srem, -3),
    b"smembers": (smembers, 2),
    b"sismember": (sismember, 3),
    b"smismember": (smismember, -3),
    b"scard": (scard, 2),
    b"spop": (spop, -2),
    b"srandmember": (srandmember, -2),
}
