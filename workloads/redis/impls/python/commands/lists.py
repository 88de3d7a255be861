"""List commands on collections.deque: pushes and pops at both ends are O(1).

Every element is kept as its RESP bulk reply (`$3\r\nVXK\r\n`), encoded once when pushed:
every read of a list element replies it as a bulk string, so LPOP/RPOP/LINDEX return it
as it is and LRANGE is a single join, with no formatting per element per read. Equality
of two encoded elements is equality of the values (LREM compares encoded forms)."""

from __future__ import annotations

from collections import deque
from itertools import islice

from protocol import EMPTY_ARRAY, OK, ZERO, integer

from commands.common import (
    INDEX_OUT_OF_RANGE,
    NO_SUCH_KEY,
    WRONGTYPE,
    arity_error,
    int_arg,
    positive_arg,
)


def _encode(value: bytes) -> bytes:
    return b"$%d\r\n%s\r\n" % (len(value), value)


def _array(elements) -> bytes:
    return b"*%d\r\n%s" % (len(elements), b"".join(elements))


def _list_or_none(c, key: bytes):
    """The list at key, None when missing, WRONGTYPE (the reply) for another type."""
    items = c.db.get(key)
    if items is not None and type(items) is not deque:
        return WRONGTYPE
    return items


def lpush(c, argv):
    db = c.db
    items = db.get(argv[1])
    if items is None:
        items = db.data[argv[1]] = deque()
    elif type(items) is not deque:
        return WRONGTYPE
    if len(argv) == 3:
        value = argv[2]
        items.appendleft(b"$%d\r\n%s\r\n" % (len(value), value))
    else:
        items.extendleft(map(_encode, argv[2:]))  # LPUSH a b c leaves c b a at the head
    return b":%d\r\n" % len(items)


def rpush(c, argv):
    db = c.db
    items = db.get(argv[1])
    if items is None:
        items = db.data[argv[1]] = deque()
    elif type(items) is not deque:
        return WRONGTYPE
    if len(argv) == 3:
        value = argv[2]
        items.append(b"$%d\r\n%s\r\n" % (len(value), value))
    else:
        items.extend(map(_encode, argv[2:]))
    return b":%d\r\n" % len(items)


def lpushx(c, argv):
    if _list_or_none(c, argv[1]) is None:
        return ZERO
    return lpush(c, argv)


def rpushx(c, argv):
    if _list_or_none(c, argv[1]) is None:
        return ZERO
    return rpush(c, argv)


def lpop(c, argv):
    return _pop(c, argv, True)


def rpop(c, argv):
    return _pop(c, argv, False)


def _pop(c, argv, left: bool) -> bytes:
    n = len(argv)
    db = c.db
    key = argv[1]
    if n == 2:  # the plain pop
        items = db.get(key)
        if items is None:
            return c.null
        if type(items) is not deque:
            return WRONGTYPE
        element = items.popleft() if left else items.pop()
        if not items:
            db.delete(key)
        return element
    if n > 3:
        return arity_error(b"lpop" if left else b"rpop")
    count = positive_arg(argv[2])
    items = db.get(key)
    if items is None:
        return c.null_array
    if type(items) is not deque:
        return WRONGTYPE
    if count == 0:
        return EMPTY_ARRAY
    pop = items.popleft if left else items.pop
    popped = [pop() for _ in range(min(count, len(items)))]
    if not items:
        db.delete(key)
    return _array(popped)


def lrange(c, argv):
    start = int_arg(argv[2])
    end = int_arg(argv[3])
    items = _list_or_none(c, argv[1])
    if items is None:
        return EMPTY_ARRAY
    if items is WRONGTYPE:
        return WRONGTYPE
    length = len(items)
    if start < 0:
        start += length
    if end < 0:
        end += length
    if start < 0:
        start = 0
    if start > end or start >= length:
        return EMPTY_ARRAY
    if end >= length:
        end = length - 1
    if start > length - 1 - end:  # closer to the tail: walk from there
        part = list(islice(reversed(items), length - 1 - end, length - start))
        part.reverse()
    else:
        part = list(islice(items, start, end + 1))
    return _array(part)


def llen(c, argv):
    items = _list_or_none(c, argv[1])
    if items is None:
        return ZERO
    if items is WRONGTYPE:
        return WRONGTYPE
    return integer(len(items))


def lindex(c, argv):
    items = _list_or_none(c, argv[1])
    if items is None:
        return c.null
    if items is WRONGTYPE:
        return WRONGTYPE
    index = int_arg(argv[2])
    if index < 0:
        index += len(items)
    if not 0 <= index < len(items):
        return c.null
    return items[index]


def lset(c, argv):
    items = _list_or_none(c, argv[1])
    if items is None:
        return NO_SUCH_KEY
    if items is WRONGTYPE:
        return WRONGTYPE
    index = int_arg(argv[2])
    if index < 0:
        index += len(items)
    if not 0 <= index < len(items):
        return INDEX_OUT_OF_RANGE
    items[index] = _encode(argv[3])
    return OK


def ltrim(c, argv):
    start = int_arg(argv[2])
    end = int_arg(argv[3])
    items = _list_or_none(c, argv[1])
    if items is None:
        return OK
    if items is WRONGTYPE:
        return WRONGTYPE
    length = len(items)
    if start < 0:
        start += length
    if end < 0:
        end += length
    if start < 0:
        start = 0
    if start > end or start >= length:
        c.db.delete(argv[1])
        return OK
    if end >= length:
        end = length - 1
    for _ in range(length - 1 - end):
        items.pop()
    for _ in range(start):
        items.popleft()
    return OK


def lrem(c, argv):
    count = int_arg(argv[2])
    items = _list_or_none(c, argv[1])
    if items is None:
        return ZERO
    if items is WRONGTYPE:
        return WRONGTYPE
    target = _encode(argv[3])
    ordered = list(items) if count >= 0 else list(reversed(items))
    limit = abs(count)
    kept = []
    removed = 0
    for element in ordered:
        if element == target and (limit == 0 or removed < limit):
            removed += 1
        else:
            kept.append(element)
    if count < 0:
        kept.reverse()
    if removed:
        items.clear()
        items.extend(kept)
        if not items:
            c.db.delete(argv[1])
    return integer(removed)


COMMANDS = {
    b"lpush": (lpush, -3),
    b"rpush": (rpush, -3),
    b"lpushx": (lpushx, -3),
    b"rpushx": (rpushx, -3),
    b"lpop": (lpop, -2),
    b"rpop": (rpop, -2),
    b"lrange": (lrange, 4),
    b"llen": (llen, 2),
    b"lindex": (lindex, 3),
    b"lset": (lset, 4),
    b"ltrim": (ltrim, 4),
    b"lrem": (lrem, 4),
}
