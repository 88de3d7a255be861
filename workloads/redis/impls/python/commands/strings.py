"""String commands: GET/SET and friends, counters, APPEND, STRLEN, MGET/MSET.

A string value is stored as bytes, or, once a counter command has written it, as a Python
int (redis's integer encoding): INCR then adds to it without parsing or formatting it, and
only readers that need the text (GET, APPEND, ...) format it."""

from __future__ import annotations

from numeric import (
    INT64_MAX,
    INT64_MIN,
    format_long_double,
    is_finite,
    long_double_add,
    parse_long_double,
)
from protocol import BULK_MAX, EMPTY_BULK, OK, ONE, ZERO, integer, nullable_bulk_array
from store import now_ms

from commands.common import (
    NOT_INTEGER,
    OVERFLOW,
    SYNTAX_ERROR,
    WRONGTYPE,
    CommandError,
    arity_error,
    int_arg,
    option,
)

NOT_FLOAT = b"-ERR value is not a valid float\r\n"
TOO_BIG = b"-ERR string exceeds maximum allowed size (proto-max-bulk-len)\r\n"


def text_of(value) -> bytes | None:
    """A string value's bytes (formatting an integer); None for a value of another type."""
    kind = type(value)
    if kind is bytes:
        return value
    if kind is int:
        return b"%d" % value
    return None


def get(c, argv):
    value = c.db.get(argv[1])
    if value is None:
        return c.null
    if type(value) is not bytes:
        value = text_of(value)
        if value is None:
            return WRONGTYPE
    return b"$%d\r\n%s\r\n" % (len(value), value)


def set_(c, argv):
    db = c.db
    key = argv[1]
    if len(argv) == 3:  # plain SET: the benchmark's case, no option parsing
        db.data[key] = argv[2]
        if db.expires:
            db.expires.pop(key, None)
        return OK
    nx = xx = want_get = keep_ttl = False
    unit = None  # b"ex", b"px", b"exat" or b"pxat"
    expire_arg = b""
    i = 3
    n = len(argv)
    while i < n:
        opt = option(argv[i])
        has_next = i + 1 < n
        if opt == b"nx" and not xx:
            nx = True
        elif opt == b"xx" and not nx:
            xx = True
        elif opt == b"get":
            want_get = True
        elif opt == b"keepttl" and unit is None:
            keep_ttl = True
        elif (
            opt in (b"ex", b"px", b"exat", b"pxat")
            and not keep_ttl
            and unit in (None, opt)
            and has_next
        ):
            unit = opt
            i += 1
            expire_arg = argv[i]
        else:
            return SYNTAX_ERROR
        i += 1
    deadline = None
    if unit is not None:
        deadline = _deadline(expire_arg, unit, b"set")
    reply = OK
    if want_get:
        old = db.get(key)
        if old is None:
            reply = c.null
        else:
            old = text_of(old)
            if old is None:
                return WRONGTYPE
            reply = b"$%d\r\n%s\r\n" % (len(old), old)
        found = old is not None
    else:
        found = db.get(key) is not None
    if (nx and found) or (xx and not found):
        return reply if want_get else c.null
    db.data[key] = argv[2]
    if deadline is not None:
        db.set_deadline(key, deadline)
    elif not keep_ttl and db.expires:
        db.expires.pop(key, None)
    return reply


