"""Keyspace commands: DEL, EXISTS, TYPE, expiry (EXPIRE … PERSIST, TTL), KEYS, SCAN,
RENAME, RANDOMKEY, DBSIZE and FLUSHDB/FLUSHALL."""

from __future__ import annotations

import random
from itertools import islice

from globmatch import compile_pattern
from numeric import INT64_MAX
from protocol import OK, ONE, ZERO, bulk_array, c_string, integer
from store import TYPE_NAMES, now_ms

from commands.common import (
    NO_SUCH_KEY,
    NOT_INTEGER,
    SYNTAX_ERROR,
    CommandError,
    error_format,
    int_arg,
    option,
)


def delete(c, argv):
    db = c.db
    deleted = 0
    for key in argv[1:]:
        if db.get(key) is not None:
            db.delete(key)
            deleted += 1
    return integer(deleted)


def exists(c, argv):
    db = c.db
    return integer(sum(1 for key in argv[1:] if db.get(key) is not None))


def type_(c, argv):
    value = c.db.get(argv[1])
    if value is None:
        return b"+none\r\n"
    return b"+%s\r\n" % TYPE_NAMES[type(value)]


# --- expiry ------------------------------------------------------------------------------


def expire(c, argv):
    return _expire(c, argv, 1000, now_ms())


def pexpire(c, argv):
    return _expire(c, argv, 1, now_ms())


def expireat(c, argv):
    return _expire(c, argv, 1000, 0)


def pexpireat(c, argv):
    return _expire(c, argv, 1, 0)


