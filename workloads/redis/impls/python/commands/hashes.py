"""Hash commands on dict. Python dicts keep insertion order, which is the order redis's
small (listpack) hashes reply in."""

from __future__ import annotations

from numeric import (
    INT64_MAX,
    INT64_MIN,
    format_long_double,
    is_finite,
    long_double_add,
    parse_int64,
    parse_long_double,
)
from protocol import (
    EMPTY_ARRAY,
    EMPTY_MAP3,
    OK,
    ONE,
    ZERO,
    bulk_array,
    integer,
    map_reply,
    nullable_bulk_array,
)

from commands.common import OVERFLOW, WRONGTYPE, arity_error, int_arg

NOT_FLOAT = b"-ERR value is not a valid float\r\n"


def _hash(c, key: bytes):
    """The hash at key, None when missing, WRONGTYPE (the reply) for another type."""
    value = c.db.get(key)
    if value is not None and type(value) is not dict:
        return WRONGTYPE
    return value


def _hash_for_write(c, key: bytes):
    db = c.db
    value = db.get(key)
    if value is None:
        value = db.data[key] = {}
    elif type(value) is not dict:
        return WRONGTYPE
    return value


def hset(c, argv):
    n = len(argv)
    if n & 1:
        return arity_error(b"hset")
    db = c.db
    fields = db.get(argv[1])
    if fields is None:
        fields = db.data[argv[1]] = {}
    elif type(fields) is not dict:
        return WRONGTYPE
    if n == 4:
        added = argv[2] not in fields
        fields[argv[2]] = argv[3]
        return ONE if added else ZERO
    before = len(fields)
    fields.update(zip(argv[2::2], argv[3::2], strict=True))
    return integer(len(fields) - before)


def hmset(c, argv):
    if len(argv) & 1:
        return arity_error(b"hmset")
    fields = _hash_for_write(c, argv[1])
    if fields is WRONGTYPE:
        return WRONGTYPE
    fields.update(zip(argv[2::2], argv[3::2], strict=True))
    return OK


def hsetnx(c, argv):
    fields = _hash_for_write(c, argv[1])
    if fields is WRONGTYPE:
        return WRONGTYPE
    if argv[2] in fields:
        return ZERO
    fields[argv[2]] = argv[3]
    return ONE


def hget(c, argv):
    fields = _hash(c, argv[1])
    if fields is None:
        return c.null
    if fields is WRONGTYPE:
        return WRONGTYPE
    value = fields.get(argv[2])
    if value is None:
        return c.null
    return b"$%d\r\n%s\r\n" % (len(value), value)


def hmget(c, argv):
    fields = _hash(c, argv[1])
    if fields is WRONGTYPE:
        return WRONGTYPE
    if fields is None:
        fields = {}
    return nullable_bulk_array([fields.get(f) for f in argv[2:]], c.null)


def hgetall(c, argv):
    fields = _hash(c, argv[1])
    if fields is None:
        return EMPTY_ARRAY if c.resp == 2 else EMPTY_MAP3
    if fields is WRONGTYPE:
        return WRONGTYPE
    flat = [None] * (2 * len(fields))
    flat[::2] = fields.keys()
    flat[1::2] = fields.values()
    return map_reply(flat, c.resp)


def hkeys(c, argv):
    fields = _hash(c, argv[1])
    if fields is None:
        return EMPTY_ARRAY
    if fields is WRONGTYPE:
        return WRONGTYPE
    return bulk_array(list(fields))


def hvals(c, argv):
    fields = _hash(c, argv[1])
    if fields is None:
        return EMPTY_ARRAY
    if fields is WRONGTYPE:
        return WRONGTYPE
    return bulk_array(list(fields.values()))


def hdel(c, argv):
    fields = _hash(c, argv[1])
    if fields is None:
        return ZERO
    if fields is WRONGTYPE:
        return WRONGTYPE
    deleted = 0
    for field in argv[2:]:
        if fields.pop(field, None) is not None:
            deleted += 1
    if not fields:
        c.db.delete(argv[1])
    return integer(deleted)


def hlen(c, argv):
    fields = _hash(c, argv[1])
    if fields is None:
        return ZERO
    if fields is WRONGTYPE:
        return WRONGTYPE
    return integer(len(fields))


def hstrlen(c, argv):
    fields = _hash(c, argv[1])
    if fields is None:
        return ZERO
    if fields is WRONGTYPE:
        return WRONGTYPE
    return integer(len(fields.get(argv[2], b"")))


def hexists(c, argv):
    fields = _hash(c, argv[1])
    if fields is None:
        return ZERO
    if fields is WRONGTYPE:
        return WRONGTYPE
    return ONE if argv[2] in fields else ZERO


def hincrby(c, argv):
    delta = int_arg(argv[3])
    fields = _hash_for_write(c, argv[1])
    if fields is WRONGTYPE:
        return WRONGTYPE
    old = fields.get(argv[2])
    current = 0
    if old is not None:
        current = parse_int64(old)
        if current is None:
            return b"-ERR hash value is not an integer\r\n"
    new = current + delta
    if not INT64_MIN <= new <= INT64_MAX:
        _drop_if_empty(c, argv[1], fields)
        return OVERFLOW
    fields[argv[2]] = b"%d" % new
    return integer(new)


def hincrbyfloat(c, argv):
    delta = parse_long_double(argv[3])
    if delta is None:
        return NOT_FLOAT
    if not is_finite(delta):
        return b"-ERR value is NaN or Infinity\r\n"
    fields = _hash_for_write(c, argv[1])
    if fields is WRONGTYPE:
        return WRONGTYPE
    old = fields.get(argv[2])
    current = 0
    if old is not None:
        current = parse_long_double(old)
        if current is None:
            return b"-ERR hash value is not a float\r\n"
    result = long_double_add(current, delta)
    if not is_finite(result) or result != result:
        _drop_if_empty(c, argv[1], fields)
        return b"-ERR increment would produce NaN or Infinity\r\n"
    text = format_long_double(result)
    fields[argv[2]] = text
    return b"$%d\r\n%s\r\n" % (len(text), text)


def _drop_if_empty(c, key: bytes, fields: dict) -> None:
    """A hash created for a write that then failed must not linger empty."""
    if not fields:
        c.db.delete(key)


COMMANDS = {
    b"hset": (hset, -4),
    b"hmset": (hmset, -4),
    b"hsetnx": (hsetnx, 4),
    b"hget": (hget, 3),
    b"hmget": (hmget, -3),
    b"hgetall": (hgetall, 2),
    b"hkeys": (hkeys, 2),
    b"hvals": (hvals, 2),
    b"hdel": (hdel, -3),
    b"hlen": (hlen, 2),
    b"hstrlen": (hstrlen, 3),
    b"hexists": (hexists, 3),
    b"hincrby": (hincrby, 4),
    b"hincrbyfloat": (hincrbyfloat, 4),
}