def _deadline(arg: bytes, unit: bytes, command: bytes) -> int:
    """SET/SETEX's expiry argument as an absolute deadline in ms (getExpireMillisecondsOrReply)."""
    ms = int_arg(arg)
    invalid = b"-ERR invalid expire time in '%s' command\r\n" % command
    seconds = unit in (b"ex", b"exat")
    if ms <= 0 or (seconds and ms > INT64_MAX // 1000):
        raise CommandError(invalid)
    if seconds:
        ms *= 1000
    if unit in (b"ex", b"px"):
        ms += now_ms()
    if ms > INT64_MAX:  # redis's signed addition wraps negative
        raise CommandError(invalid)
    return ms


def setnx(c, argv):
    db = c.db
    key = argv[1]
    if db.get(key) is not None:
        return ZERO
    db.data[key] = argv[2]
    return ONE


def setex(c, argv):
    return _set_with_expiry(c, argv, b"ex", b"setex")


def psetex(c, argv):
    return _set_with_expiry(c, argv, b"px", b"psetex")


def _set_with_expiry(c, argv, unit: bytes, command: bytes):
    deadline = _deadline(argv[2], unit, command)
    db = c.db
    db.data[argv[1]] = argv[3]
    db.set_deadline(argv[1], deadline)
    return OK


def getset(c, argv):
    db = c.db
    key = argv[1]
    old = db.get(key)
    if old is not None:
        old = text_of(old)
        if old is None:
            return WRONGTYPE
    db.data[key] = argv[2]
    if db.expires:
        db.expires.pop(key, None)
    return c.null if old is None else b"$%d\r\n%s\r\n" % (len(old), old)


def getdel(c, argv):
    db = c.db
    old = db.get(argv[1])
    if old is None:
        return c.null
    old = text_of(old)
    if old is None:
        return WRONGTYPE
    db.delete(argv[1])
    return b"$%d\r\n%s\r\n" % (len(old), old)


def mget(c, argv):
    get_value = c.db.get
    values = [get_value(k) for k in argv[1:]]
    return nullable_bulk_array([text_of(v) for v in values], c.null)


def mset(c, argv):
    if not len(argv) & 1:
        return arity_error(b"mset")
    db = c.db
    keys = argv[1::2]
    db.data.update(zip(keys, argv[2::2], strict=True))
    if db.expires:
        for key in keys:
            db.expires.pop(key, None)
    return OK


def msetnx(c, argv):
    if not len(argv) & 1:
        return arity_error(b"msetnx")
    db = c.db
    keys = argv[1::2]
    if any(db.get(k) is not None for k in keys):
        return ZERO
    db.data.update(zip(keys, argv[2::2], strict=True))
    return ONE


def incr(c, argv):
    return _add(c.db, argv[1], 1)


def decr(c, argv):
    return _add(c.db, argv[1], -1)


def incrby(c, argv):
    return _add(c.db, argv[1], int_arg(argv[2]))


def decrby(c, argv):
    delta = int_arg(argv[2])
    if delta == INT64_MIN:
        return b"-ERR decrement would overflow\r\n"
    return _add(c.db, argv[1], -delta)


def _add(db, key: bytes, delta: int) -> bytes:
    value = db.get(key)
    if type(value) is int:
        current = value
    elif value is None:
        current = 0
    elif type(value) is bytes:
        # string2ll, inlined: int() is lenient (spaces, "+", "_", leading zeros), so the
        # value must also be the canonical spelling of what int() read.
        try:
            current = int(value)
        except ValueError:
            return NOT_INTEGER
        if b"%d" % current != value or not INT64_MIN <= current <= INT64_MAX:
            return NOT_INTEGER
    else:
        return WRONGTYPE
    new = current + delta
    if not INT64_MIN <= new <= INT64_MAX:
        return OVERFLOW
    db.data[key] = new  # an overwrite keeps the key's TTL
    return b":%d\r\n" % new


def incrbyfloat(c, argv):
    db = c.db
    key = argv[1]
    value = db.get(key)
    if value is not None:
        value = text_of(value)
        if value is None:
            return WRONGTYPE
    current = parse_long_double(value) if value is not None else 0
    if current is None:
        return NOT_FLOAT
    delta = parse_long_double(argv[2])
    if delta is None:
        return NOT_FLOAT
    result = long_double_add(current, delta)
    if not is_finite(result) or result != result:
        return b"-ERR increment would produce NaN or Infinity\r\n"
    text = format_long_double(result)
    db.data[key] = text
    return b"$%d\r\n%s\r\n" % (len(text), text)


def append(c, argv):
    db = c.db
    key = argv[1]
    value = db.get(key)
    if value is None:
        db.data[key] = argv[2]
        return integer(len(argv[2]))
    value = text_of(value)
    if value is None:
        return WRONGTYPE
    if len(value) + len(argv[2]) > BULK_MAX:
        return TOO_BIG
    value += argv[2]
    db.data[key] = value
    return integer(len(value))


def strlen(c, argv):
    value = c.db.get(argv[1])
    if value is None:
        return ZERO
    value = text_of(value)
    if value is None:
        return WRONGTYPE
    return integer(len(value))


def getrange(c, argv):
    start = int_arg(argv[2])
    end = int_arg(argv[3])
    value = c.db.get(argv[1])
    if value is None:
        return EMPTY_BULK
    value = text_of(value)
    if value is None:
        return WRONGTYPE
    n = len(value)
    if start < 0 and end < 0 and start > end:
        return EMPTY_BULK
    if start < 0:
        start = max(n + start, 0)
    if end < 0:
        end = max(n + end, 0)
    if end >= n:
        end = n - 1
    if start > end or n == 0:
        return EMPTY_BULK
    part = value[start : end + 1]
    return b"$%d\r\n%s\r\n" % (len(part), part)


COMMANDS = {
    b"get": (get, 2),
    b"set": (set_, -3),
    b"setnx": (setnx, 3),
    b"setex": (setex, 4),
    b"psetex": (psetex, 4),
    b"getset": (getset, 3),
    b"getdel": (getdel, 2),
    b"mget": (mget, -2),
    b"mset": (mset, -3),
    b"msetnx": (msetnx, -3),
    b"incr": (incr, 2),
    b"decr": (decr, 2),
    b"incrby": (incrby, 3),
    b"decrby": (decrby, 3),
    b"incrbyfloat": (incrbyfloat, 3),
    b"append": (append, 3),
    b"strlen": (strlen, 2),
    b"getrange": (getrange, 4),
}