def _expire(c, argv, unit_ms: int, base: int) -> bytes:
    """expireGenericCommand: options NX/XX/GT/LT, overflow checks, a past deadline deletes."""
    nx = xx = gt = lt = False
    for arg in argv[3:]:
        opt = option(arg)
        if opt == b"nx":
            nx = True
        elif opt == b"xx":
            xx = True
        elif opt == b"gt":
            gt = True
        elif opt == b"lt":
            lt = True
        else:
            return error_format(b"Unsupported option " + c_string(arg))
    if nx and (xx or gt or lt):
        return b"-ERR NX and XX, GT or LT options at the same time are not compatible\r\n"
    if gt and lt:
        return b"-ERR GT and LT options at the same time are not compatible\r\n"
    when = int_arg(argv[2])
    invalid = b"-ERR invalid expire time in '%s' command\r\n" % argv[0].lower()
    if unit_ms != 1:
        if not -(INT64_MAX // 1000) <= when <= INT64_MAX // 1000:
            raise CommandError(invalid)
        when *= unit_ms
    if when > INT64_MAX - base:
        raise CommandError(invalid)
    when += base
    db = c.db
    key = argv[1]
    if db.get(key) is None:
        return ZERO
    current = db.expires.get(key)
    if nx and current is not None:
        return ZERO
    if xx and current is None:
        return ZERO
    if gt and (current is None or when <= current):
        return ZERO
    if lt and current is not None and when >= current:
        return ZERO
    if when <= now_ms():
        db.delete(key)
    else:
        db.set_deadline(key, when)
    return ONE


def ttl(c, argv):
    return _ttl(c, argv, False)


def pttl(c, argv):
    return _ttl(c, argv, True)


def _ttl(c, argv, ms: bool) -> bytes:
    db = c.db
    if db.get(argv[1]) is None:
        return b":-2\r\n"
    left = db.ttl_ms(argv[1])
    if left is None:
        return b":-1\r\n"
    return integer(left if ms else (left + 500) // 1000)


def persist(c, argv):
    db = c.db
    if db.get(argv[1]) is None:
        return ZERO
    return ONE if db.persist(argv[1]) else ZERO


# --- iteration ---------------------------------------------------------------------------


def keys(c, argv):
    pattern = argv[1]
    names = c.db.live_keys()
    if pattern != b"*":
        matches = compile_pattern(pattern)
        names = [k for k in names if matches(k)]
    return bulk_array(names)


def scan(c, argv):
    cursor = _parse_cursor(argv[1])
    count = 10
    matches = None
    type_name = None
    i = 2
    n = len(argv)
    while i < n:
        opt = option(argv[i])
        if opt == b"count" and i + 1 < n:
            count = int_arg(argv[i + 1], NOT_INTEGER)
            if count < 1:
                return SYNTAX_ERROR
        elif opt == b"match" and i + 1 < n:
            pattern = argv[i + 1]
            matches = None if pattern == b"*" else compile_pattern(pattern)
        elif opt == b"type" and i + 1 < n:
            type_name = c_string(argv[i + 1])
        else:
            return SYNTAX_ERROR
        i += 2
    db = c.db
    cursor, batch = c.server.scans.next_batch(db, cursor, count)
    if matches is not None:
        batch = [k for k in batch if matches(k)]
    # As redis's scanGenericCommand: only a key that matched the pattern is looked up, which
    # deletes it if it has expired (a key that did not match is left alone).
    get = db.get
    batch = [k for k in batch if get(k) is not None]
    if type_name is not None:
        wanted = type_name.lower()
        batch = [k for k in batch if TYPE_NAMES[type(db.data[k])] == wanted]
    cursor_text = b"%d" % cursor
    return b"*2\r\n$%d\r\n%s\r\n%s" % (len(cursor_text), cursor_text, bulk_array(batch))


def _parse_cursor(arg: bytes) -> int:
    """parseScanCursorOrReply: strtoul, so an empty cursor is 0 and `-1` wraps around."""
    if arg[:1] in (b" ", b"\t", b"\n", b"\r", b"\x0b", b"\x0c"):
        raise CommandError(b"-ERR invalid cursor\r\n")
    text = c_string(arg)
    if text != arg:  # bytes after a NUL are left over
        raise CommandError(b"-ERR invalid cursor\r\n")
    if not text:
        return 0
    sign = 1
    body = text
    if body[:1] in (b"+", b"-"):
        sign = -1 if body[:1] == b"-" else 1
        body = body[1:]
    if not body.isdigit():
        raise CommandError(b"-ERR invalid cursor\r\n")
    value = int(body)
    if value > 2**64 - 1:
        raise CommandError(b"-ERR invalid cursor\r\n")
    return (sign * value) % 2**64


class ScanCursors:
    """SCAN over a dict that changes between calls.

    A cursor names a snapshot of the database's keys taken when an iteration starts (cursor
    0) and a position in it; each call returns the next `count` keys that still exist. Keys
    present for the whole iteration are returned exactly once (redis promises "at least
    once"); keys added meanwhile may be missed, as redis allows. A few snapshots are kept;
    an unknown or evicted cursor ends the iteration."""

    KEEP = 64

    def __init__(self) -> None:
        self._snapshots: dict[int, list[bytes]] = {}
        self._next_id = 1

    def next_batch(self, db, cursor: int, count: int) -> tuple[int, list[bytes]]:
        if cursor == 0:
            keys = list(db.data)
            if len(keys) <= count:
                return 0, self._present(db, keys)
            scan_id = self._next_id
            self._next_id = self._next_id % 0xFFFFFFFF + 1
            self._snapshots[scan_id] = keys
            if len(self._snapshots) > self.KEEP:
                del self._snapshots[next(iter(self._snapshots))]
            position = 0
        else:
            scan_id, position = cursor >> 32, cursor & 0xFFFFFFFF
            keys = self._snapshots.get(scan_id)
            if keys is None:
                return 0, []
        end = position + count
        batch = self._present(db, keys[position:end])
        if end >= len(keys):
            self._snapshots.pop(scan_id, None)
            return 0, batch
        return (scan_id << 32) | end, batch

    @staticmethod
    def _present(db, keys: list[bytes]) -> list[bytes]:
        """The keys of a snapshot still in the database (expired ones included: scan() looks
        up the ones that match, which deletes those that have expired)."""
        data = db.data
        return [k for k in keys if k in data]


# --- whole keyspace ----------------------------------------------------------------------


def rename(c, argv):
    db = c.db
    value = db.get(argv[1])
    if value is None:
        return NO_SUCH_KEY
    src, dst = argv[1], argv[2]
    if src == dst:
        return OK
    deadline = db.expires.get(src)
    db.delete(src)
    db.delete(dst)
    db.data[dst] = value
    if deadline is not None:
        db.set_deadline(dst, deadline)
    return OK


def randomkey(c, argv):
    db = c.db
    for _ in range(100):  # an expired pick is deleted; try again, as redis does
        if not db.data:
            return c.null
        # A dict has no random access: skip a random number of keys (a C-level walk).
        key = next(islice(iter(db.data), random.randrange(len(db.data)), None))
        if db.get(key) is not None:
            return b"$%d\r\n%s\r\n" % (len(key), key)
    return c.null


def dbsize(c, argv):
    return integer(len(c.db.data))


def flushdb(c, argv):
    _flush_mode(argv)
    c.db.flush()
    return OK


def flushall(c, argv):
    _flush_mode(argv)
    c.server.store.flush_all()
    return OK


def _flush_mode(argv) -> None:
    if len(argv) > 2 or (len(argv) == 2 and option(argv[1]) not in (b"sync", b"async")):
        raise CommandError(SYNTAX_ERROR)


COMMANDS = {
    b"del": (delete, -2),
    b"unlink": (delete, -2),
    b"exists": (exists, -2),
    b"type": (type_, 2),
    b"expire": (expire, -3),
    b"pexpire": (pexpire, -3),
    b"expireat": (expireat, -3),
    b"pexpireat": (pexpireat, -3),
    b"ttl": (ttl, 2),
    b"pttl": (pttl, 2),
    b"persist": (persist, 2),
    b"keys": (keys, 2),
    b"scan": (scan, -2),
    b"rename": (rename, 3),
    b"randomkey": (randomkey, 1),
    b"dbsize": (dbsize, 1),
    b"flushdb": (flushdb, -1),
    b"flushall": (flushall, -1),
}
