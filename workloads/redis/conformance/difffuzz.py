"""Command-level differential fuzzing of a redis implementation against redis-server (issue 12 §2).

A seeded generator writes random sequences of valid and near-valid commands (wrong arity, wrong
types, bad and boundary numbers, out-of-range indexes, odd and duplicated flags, empty and binary
arguments, random-case names, unknown commands, inline and multibulk forms, requests that get no
reply, now and then a collection big enough to change redis's encoding) over a small key space (six
keys, each family mostly on a key of its own, the empty key now and then, a few fields and members,
16 databases), so that commands interact. Each command goes to the implementation and to
redis-server in lock-step, one connection each (a few commands are pipelined in one write at a
time), and the replies are compared byte for byte. A crash, a hang (no reply within the timeout), a
missing or extra reply, a connection closed (or kept open) where redis-server does otherwise, or a
divergent reply is a *finding*. Each finding is minimised (delta debugging over the command
sequence, every candidate replayed on FLUSHALLed servers and fresh connections, a crashed server
restarted) to a short reproducer, printed as a `cases.py` case.

Run by a human (servers started as the conformance suite starts them, from the registry; the
implementations are built by `./msgbench build redis`, redis-server is Debian's):

    .venv/bin/python workloads/redis/conformance/difffuzz.py --impl c --seconds 60 --seed 1
    .venv/bin/python workloads/redis/conformance/difffuzz.py --impl go --commands 20000 --out DIR

API (for `msgbench fuzz redis --differential` and test_difffuzz.py):

    campaign(impl, ref, *, seconds=None, commands=None, seed=0, out_dir=None, log=None,
             timeout_s=5.0, minimise_s=120.0, sequence_len=200) -> dict

- `impl`, `ref`: callables that take no argument and return a running server: any object with
  `.port` (int), `.alive()` (bool) and optionally `.kill()` and `.log_tail()` (what
  msgbench.serverproc.Server has). The campaign calls `impl()` once at the start and again
  whenever the server it has is no longer alive (a crash) or had to be killed (a hang: it calls
  `.kill()` first); likewise `ref()`. The caller owns every server returned: `ServerPool(spec)`
  below is such a callable (it starts msgbench.serverproc.Server, restarts a dead one, and
  `close()` kills what it started; `ServerPool(spec, first=server)` hands out an already running
  server first, e.g. a pytest fixture's, and never kills that one).
- Bounded by `seconds` of fuzzing, by `commands` sent, or both (the first reached ends it; at
  least one is needed). Minimising is not counted in either (each finding gets at most
  `minimise_s` seconds of it); `timeout_s` is how long a reply may take before it is a hang.
- `out_dir` (optional): `difffuzz.json` (the returned dict) and one `finding-N.resp` per finding
  (the reproducer's request bytes, one write).
- Returns a JSON-ready dict: `seed`, `commands` (sent to the implementation, minimisation
  excluded), `seconds` (of fuzzing), `commands_per_s`, `sequences`, `families` (commands sent per
  family), `commands_by_name`, `unsupported` (optional commands the implementation does not have:
  not fuzzed, see below), `restarts`, and `findings`: a list of {`kind`, `signature`, `command`,
  `got`, `want`, `reproducer` (commands, printable), `stream` (the request bytes, repr),
  `case` (a cases.py entry), `original_length`, `length`, `replays`, `mode` (how it reproduces:
  `each` = one command per write, `one` = the whole reproducer in one write, `none` = it did not
  reproduce), `one_write` (whether it also reproduces in one write, as test_differential sends a
  case), `duplicates` (later hits of the same signature, not minimised again)}.

What is fuzzed: every command of the SPEC's Tier A and Tier B (§3), the transactions
(MULTI/EXEC/DISCARD/WATCH/UNWATCH) and the other commands the implementations have beyond the
SPEC (GETEX, GETRANGE, SETRANGE, RENAME, LREM, HSETNX, ZRANGEBYSCORE, ...). Those beyond the SPEC
are optional: before fuzzing, each is probed once on an empty keyspace, and one the
implementation answers with "unknown command" (or a syntax error where redis-server accepts the
form) is left out and listed in `unsupported`. Never generated: blocking commands, commands that
write to disk or wait (SAVE, WAIT), TIME and LASTSAVE, `HELLO 2|3` (a server-specific map, and
RESP3 is optional: SPEC §3 "Reply rules"), `CONFIG GET` of anything but `save`, `appendonly` and
an unknown name (SPEC §3: other patterns may be `*0`), CONFIG SET, `COMMAND`/`COMMAND DOCS`/`INFO`
of every section, and expiry times that could pass during a run, or keys left behind already
expired (SPEC §3 "Expiry": when such a key goes is each server's own timing): relative TTLs are 0
or negative, which delete at once, or at least 1000 s; absolute times are far in the future, or
in the past only for EXPIREAT, PEXPIREAT and GETEX, which then delete at once (SET ... EXAT in
the past would leave the key behind until expiry removes it).

Documented differences, normalised (compared as the SPEC says, not byte for byte; see
`equivalent()` and `Lockstep`):

- SPEC §3 "Reply rules", server-specific replies compared by shape: SPOP, SRANDMEMBER and
  RANDOMKEY results (each member or key the implementation gave is checked on redis-server
  instead; after an SPOP that popped other members than redis-server did, redis-server's set is
  brought to the implementation's by SADD/SREM on the side, so that the runs stay comparable);
  SCAN (order and cursors: a scan from cursor 0 that ends at once on both is compared as a set
  of keys, anything else by shape); `CLIENT ID` and `COMMAND COUNT` (an integer); `COMMAND` and
  `HELLO` without arguments (arrays); `INFO` (only the keys= and expires= of each database:
  avg_ttl is an estimate).
- Unordered collections, whose order follows each server's hashing (SMEMBERS, HKEYS, HVALS,
  HGETALL as pairs, KEYS): compared as multisets, as test_properties.py and
  test_differential.py's `keys-` cases do.
- SPEC §3 "Expiry": TTL, PTTL, EXPIRETIME and PEXPIRETIME may differ by the time between the two
  servers' runs of the same command (±2 s, ±2000 ms).
- Beyond the SPEC: ZRANGEBYLEX and ZREVRANGEBYLEX over members of different scores, whose
  result redis documents as unspecified (it follows the random levels of its skiplist):
  accepted when redis-server's set holds different scores.
- Inside an EXEC reply each element is compared by the rule of the command queued for it. The
  commands checked on redis-server (SPOP, SRANDMEMBER, RANDOMKEY, ZRANGEBYLEX,
  ZREVRANGEBYLEX) are not generated inside MULTI, and each ends its pipelined batch.
"""

from __future__ import annotations

import argparse
import ast
import json
import random
import re
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

# ---- requests ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cmd:
    """One request: its arguments, how it is written, and what it gets back."""

    args: tuple[bytes, ...]
    family: str
    inline: bool = False
    raw: bytes | None = None  # bytes sent as they are (protocol family), instead of args
    expect: int = 1  # replies redis-server sends for it (0: `*0`, blank inline lines)
    closes: bool = False  # redis-server closes the connection after its reply (QUIT, errors)

    @property
    def name(self) -> str:
        if self.raw is not None:
            return "<raw>"
        return self.args[0].decode("latin-1").lower() if self.args else ""

    def encode(self) -> bytes:
        if self.raw is not None:
            return self.raw
        if self.inline:
            return b" ".join(_inline_arg(a) for a in self.args) + b"\r\n"
        parts = [b"*%d\r\n" % len(self.args)]
        for a in self.args:
            parts.append(b"$%d\r\n%s\r\n" % (len(a), a))
        return b"".join(parts)

    def show(self) -> str:
        if self.raw is not None:
            return repr(self.raw)
        words = " ".join(_show_arg(a) for a in self.args)
        return f"{words}  (inline)" if self.inline else words


_PLAIN = re.compile(rb"[!#-&(-\[\]-~]+")  # printable ASCII but space, quotes and backslash


def _inline_arg(a: bytes) -> bytes:
    """An argument of an inline request: as it is, or double-quoted with redis's escapes."""
    if _PLAIN.fullmatch(a):
        return a
    out = bytearray(b'"')
    for ch in a:
        if ch in (0x22, 0x5C):
            out += b"\\" + bytes([ch])
        elif 0x20 <= ch < 0x7F:
            out.append(ch)
        else:
            out += b"\\x%02x" % ch
    return bytes(out + b'"')


def _show_arg(a: bytes) -> str:
    if _PLAIN.fullmatch(a):
        return a.decode()
    return repr(a)[1:]


def _can_inline(c: Cmd) -> bool:
    return c.raw is None and bool(c.args) and not c.args[0].startswith(b"*")


# ---- the generator -----------------------------------------------------------------------------

LONG = b"L" * 70  # longer than redis's 64-byte listpack entries: the encodings change
KEYS = (b"a", b"b", b"c", b"d", b"e", b"k\x00\xff\r\n")
EMPTY_KEY = b""  # a seventh key, now and then
HOME = {"strings": b"a", "lists": b"b", "hashes": b"c", "sets": b"d", "zsets": b"e"}
FIELDS = (b"f", b"g", b"h", b"1", b"", b"\x00\xff", LONG)
MEMBERS = (b"m", b"n", b"o", b"1", b"2", b"-3", b"10", b"", b"\x00\xff", LONG)
VALUES = (
    b"v", b"w", b"1", b"0", b"-5", b"3.5", b"", b"\x00\r\n\xff", b"9223372036854775807",
    b"-9223372036854775808", b"abc", LONG, b"1e3", b"010", b" 1", b"10.50", b"-0", b"42",
)  # fmt: skip
INTS = (
    b"1", b"0", b"-1", b"5", b"100", b"-100", b"9223372036854775807", b"-9223372036854775808",
    b"9223372036854775808", b"-9223372036854775809", b"99999999999999999999", b"+1", b"-0",
    b"01", b" 1", b"1 ", b"", b"1.0", b"abc", b"0x10", b"1e3",
)  # fmt: skip
FLOATS = (
    b"1", b"0", b"-1", b"1.5", b"0.1", b"-0", b"-0.0", b"3.0e-2", b"1e3", b"1e308", b"1.7e308",
    b"-1e308", b"1e400", b"1e-400", b"4e-320", b"inf", b"-inf", b"+inf", b"INF", b"infinity",
    b"nan", b"NaN", b"abc", b"", b" 1", b"1 ", b"0x10", b".5", b"5.", b"1.5e", b"2",
    b"12345678901234567890", b"0.30000000000000004", b"-2.5", b"+1.5", b"1E2", b"00.5",
)  # fmt: skip
GOOD_SCORES = (b"0", b"-0", b"1", b"2", b"-3", b"0.5", b"1e3", b"inf", b"-inf", b"-0.0", b"7")
ODD_INDEXES = (
    b"9223372036854775807", b"-9223372036854775808", b"99999999999999999999", b"x", b"1.0", b"",
    b"+1", b"-0", b" 1",
)  # fmt: skip
ODD_COUNTS = (
    b"-1", b"-5", b"9223372036854775807", b"-9223372036854775808", b"x", b"", b"1.5", b"+2",
    b"99999999999999999999",
)  # fmt: skip
SCORE_BOUNDS = (
    b"-inf", b"+inf", b"inf", b"0", b"1", b"(1", b"(-1", b"2.5", b"(2.5", b"abc", b"(", b"((1",
    b"[1", b"1e400", b"nan", b"(inf", b"(-inf", b"2", b"10", b"-3",
)  # fmt: skip
LEX_BOUNDS = (b"-", b"+", b"[a", b"(a", b"[m", b"(n", b"[1", b"(z", b"a", b"", b"[", b"(", b"[\x00")
GLOB = (b"a", b"b", b"*", b"?", b"[", b"]", b"^", b"-", b"\\", b"k", b"!", b"c")
DBS = (b"0",) * 6 + (b"1", b"15", b"16", b"-1", b"abc", b"1.0", b"")
NAMES = (b"n1", b"lab", b"", b"a b", b"x\ny", b"\x00", b"name-with-dash")
CASES_OF = ("upper", "lower", "random")


def _b(n: int) -> bytes:
    return str(n).encode()


class Generator:
    """Random commands, from one seed: the same seed gives the same commands."""

    def __init__(
        self, seed: int, unsupported: set[str] = frozenset(), now: int | None = None
    ) -> None:
        self.r = random.Random(seed)
        self.unsupported = set(unsupported)
        self.in_multi = False
        self.queued = 0
        self.now = int(time.time()) if now is None else now  # absolute expiry times
        self.home: bytes | None = None
        self.table = self._table()

    # -- arguments --

    def pick(self, seq: Sequence):
        return seq[self.r.randrange(len(seq))]

    def key(self) -> bytes:
        """Mostly the family's own key (fewer WRONGTYPE errors), else any of the keys."""
        x = self.r.random()
        if x < 0.65 and self.home is not None:
            return self.home
        return self.pick(KEYS) if x < 0.97 else EMPTY_KEY

    def keys(self, lo: int = 1, hi: int = 3) -> list[bytes]:
        return [self.key() for _ in range(self.r.randint(lo, hi))]

    def field(self) -> bytes:
        return self.pick(FIELDS) if self.r.random() < 0.3 else self.pick(FIELDS[:4])

    def member(self) -> bytes:
        return self.pick(MEMBERS) if self.r.random() < 0.4 else self.pick(MEMBERS[:7])

    def value(self) -> bytes:
        return self.pick(VALUES)

    def int_(self) -> bytes:
        return self.pick(INTS) if self.r.random() < 0.35 else _b(self.r.randint(-10, 10))

    def float_(self) -> bytes:
        return self.pick(FLOATS) if self.r.random() < 0.35 else _b(self.r.randint(-5, 5))

    def index(self) -> bytes:
        return self.pick(ODD_INDEXES) if self.r.random() < 0.1 else _b(self.r.randint(-7, 7))

    def count(self) -> bytes:
        return self.pick(ODD_COUNTS) if self.r.random() < 0.15 else _b(self.r.randint(0, 8))

    def seconds(self) -> bytes:
        """A relative expiry that cannot pass during a run, or one that deletes at once, or bad."""
        x = self.r.random()
        if x < 0.7:
            return _b(self.r.randint(1000, 999_999))
        if x < 0.85:
            return self.pick((b"0", b"-1", b"-100"))
        return self.pick((
            b"9223372036854775807", b"9223372036854775806", b"-9223372036854775808",
            b"99999999999999999999", b"abc", b"1.5", b"", b"+100000", b"4611686018427387",
            b"9223372036854775", b"2147483648",
        ))  # fmt: skip

    def millis(self) -> bytes:
        x = self.r.random()
        if x < 0.7:
            return _b(self.r.randint(1_000_000, 999_999_999))
        if x < 0.85:
            return self.pick((b"0", b"-1", b"-100000"))
        return self.pick((
            b"9223372036854775807", b"-9223372036854775808", b"99999999999999999999", b"x",
            b"1.5", b"", b"9223372036854775",
        ))  # fmt: skip

    def unix(self, ms: bool, past: bool = True) -> bytes:
        """An absolute expiry: far in the future, in the past (EXPIREAT and GETEX delete at
        once; not for SET, whose key would linger until expiry removes it, at a time each
        server chooses), or bad."""
        x = self.r.random()
        if x < 0.6 or (x < 0.85 and not past):
            t = self.now + self.r.randint(1000, 999_999)
        elif x < 0.85:
            t = self.pick((1, 100, self.now - 1000))
        else:
            return self.pick((b"9223372036854775807", b"-1", b"0", b"abc", b"99999999999999999999"))
        return _b(t * 1000 + self.r.randint(0, 999) if ms else t)

    def pattern(self) -> bytes:
        if self.r.random() < 0.4:
            return self.pick((b"*", b"a*", b"?", b"[a-c]", b"k*", b"*\\x00*", b"[^a]", b""))
        return b"".join(self.pick(GLOB) for _ in range(self.r.randint(1, 6)))

    def some(self, *opts: bytes, p: float = 0.5) -> list[bytes]:
        return [o for o in opts if self.r.random() < p]

    # -- the command table: family -> [(name, weight, args-maker)] --

    def _table(self) -> dict[str, list[tuple[str, int, Callable[[], list[bytes]]]]]:
        r, k, v, f, m = self.r, self.key, self.value, self.field, self.member

        def set_opts() -> list[bytes]:
            out: list[bytes] = []
            for _ in range(r.choice((0, 0, 1, 1, 2, 3))):
                o = self.pick((b"NX", b"XX", b"GET", b"KEEPTTL", b"EX", b"PX", b"EXAT", b"PXAT"))
                out.append(o)
                if o == b"EX":
                    out.append(self.seconds())
                elif o == b"PX":
                    out.append(self.millis())
                elif o in (b"EXAT", b"PXAT"):
                    out.append(self.unix(o == b"PXAT", past=False))
            if r.random() < 0.03:
                out.append(self.pick((b"FOO", b"EX", b"NXX", b"")))
            return out

        def getex_opts() -> list[bytes]:
            o = self.pick((b"", b"", b"EX", b"PX", b"EXAT", b"PXAT", b"PERSIST", b"FOO"))
            if not o:
                return []
            if o == b"EX":
                return [o, self.seconds()]
            if o == b"PX":
                return [o, self.millis()]
            if o in (b"EXAT", b"PXAT"):
                return [o, self.unix(o == b"PXAT")]
            return [o]

        def expire_opts() -> list[bytes]:
            if r.random() < 0.6:
                return []
            return [self.pick((b"NX", b"XX", b"GT", b"LT", b"FOO"))] + (
                [self.pick((b"NX", b"XX", b"GT", b"LT"))] if r.random() < 0.15 else []
            )

        def zadd() -> list[bytes]:
            flags = self.some(b"NX", b"XX", b"GT", b"LT", b"CH", b"INCR", p=0.12)
            pairs = [x for _ in range(r.randint(1, 3)) for x in (self.float_(), m())]
            return [b"ZADD", k(), *flags, *pairs]

        def zrange() -> list[bytes]:
            args = [b"ZRANGE", k(), self.index(), self.index()]
            if r.random() < 0.3:
                args.append(b"WITHSCORES")
            if r.random() < 0.03:
                args.append(self.pick((b"FOO", b"WITHSCORES")))
            return args

        def by_score(name: bytes) -> Callable[[], list[bytes]]:
            def make() -> list[bytes]:
                args = [name, k(), self.pick(SCORE_BOUNDS), self.pick(SCORE_BOUNDS)]
                if r.random() < 0.3:
                    args.append(b"WITHSCORES")
                if r.random() < 0.2:
                    args += [b"LIMIT", self.index(), self.count()]
                return args

            return make

        def by_lex(name: bytes) -> Callable[[], list[bytes]]:
            def make() -> list[bytes]:
                args = [name, k(), self.pick(LEX_BOUNDS), self.pick(LEX_BOUNDS)]
                if r.random() < 0.2:
                    args += [b"LIMIT", self.index(), self.count()]
                return args

            return make

        def scan() -> list[bytes]:
            args = [b"SCAN", b"0" if r.random() < 0.85 else self.pick((b"1", b"7", b"x", b"-1"))]
            if r.random() < 0.4:
                args += [b"MATCH", self.pattern()]
            if r.random() < 0.3:
                args += [b"COUNT", self.pick((b"10", b"100", b"1", b"0", b"-1", b"x"))]
            if r.random() < 0.2:
                args += [b"TYPE", self.pick((b"string", b"list", b"hash", b"set", b"zset", b"x"))]
            return args

        # Big collections now and then: past redis's listpack (128 entries, 64-byte values)
        # and intset (512 integers) limits, where encodings change (and with them, e.g., the
        # storage of a -0 score).
        def many_pairs(name: bytes, first: Callable[[int], bytes], second: Callable[[], bytes]):
            def make() -> list[bytes]:
                n = r.randint(60, 140)
                return [name, k(), *[x for i in range(n) for x in (first(i), second())]]

            return make

        def many(name: bytes, item: Callable[[int], bytes], lo: int, hi: int):
            return lambda: [name, k(), *[item(i) for i in range(r.randint(lo, hi))]]

        strings = [
            ("get", 8, lambda: [b"GET", k()]),
            ("set", 10, lambda: [b"SET", k(), v(), *set_opts()]),
            ("setnx", 2, lambda: [b"SETNX", k(), v()]),
            ("getset", 2, lambda: [b"GETSET", k(), v()]),
            ("getdel", 2, lambda: [b"GETDEL", k()]),
            ("incr", 4, lambda: [b"INCR", k()]),
            ("decr", 2, lambda: [b"DECR", k()]),
            ("incrby", 3, lambda: [b"INCRBY", k(), self.int_()]),
            ("decrby", 2, lambda: [b"DECRBY", k(), self.int_()]),
            ("incrbyfloat", 3, lambda: [b"INCRBYFLOAT", k(), self.float_()]),
            ("append", 3, lambda: [b"APPEND", k(), v()]),
            ("strlen", 2, lambda: [b"STRLEN", k()]),
            ("mget", 2, lambda: [b"MGET", *self.keys(1, 4)]),
            ("mset", 2, lambda: [b"MSET", *[x for y in self.keys(1, 3) for x in (y, v())]]),
            ("msetnx", 1, lambda: [b"MSETNX", *[x for y in self.keys(1, 3) for x in (y, v())]]),
            ("getex", 2, lambda: [b"GETEX", k(), *getex_opts()]),
            ("getrange", 2, lambda: [b"GETRANGE", k(), self.index(), self.index()]),
            ("substr", 1, lambda: [b"SUBSTR", k(), self.index(), self.index()]),
            (
                "setrange",
                2,
                lambda: [
                    b"SETRANGE",
                    k(),
                    self.pick((b"0", b"1", b"3", b"10", b"-1", b"536870912", b"x", b"99")),
                    v(),
                ],
            ),
            ("setex", 1, lambda: [b"SETEX", k(), self.seconds(), v()]),
            ("psetex", 1, lambda: [b"PSETEX", k(), self.millis(), v()]),
        ]
        keys = [
            ("del", 4, lambda: [b"DEL", *self.keys()]),
            ("unlink", 1, lambda: [b"UNLINK", *self.keys()]),
            ("exists", 3, lambda: [b"EXISTS", *self.keys()]),
            ("touch", 1, lambda: [b"TOUCH", *self.keys()]),
            ("type", 3, lambda: [b"TYPE", k()]),
            ("expire", 3, lambda: [b"EXPIRE", k(), self.seconds(), *expire_opts()]),
            ("pexpire", 2, lambda: [b"PEXPIRE", k(), self.millis(), *expire_opts()]),
            ("expireat", 1, lambda: [b"EXPIREAT", k(), self.unix(False), *expire_opts()]),
            ("pexpireat", 1, lambda: [b"PEXPIREAT", k(), self.unix(True), *expire_opts()]),
            ("ttl", 3, lambda: [b"TTL", k()]),
            ("pttl", 2, lambda: [b"PTTL", k()]),
            ("expiretime", 1, lambda: [b"EXPIRETIME", k()]),
            ("pexpiretime", 1, lambda: [b"PEXPIRETIME", k()]),
            ("persist", 2, lambda: [b"PERSIST", k()]),
            ("keys", 2, lambda: [b"KEYS", self.pattern()]),
            ("scan", 2, scan),
            ("dbsize", 1, lambda: [b"DBSIZE"]),
            ("select", 2, lambda: [b"SELECT", self.pick(DBS)]),
            ("rename", 2, lambda: [b"RENAME", k(), k()]),
            ("renamenx", 1, lambda: [b"RENAMENX", k(), k()]),
            ("randomkey", 1, lambda: [b"RANDOMKEY"]),
            ("move", 1, lambda: [b"MOVE", k(), self.pick(DBS)]),
            ("swapdb", 1, lambda: [b"SWAPDB", self.pick(DBS), self.pick(DBS)]),
            ("flushdb", 1, lambda: [b"FLUSHDB", *self.some(self.pick((b"ASYNC", b"SYNC", b"X")))]),
        ]
        lists = [
            ("lpush", 5, lambda: [b"LPUSH", k(), *[v() for _ in range(r.randint(1, 3))]]),
            ("rpush", 5, lambda: [b"RPUSH", k(), *[v() for _ in range(r.randint(1, 3))]]),
            ("lpushx", 1, lambda: [b"LPUSHX", k(), v()]),
            ("rpushx", 1, lambda: [b"RPUSHX", k(), v()]),
            ("lpop", 3, lambda: [b"LPOP", k(), *self.some(self.count(), p=0.4)]),
            ("rpop", 3, lambda: [b"RPOP", k(), *self.some(self.count(), p=0.4)]),
            ("llen", 2, lambda: [b"LLEN", k()]),
            ("lindex", 2, lambda: [b"LINDEX", k(), self.index()]),
            ("lset", 2, lambda: [b"LSET", k(), self.index(), v()]),
            ("ltrim", 2, lambda: [b"LTRIM", k(), self.index(), self.index()]),
            ("lrange", 4, lambda: [b"LRANGE", k(), self.index(), self.index()]),
            ("lrem", 2, lambda: [b"LREM", k(), self.pick((b"0", b"1", b"-1", b"2", b"x")), v()]),
            ("rpush", 1, many(b"RPUSH", lambda i: v(), 60, 200)),
        ]
        hashes = [
            (
                "hset",
                6,
                lambda: [b"HSET", k(), *[x for _ in range(r.randint(1, 3)) for x in (f(), v())]],
            ),
            ("hmset", 1, lambda: [b"HMSET", k(), f(), v()]),
            ("hsetnx", 1, lambda: [b"HSETNX", k(), f(), v()]),
            ("hget", 4, lambda: [b"HGET", k(), f()]),
            ("hmget", 2, lambda: [b"HMGET", k(), *[f() for _ in range(r.randint(1, 3))]]),
            ("hgetall", 2, lambda: [b"HGETALL", k()]),
            ("hdel", 3, lambda: [b"HDEL", k(), *[f() for _ in range(r.randint(1, 2))]]),
            ("hlen", 2, lambda: [b"HLEN", k()]),
            ("hexists", 2, lambda: [b"HEXISTS", k(), f()]),
            ("hincrby", 3, lambda: [b"HINCRBY", k(), f(), self.int_()]),
            ("hincrbyfloat", 2, lambda: [b"HINCRBYFLOAT", k(), f(), self.float_()]),
            ("hkeys", 1, lambda: [b"HKEYS", k()]),
            ("hvals", 1, lambda: [b"HVALS", k()]),
            ("hstrlen", 1, lambda: [b"HSTRLEN", k(), f()]),
            ("hset", 1, many_pairs(b"HSET", lambda i: b"f%d" % i, v)),
        ]
        sets = [
            ("sadd", 6, lambda: [b"SADD", k(), *[m() for _ in range(r.randint(1, 3))]]),
            ("srem", 3, lambda: [b"SREM", k(), *[m() for _ in range(r.randint(1, 2))]]),
            ("smembers", 2, lambda: [b"SMEMBERS", k()]),
            ("sismember", 2, lambda: [b"SISMEMBER", k(), m()]),
            ("smismember", 1, lambda: [b"SMISMEMBER", k(), m(), m()]),
            ("scard", 2, lambda: [b"SCARD", k()]),
            ("spop", 3, lambda: [b"SPOP", k(), *self.some(self.count(), p=0.4)]),
            ("srandmember", 1, lambda: [b"SRANDMEMBER", k(), *self.some(self.count(), p=0.5)]),
            ("sadd", 1, many(b"SADD", lambda i: _b(r.randint(-5, 700)), 100, 600)),
        ]
        zsets = [
            ("zadd", 8, zadd),
            ("zadd", 2, lambda: [b"ZADD", k(), *[x for _ in range(3) for x in (b"0", m())]]),
            (
                "zadd",
                1,
                many_pairs(
                    b"ZADD", lambda i: self.pick(GOOD_SCORES), lambda: b"m%d" % r.randrange(150)
                ),
            ),
            ("zrange", 4, zrange),
            ("zscore", 3, lambda: [b"ZSCORE", k(), m()]),
            ("zmscore", 1, lambda: [b"ZMSCORE", k(), m(), m()]),
            ("zcard", 2, lambda: [b"ZCARD", k()]),
            ("zrem", 2, lambda: [b"ZREM", k(), *[m() for _ in range(r.randint(1, 2))]]),
            ("zrank", 2, lambda: [b"ZRANK", k(), m()]),
            ("zrevrank", 1, lambda: [b"ZREVRANK", k(), m()]),
            ("zincrby", 3, lambda: [b"ZINCRBY", k(), self.float_(), m()]),
            ("zpopmin", 2, lambda: [b"ZPOPMIN", k(), *self.some(self.count(), p=0.4)]),
            ("zpopmax", 1, lambda: [b"ZPOPMAX", k(), *self.some(self.count(), p=0.4)]),
            (
                "zrevrange",
                1,
                lambda: [
                    b"ZREVRANGE",
                    k(),
                    self.index(),
                    self.index(),
                    *self.some(b"WITHSCORES", p=0.3),
                ],
            ),
            (
                "zcount",
                1,
                lambda: [b"ZCOUNT", k(), self.pick(SCORE_BOUNDS), self.pick(SCORE_BOUNDS)],
            ),
            ("zrangebyscore", 2, by_score(b"ZRANGEBYSCORE")),
            ("zrevrangebyscore", 1, by_score(b"ZREVRANGEBYSCORE")),
            ("zrangebylex", 1, by_lex(b"ZRANGEBYLEX")),
            ("zrevrangebylex", 1, by_lex(b"ZREVRANGEBYLEX")),
        ]
        transactions = [
            ("multi", 4, lambda: [b"MULTI"]),
            ("exec", 1, lambda: [b"EXEC"]),
            ("discard", 1, lambda: [b"DISCARD"]),
            ("watch", 1, lambda: [b"WATCH", *self.keys(1, 2)]),
            ("unwatch", 1, lambda: [b"UNWATCH"]),
        ]
        server = [
            ("ping", 3, lambda: [b"PING", *self.some(v(), p=0.4)]),
            ("echo", 2, lambda: [b"ECHO", v()]),
            (
                "config",
                1,
                lambda: [
                    b"CONFIG",
                    b"GET",
                    self.pick((b"save", b"appendonly", b"SAVE", b"no-such-param")),
                ],
            ),
            (
                "client",
                2,
                lambda: self.pick(
                    (
                        [b"CLIENT", b"SETNAME", self.pick(NAMES)],
                        [b"CLIENT", b"GETNAME"],
                        [b"CLIENT", b"ID"],
                        [b"CLIENT", b"NOSUCH"],
                    )
                ),
            ),
            ("command", 1, lambda: [b"COMMAND", b"COUNT"]),
            ("info", 1, lambda: [b"INFO", self.pick((b"keyspace", b"KEYSPACE"))]),
            ("hello", 1, lambda: [b"HELLO", self.pick((b"4", b"1", b"0", b"abc", b"-1", b""))]),
            ("auth", 1, lambda: [b"AUTH", self.pick((b"x", b"default"))]),
            ("flushall", 1, lambda: [b"FLUSHALL"]),
        ]
        return {
            "strings": strings,
            "keys": keys,
            "lists": lists,
            "hashes": hashes,
            "sets": sets,
            "zsets": zsets,
            "transactions": transactions,
            "server": server,
        }

    FAMILY_WEIGHTS = {
        "strings": 20,
        "keys": 14,
        "lists": 14,
        "hashes": 12,
        "sets": 12,
        "zsets": 16,
        "transactions": 4,
        "server": 5,
        "protocol": 1,
    }
    RANDOM = {"spop", "srandmember", "randomkey"}
    BYLEX = {"zrangebylex", "zrevrangebylex"}
    CHECKED = RANDOM | BYLEX  # replies checked on the reference: they end their batch

    def command(self) -> Cmd:
        r = self.r
        if self.in_multi and (self.queued >= 8 or (self.queued and r.random() < 0.2)):
            fam, name, make = "transactions", "exec", lambda: [self.pick((b"EXEC", b"DISCARD"))]
        else:
            fams = list(self.FAMILY_WEIGHTS)
            fam = r.choices(fams, [self.FAMILY_WEIGHTS[f] for f in fams])[0]
            if fam == "protocol":
                return self._protocol()
            choices = [
                (n, w, mk)
                for n, w, mk in self.table[fam]
                if n not in self.unsupported and not (self.in_multi and n in self.CHECKED)
            ]
            if not choices:
                return self.command()
            name, _, make = r.choices(choices, [w for _, w, _ in choices])[0]
        self.home = HOME.get(fam)
        args = list(make())
        x = r.random()
        if x < 0.04 and len(args) > 1:
            args.pop()  # too few arguments (or a flag or count dropped)
        elif x < 0.07:
            args.append(self.pick((self.key, self.value, self.int_))())
        elif x < 0.08:
            name, fam = "unknown", "unknown"
            args = [self.pick((b"FOO", b"NOSUCH", b"GETT", b"", b"\x00")), *args[1:]]
        if args and r.random() < 0.2:
            args[0] = self._case(args[0])
        if name == "multi":
            self.in_multi, self.queued = True, 0
        elif name in ("exec", "discard"):
            self.in_multi = False
        elif self.in_multi:
            self.queued += 1
        cmd = Cmd(tuple(args), fam)
        if r.random() < 0.1 and _can_inline(cmd):
            cmd = Cmd(cmd.args, fam, inline=True)
        return cmd

    def _case(self, word: bytes) -> bytes:
        how = self.pick(CASES_OF)
        if how == "lower":
            return word.lower()
        if how == "upper":
            return word.upper()
        return bytes(c ^ 0x20 if chr(c).isalpha() and self.r.random() < 0.5 else c for c in word)

    def _protocol(self) -> Cmd:
        """Requests redis answers with nothing, an odd but valid request, or (rarely) a protocol
        error that closes the connection."""
        x = self.r.random()
        if x < 0.6:
            raw = self.pick((b"*0\r\n", b"*-1\r\n", b"\r\n", b"  \t \r\n", b"\n"))
            return Cmd((), "protocol", raw=raw, expect=0)
        if x < 0.9:
            raw = self.pick((
                b"*1\r\n$4\r\nPING\r\n", b"PING\n", b"ECHO 'a b'\r\n", b'ECHO "\\x41\\n"\r\n',
                b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", b"*1\r\n$0\r\n\r\n", b'"" ""\r\n',
            ))  # fmt: skip
            return Cmd((), "protocol", raw=raw)
        raw = self.pick((
            b"*abc\r\n", b"*1\r\n+PING\r\n", b'"unbalanced\r\n', b"*2\r\n$4\r\nPING\r\n$-1\r\n",
            b"SET a 'x'y\r\n",
        ))  # fmt: skip
        return Cmd((), "protocol", raw=raw, closes=True)

    def sequence(self, n: int) -> list[list[Cmd]]:
        """`n` commands in batches (each batch one write; most batches hold one command). A
        QUIT or a request that closes the connection ends its batch, and so do SPOP, SRANDMEMBER,
        RANDOMKEY, ZRANGEBYLEX and ZREVRANGEBYLEX (their replies may be checked on the
        reference, and after SPOP the reference brought in line, before the next command)."""
        self.in_multi, self.queued = False, 0
        out: list[list[Cmd]] = []
        left = n
        while left > 0:
            size = 1 if self.r.random() < 0.5 else self.r.randint(2, 12)
            batch: list[Cmd] = []
            while len(batch) < size and left > 0:
                c = self.command() if self.r.random() > 0.003 else Cmd((b"QUIT",), "server")
                if c.name == "quit":
                    c = Cmd(c.args, c.family, closes=True)
                    self.in_multi = False
                batch.append(c)
                left -= 1
                if c.closes or c.name in self.CHECKED:
                    break
            out.append(batch)
        return out


# ---- replies -----------------------------------------------------------------------------------

Reply = tuple  # (type byte as str, payload): "+", "-", ":" bytes; "$" bytes|None; "*" tuple|None


class BadReply(Exception):
    pass


def parse_reply(buf: bytes | bytearray, pos: int) -> tuple[Reply, int] | None:
    """One RESP2 reply at `pos` (RESP3 types are read too, as RESP2 would never send them):
    (reply, end) or None when incomplete. Integers stay bytes: equal replies are equal bytes."""
    end = buf.find(b"\r\n", pos)
    if end < 0:
        return None
    t = chr(buf[pos]) if pos < len(buf) else ""
    line = bytes(buf[pos + 1 : end])
    nxt = end + 2
    if t in "+-:_,#(":
        return (t, line), nxt
    if t in "$=!":
        try:
            n = int(line)
        except ValueError:
            raise BadReply(f"bad bulk length {line!r}") from None
        if n < 0:
            return (t, None), nxt
        if len(buf) < nxt + n + 2:
            return None
        if buf[nxt + n : nxt + n + 2] != b"\r\n":
            raise BadReply("bulk not ended by CRLF")
        return (t, bytes(buf[nxt : nxt + n])), nxt + n + 2
    if t in "*~>%|":
        try:
            n = int(line)
        except ValueError:
            raise BadReply(f"bad array length {line!r}") from None
        if n < 0:
            return (t, None), nxt
        items = []
        for _ in range(n * 2 if t in "%|" else n):
            got = parse_reply(buf, nxt)
            if got is None:
                return None
            item, nxt = got
            items.append(item)
        return (t, tuple(items)), nxt
    raise BadReply(f"not a reply: {bytes(buf[pos : pos + 40])!r}")


def encode_reply(r: Reply) -> bytes:
    t, p = r
    if t in "$=!":
        return b"$-1\r\n" if p is None else b"%s%d\r\n%s\r\n" % (t.encode(), len(p), p)
    if t in "*~>%|":
        if p is None:
            return b"*-1\r\n"
        n = len(p) // 2 if t in "%|" else len(p)
        return b"%s%d\r\n" % (t.encode(), n) + b"".join(encode_reply(x) for x in p)
    return t.encode() + p + b"\r\n"


# ---- what counts as the same reply (the SPEC's documented differences) -------------------------

UNORDERED = {"smembers", "keys", "hkeys", "hvals", "sinter", "sunion", "sdiff"}  # as multisets
TTL_SLACK = {"ttl": 2, "expiretime": 2, "pttl": 2000, "pexpiretime": 2000}


def _int(r: Reply) -> int | None:
    if r[0] != ":":
        return None
    try:
        return int(r[1])
    except ValueError:
        return None


def _keyspace(r: Reply) -> dict[str, str] | None:
    if r[0] != "$" or r[1] is None:
        return None
    out = {}
    for line in r[1].decode("latin-1").split("\r\n"):
        if line.startswith("db") and ":" in line:
            db, info = line.split(":", 1)
            out[db] = re.sub(r",avg_ttl=\d+", "", info)
        elif line == "# Keyspace":
            out[line] = ""
    return out


def _shape(got: Reply, want: Reply) -> bool:
    """Same type, and for arrays the same length."""
    if got[0] != want[0] or (got[1] is None) != (want[1] is None):
        return False
    if got[0] == "*" and got[1] is not None:
        return len(got[1]) == len(want[1])
    return True


def equivalent(args: Sequence[bytes], got: Reply, want: Reply, queued=None) -> bool:
    """Whether the implementation's reply `got` to `args` counts as redis-server's `want`:
    equal, or equal once the differences the SPEC documents are set aside (module docstring).
    `queued`: for EXEC, the arguments of each queued command."""
    if got == want:
        return True
    if not args or got[0] != want[0] or got[0] == "-":
        return False
    name = args[0].decode("latin-1").lower()
    sub = args[1].decode("latin-1").lower() if len(args) > 1 else ""
    if name in UNORDERED or (name in Generator.RANDOM and got[0] == "*"):
        if name in Generator.RANDOM and not _shape(got, want):
            return False
        if got[1] is None or want[1] is None:
            return False
        if name in Generator.RANDOM:
            return True
        return sorted(got[1]) == sorted(want[1])
    if name in Generator.RANDOM:
        return _shape(got, want)
    if name == "hgetall" and got[1] is not None and want[1] is not None:
        pairs = lambda x: sorted(zip(x[::2], x[1::2], strict=True))  # noqa: E731
        return len(got[1]) % 2 == 0 and pairs(got[1]) == pairs(want[1])
    if name == "scan" and got[0] == "*" and got[1] and want[1]:
        if len(got[1]) != 2 or got[1][0][0] != "$" or got[1][1][0] != "*":
            return False
        gkeys, wkeys = got[1][1][1] or (), want[1][1][1] or ()
        if tuple(args[1:2]) == (b"0",) and got[1][0][1] == want[1][0][1] == b"0":
            return sorted(gkeys) == sorted(wkeys)  # a whole scan: the same keys
        return got[1][0][1].isdigit() and len(set(gkeys)) == len(gkeys)
    if name in TTL_SLACK:
        g, w = _int(got), _int(want)
        if g is None or w is None:
            return False
        return (g < 0 and g == w) or (g >= 0 and w >= 0 and abs(g - w) <= TTL_SLACK[name])
    if (name, sub) in (("client", "id"), ("command", "count")):
        return got[0] == ":"
    if name in ("command", "hello") and got[0] == "*":
        return True  # the command table, the HELLO map: by shape (test_properties.py)
    if name == "info":
        return _keyspace(got) == _keyspace(want)
    if name == "exec" and queued is not None and got[1] is not None and want[1] is not None:
        return len(got[1]) == len(want[1]) == len(queued) and all(
            equivalent(q, g, w) for q, g, w in zip(queued, got[1], want[1], strict=True)
        )
    return False


# ---- talking to the two servers ----------------------------------------------------------------


class Endpoint(Protocol):
    port: int

    def alive(self) -> bool: ...


class Conn:
    def __init__(self, port: int, timeout: float) -> None:
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = bytearray()
        self.closed = False

    def send(self, data: bytes) -> bool:
        try:
            self.sock.sendall(data)
            return True
        except OSError:
            return False

    def _recv(self, deadline: float) -> bool:
        """More bytes into buf: False when the peer closed; TimeoutError after deadline."""
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        self.sock.settimeout(left)
        try:
            chunk = self.sock.recv(1 << 16)
        except TimeoutError:
            raise TimeoutError from None
        except OSError:
            chunk = b""
        if not chunk:
            self.closed = True
            return False
        self.buf += chunk
        return True

    def replies(self, n: int, timeout: float) -> tuple[list[Reply], str]:
        """Up to `n` replies: (replies, how it ended: "ok", "closed" or "timeout")."""
        out: list[Reply] = []
        pos = 0
        deadline = time.monotonic() + timeout
        try:
            while len(out) < n:
                got = parse_reply(self.buf, pos) if pos < len(self.buf) else None
                if got is not None:
                    out.append(got[0])
                    pos = got[1]
                    continue
                if self.closed or not self._recv(deadline):
                    return out, "closed"
            return out, "ok"
        except TimeoutError:
            return out, "timeout"
        finally:
            del self.buf[:pos]

    def wait_closed(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        try:
            while not self.closed:
                self._recv(deadline)
        except TimeoutError:
            return False
        return True

    def unexpected(self) -> bytes:
        """Bytes that arrived beyond the replies read (an extra reply), without waiting."""
        if not self.closed:
            self.sock.setblocking(False)
            try:
                while True:
                    chunk = self.sock.recv(1 << 16)
                    if not chunk:
                        self.closed = True
                        break
                    self.buf += chunk
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                self.closed = True
            finally:
                self.sock.setblocking(True)
        return bytes(self.buf)

    def call(self, *args: bytes, timeout: float = 10.0) -> Reply:
        self.send(Cmd(tuple(args), "sync").encode())
        got, how = self.replies(1, timeout)
        if how != "ok":
            raise RefError(f"reference: {how} on {args!r}")
        return got[0]

    def close(self) -> None:
        self.sock.close()


class RefError(Exception):
    """The reference misbehaved (slow, closed): the sequence is abandoned, not a finding."""


@dataclass
class Finding:
    kind: str  # divergence, crash, hang, closed, kept-open, extra-reply, bad-reply
    index: int  # the command (in the sequence) whose reply was wrong
    command: Cmd
    got: bytes
    want: bytes
    detail: str = ""

    @property
    def signature(self) -> str:
        def t(b: bytes) -> str:
            if not b:
                return "nothing"
            if b[:1] == b"-":
                return b" ".join(b[1:].split(b" ")[:3]).decode("latin-1").strip()
            return chr(b[0])

        return f"{self.kind}:{self.command.name}:{t(self.got)}:{t(self.want)}"


class Servers:
    """The implementation and the reference, restarted through their factories when needed."""

    def __init__(self, impl: Callable[[], Endpoint], ref: Callable[[], Endpoint]) -> None:
        self.factories = {"impl": impl, "ref": ref}
        self.current: dict[str, Endpoint | None] = {"impl": None, "ref": None}
        self.restarts = 0

    def get(self, which: str) -> Endpoint:
        ep = self.current[which]
        if ep is None or not ep.alive():
            if ep is not None:
                self.restarts += 1
            ep = self.current[which] = self.factories[which]()
        return ep

    def replace(self, which: str) -> None:
        """Kill a server that hangs; the next get() starts another."""
        ep = self.current[which]
        kill = getattr(ep, "kill", None)
        if kill is not None:
            kill()
        if ep is not None:
            self.restarts += 1
        self.current[which] = None

    def died(self, which: str, grace: float = 1.0) -> bool:
        ep = self.current[which]
        deadline = time.monotonic() + grace
        while ep is not None and ep.alive() and time.monotonic() < deadline:
            time.sleep(0.02)
        return ep is not None and not ep.alive()


def _log_tail(ep: Endpoint | None) -> str:
    tail = getattr(ep, "log_tail", None)
    try:
        return tail(1500) if tail else ""
    except OSError:
        return ""


class Lockstep:
    """One connection to each server, a FLUSHALLed keyspace; batches of commands sent to both
    and their replies compared one by one."""

    def __init__(self, servers: Servers, timeout: float, sync: bool = True) -> None:
        self.servers = servers
        self.timeout = timeout
        self.sync = sync  # bring the reference in line after a random SPOP (lock-step only)
        self.index = 0
        self.impl = self.ref = None
        self._reset_tx()
        ref, impl = servers.get("ref"), servers.get("impl")
        try:
            self.ref = Conn(ref.port, timeout)
        except OSError as e:
            raise RefError(f"reference refused a connection: {e}") from None
        try:
            self.impl = Conn(impl.port, timeout)
        except OSError as e:
            self.broken = Finding("refused", -1, Cmd((), "server"), b"", b"", str(e))
            return
        for conn in (self.ref, self.impl):
            conn.send(b"*1\r\n$8\r\nFLUSHALL\r\n")
            got, how = conn.replies(1, timeout * 2)
            if how != "ok" or got[0] != ("+", b"OK"):
                if conn is self.ref:
                    raise RefError(f"reference FLUSHALL: {how} {got}")
                self.broken = Finding("bad-flushall", -1, Cmd((b"FLUSHALL",), "server"),
                                      repr(got).encode(), b"+OK", how)  # fmt: skip
                return
        self.broken = None

    def _reset_tx(self) -> None:
        self.in_multi = False
        self.queued: list[tuple[bytes, ...]] = []

    def close(self) -> None:
        for c in (self.impl, self.ref):
            if c is not None:
                c.close()

    def _reconnect(self) -> None:
        self.close()
        self.ref = Conn(self.servers.get("ref").port, self.timeout)
        self.impl = Conn(self.servers.get("impl").port, self.timeout)
        self._reset_tx()

    def run(self, batch: list[Cmd]) -> Finding | None:
        first = self.index
        extra = self.impl.unexpected()
        if extra:
            prev = max(first - 1, 0)
            return Finding("extra-reply", prev, batch[0], extra, b"", "bytes after the replies")
        data = b"".join(c.encode() for c in batch)
        self.index += len(batch)
        sent = self.impl.send(data)
        if not self.ref.send(data):
            raise RefError("reference closed the connection")
        want_n = sum(c.expect for c in batch)
        try:
            want, how = self.ref.replies(want_n, self.timeout * 2)
        except BadReply as e:
            raise RefError(f"reference: {e}") from None
        if how == "timeout":
            raise RefError(f"reference answered {len(want)} of {want_n} replies in time")
        ref_closed = how == "closed" or (batch[-1].closes and self.ref.wait_closed(self.timeout))
        # Which command each reply belongs to.
        owners = [i for i, c in enumerate(batch) for _ in range(c.expect)][: len(want)]
        try:
            got, ghow = self.impl.replies(len(want), self.timeout) if sent else ([], "closed")
        except BadReply as e:  # bytes that are no RESP reply at all
            return Finding("bad-reply", first, batch[0], bytes(self.impl.buf[:300]), b"", str(e))
        for j, w in enumerate(want):
            cmd = batch[owners[j]]
            at = first + owners[j]
            if j >= len(got):
                return self._missing(ghow, at, cmd, w)
            g = got[j]
            if not self._same(cmd, g, w):
                return Finding("divergence", at, cmd, encode_reply(g), encode_reply(w))
        if ref_closed:
            if not self.impl.wait_closed(min(self.timeout, 2.0)):
                last = first + len(batch) - 1
                return Finding("kept-open", last, batch[-1], b"", b"", "redis-server closed")
            self._reconnect()
            return None
        if self.impl.closed or ghow == "closed":
            last = first + len(batch) - 1
            kind = "crash" if self.servers.died("impl") else "closed"
            return Finding(kind, last, batch[-1], b"", b"", _log_tail(self.servers.current["impl"]))
        return None

    def _missing(self, how: str, at: int, cmd: Cmd, want: Reply) -> Finding:
        if how == "timeout":
            self.servers.replace("impl")
            detail = f"no reply in {self.timeout} s"
            return Finding("hang", at, cmd, b"", encode_reply(want), detail)
        kind = "crash" if self.servers.died("impl") else "closed"
        detail = _log_tail(self.servers.current["impl"])
        return Finding(kind, at, cmd, b"", encode_reply(want), detail)

    def _same(self, cmd: Cmd, got: Reply, want: Reply) -> bool:
        args = cmd.args
        name = cmd.name
        ok = got == want
        if not ok and name in Generator.RANDOM and self.sync and not self.in_multi:
            ok = self._random_reply(args, got, want)
        elif not ok and name in Generator.BYLEX and self.sync and not self.in_multi:
            ok = got[0] == want[0] == "*" and self._mixed_scores(args)
        elif not ok:
            ok = equivalent(args, got, want, self.queued if name == "exec" else None)
        self._track_tx(cmd, want)
        return ok

    def _track_tx(self, cmd: Cmd, want: Reply) -> None:
        """Follow redis-server's MULTI state: which commands an EXEC reply answers."""
        name = cmd.name
        if not self.in_multi:
            if name == "multi" and want == ("+", b"OK"):
                self.in_multi, self.queued = True, []
        elif name == "exec" or (name == "discard" and want == ("+", b"OK")):
            self._reset_tx()  # EXEC ends the transaction whatever it answers (EXECABORT too)
        elif want == ("+", b"QUEUED"):
            self.queued.append(cmd.args or (b"<raw>",))

    def _mixed_scores(self, args: Sequence[bytes]) -> bool:
        """Whether the sorted set's members have different scores: then redis leaves the
        result of ZRANGEBYLEX unspecified (it follows redis's skiplist levels, random)."""
        if len(args) < 2:
            return False
        reply = self.ref.call(b"ZRANGE", args[1], b"0", b"-1", b"WITHSCORES")
        if reply[0] != "*" or not reply[1]:
            return False
        return len({x[1] for x in reply[1][1::2]}) > 1

    def _random_reply(self, args: Sequence[bytes], got: Reply, want: Reply) -> bool:
        """SPOP, SRANDMEMBER, RANDOMKEY whose replies differ: each member the implementation
        gave must be one redis-server holds; after SPOP redis-server is brought to the
        implementation's set (SPEC §3: SPOP order compared by shape)."""
        name = args[0].decode("latin-1").lower()
        if not _shape(got, want) or got[0] not in "$*":
            return False
        if want[1] is None:
            return got[1] is None
        ref = self.ref
        if name == "randomkey":
            return ref.call(b"EXISTS", got[1]) == (":", b"1")
        key = args[1]
        mine = [got[1]] if got[0] == "$" else [x[1] for x in got[1]]
        theirs = [want[1]] if want[0] == "$" else [x[1] for x in want[1]]
        if any(x is None for x in mine):
            return False
        signed = len(args) > 2 and args[2].startswith(b"-")
        if name == "spop" or not signed:
            if len(set(mine)) != len(mine):
                return False
        if name == "spop":
            ref.call(b"SADD", key, *theirs)  # the set before the pop
        present = ref.call(b"SMISMEMBER", key, *mine)
        if present[0] != "*" or any(x != (":", b"1") for x in present[1]):
            return False
        if name == "spop":
            ref.call(b"SREM", key, *mine)
        return True


# ---- replaying and minimising ------------------------------------------------------------------


def replay(servers: Servers, cmds: list[Cmd], mode: str, timeout: float) -> Finding | None:
    """Run `cmds` on FLUSHALLed servers over fresh connections: `each` = one command per write
    (lock-step), `one` = every command in one write (how test_differential sends a case)."""
    batches = [[c] for c in cmds] if mode == "each" else [cmds]
    ls = Lockstep(servers, timeout, sync=mode == "each")
    try:
        if ls.broken:
            return ls.broken
        for b in batches:
            f = ls.run(b)
            if f is not None:
                return f
        # An extra reply after the last one, or a late crash.
        time.sleep(0.01)
        extra = ls.impl.unexpected()
        if extra and not ls.impl.closed:
            return Finding("extra-reply", len(cmds) - 1, cmds[-1], extra, b"", "after the last")
        if servers.died("impl", grace=0):
            return Finding("crash", len(cmds) - 1, cmds[-1], b"", b"", "")
        return None
    finally:
        ls.close()


def ddmin(items: list, fails: Callable[[list], bool], budget: Callable[[], bool]) -> list:
    """Zeller's delta debugging: a 1-minimal sublist of `items` (order kept) for which
    `fails` holds, given that it holds for `items`; stops early when `budget()` is False."""
    n = 2
    while len(items) >= 2 and budget():
        chunk = max(len(items) // n, 1)
        parts = [items[i : i + chunk] for i in range(0, len(items), chunk)]
        reduced = False
        for part in parts:  # a part alone
            if len(parts) > 2 and fails(part):
                items, n, reduced = part, 2, True
                break
        if not reduced:
            for i in range(len(parts)):  # everything but one part
                rest = [x for j, p in enumerate(parts) if j != i for x in p]
                if rest and budget() and fails(rest):
                    items, n, reduced = rest, max(n - 1, 2), True
                    break
        if not reduced:
            if n >= len(items):
                break
            n = min(n * 2, len(items))
    return items


def minimise(
    servers: Servers, cmds: list[Cmd], first: Finding, timeout: float, seconds: float
) -> dict:
    """Shrink `cmds` (ending with the command of `first`) to a short reproducer of a finding
    with the same signature."""
    start = time.monotonic()
    replays = 0

    def reproduces(candidate: list[Cmd], mode: str) -> Finding | None:
        nonlocal replays
        replays += 1
        try:
            f = replay(servers, candidate, mode, timeout)
        except (RefError, OSError):
            return None
        return f if f is not None and f.signature == first.signature else None

    mode = "none"
    for m in ("each", "one"):
        if reproduces(cmds, m):
            mode = m
            break
    small = cmds
    if mode != "none":
        cache: dict[tuple[int, ...], bool] = {}
        ids = list(range(len(cmds)))

        def fails(sub: list[int]) -> bool:
            key = tuple(sub)
            if key not in cache:
                cache[key] = reproduces([cmds[i] for i in sub], mode) is not None
            return cache[key]

        kept = ddmin(ids, fails, lambda: time.monotonic() - start < seconds)
        small = [cmds[i] for i in kept]
    final = reproduces(small, mode) if mode != "none" else None
    one = mode == "one" or (mode == "each" and reproduces(small, "one") is not None)
    shown = final or first
    return {
        "kind": first.kind,
        "signature": first.signature,
        "command": shown.command.show(),
        "got": repr(shown.got),
        "want": repr(shown.want),
        "detail": shown.detail[-800:],
        "reproducer": [c.show() for c in small],
        "stream": repr(b"".join(c.encode() for c in small)),
        "case": case_text(first.signature, small),
        "original_length": len(cmds),
        "length": len(small),
        "replays": replays,
        "mode": mode,
        "one_write": one,
        "minimise_s": round(time.monotonic() - start, 2),
        "duplicates": 0,
    }


def case_text(signature: str, cmds: list[Cmd]) -> str:
    """A cases.py entry for the reproducer."""
    slug = re.sub(r"[^a-z0-9]+", "-", signature.lower()).strip("-")[:40]
    if any(c.raw is not None or c.inline for c in cmds):
        return f'("fuzz-{slug}", raw({b"".join(c.encode() for c in cmds)!r})),'

    def word(a: bytes) -> str:
        return repr(a.decode()) if _PLAIN.fullmatch(a) or a == b"" else repr(a)

    reqs = ", ".join("[" + ", ".join(word(a) for a in c.args) + "]" for c in cmds)
    return f'("fuzz-{slug}", c({reqs})),'


# ---- probing optional commands -----------------------------------------------------------------

# Commands (and forms) the SPEC does not require: fuzzed only where the implementation has them.
OPTIONAL_PROBES: dict[str, list[bytes]] = {
    "getex": [b"GETEX", b"a"],
    "getrange": [b"GETRANGE", b"a", b"0", b"1"],
    "substr": [b"SUBSTR", b"a", b"0", b"1"],
    "setrange": [b"SETRANGE", b"probe", b"0", b"x"],
    "setex": [b"SETEX", b"probe", b"1000", b"x"],
    "psetex": [b"PSETEX", b"probe", b"1000000", b"x"],
    "msetnx": [b"MSETNX", b"probe", b"x"],
    "unlink": [b"UNLINK", b"a"],
    "touch": [b"TOUCH", b"a"],
    "expireat": [b"EXPIREAT", b"a", b"1"],
    "pexpireat": [b"PEXPIREAT", b"a", b"1"],
    "expiretime": [b"EXPIRETIME", b"a"],
    "pexpiretime": [b"PEXPIRETIME", b"a"],
    "rename": [b"RENAME", b"a", b"b"],
    "renamenx": [b"RENAMENX", b"a", b"b"],
    "randomkey": [b"RANDOMKEY"],
    "move": [b"MOVE", b"a", b"1"],
    "swapdb": [b"SWAPDB", b"0", b"1"],
    "lpushx": [b"LPUSHX", b"a", b"x"],
    "rpushx": [b"RPUSHX", b"a", b"x"],
    "lrem": [b"LREM", b"a", b"0", b"x"],
    "hmset": [b"HMSET", b"probe", b"f", b"v"],
    "hsetnx": [b"HSETNX", b"probe", b"f", b"v"],
    "hincrbyfloat": [b"HINCRBYFLOAT", b"probe", b"f", b"1"],
    "hstrlen": [b"HSTRLEN", b"a", b"f"],
    "smismember": [b"SMISMEMBER", b"a", b"x"],
    "srandmember": [b"SRANDMEMBER", b"a"],
    "zmscore": [b"ZMSCORE", b"a", b"x"],
    "zrevrank": [b"ZREVRANK", b"a", b"x"],
    "zpopmax": [b"ZPOPMAX", b"a"],
    "zrevrange": [b"ZREVRANGE", b"a", b"0", b"1"],
    "zcount": [b"ZCOUNT", b"a", b"0", b"1"],
    "zrangebyscore": [b"ZRANGEBYSCORE", b"a", b"0", b"1"],
    "zrevrangebyscore": [b"ZREVRANGEBYSCORE", b"a", b"1", b"0"],
    "zrangebylex": [b"ZRANGEBYLEX", b"a", b"-", b"+"],
    "zrevrangebylex": [b"ZREVRANGEBYLEX", b"a", b"+", b"-"],
    "multi": [b"MULTI"],  # the transactions family, with exec, discard, watch, unwatch
    "watch": [b"WATCH", b"a"],
    "unwatch": [b"UNWATCH"],
    "auth": [b"AUTH", b"x"],
}
FAMILY_OF_PROBE = {"multi": ("multi", "exec", "discard")}


def probe(servers: Servers, timeout: float) -> set[str]:
    """The optional commands the implementation does not have (unknown command, or a syntax
    or arity error where redis-server accepts the request)."""
    missing: set[str] = set()
    for name, args in OPTIONAL_PROBES.items():
        ls = Lockstep(servers, timeout)
        try:
            ls.ref.send(Cmd(tuple(args), "probe").encode())
            ls.impl.send(Cmd(tuple(args), "probe").encode())
            (want,), _ = ls.ref.replies(1, timeout)
            got, how = ls.impl.replies(1, timeout)
        finally:
            ls.close()
        if how != "ok":
            continue  # a crash or hang on a probe: fuzz it and let the campaign report it
        g = got[0]
        text = (g[1] or b"").lower() if g[0] == "-" and g != want else b""
        if text.startswith(b"err unknown command") or (
            want[0] != "-" and (b"syntax" in text or b"wrong number" in text)
        ):
            missing.update(FAMILY_OF_PROBE.get(name, (name,)))
    return missing


# ---- the campaign ------------------------------------------------------------------------------


def campaign(
    impl: Callable[[], Endpoint],
    ref: Callable[[], Endpoint],
    *,
    seconds: float | None = None,
    commands: int | None = None,
    seed: int = 0,
    out_dir: Path | str | None = None,
    log: Callable[[str], None] | None = None,
    timeout_s: float = 5.0,
    minimise_s: float = 120.0,
    sequence_len: int = 200,
) -> dict:
    """Fuzz `impl` against `ref` (see the module docstring); returns the campaign's figures."""
    if seconds is None and commands is None:
        raise ValueError("campaign needs seconds or commands (or both)")
    say = log or (lambda _msg: None)
    servers = Servers(impl, ref)
    unsupported = probe(servers, timeout_s)
    if unsupported:
        say(f"not fuzzed (the implementation does not have them): {' '.join(sorted(unsupported))}")
    gen = Generator(seed, unsupported)
    families: Counter[str] = Counter()
    names: Counter[str] = Counter()
    findings: dict[str, dict] = {}
    sent = sequences = ref_errors = 0
    fuzz_s = 0.0

    def more() -> bool:
        return (seconds is None or fuzz_s < seconds) and (commands is None or sent < commands)

    while more():
        seq = gen.sequence(sequence_len)
        sequences += 1
        t0 = time.monotonic()
        flat: list[Cmd] = []
        found: Finding | None = None
        try:
            ls = Lockstep(servers, timeout_s)
        except RefError as e:
            ref_errors = _ref_trouble(say, sequences, e, ref_errors)
            fuzz_s += time.monotonic() - t0
            continue
        try:
            found = ls.broken
            for batch in seq if found is None else []:
                if not more():
                    break
                flat += batch
                sent += len(batch)
                for c in batch:
                    families[c.family] += 1
                    names[c.name] += 1
                found = ls.run(batch)
                if found is not None:
                    break
                if seconds is not None and time.monotonic() - t0 + fuzz_s >= seconds:
                    break
        except RefError as e:
            ref_errors = _ref_trouble(say, sequences, e, ref_errors)
        else:
            ref_errors = 0
        finally:
            ls.close()
            fuzz_s += time.monotonic() - t0
        if found is None:
            continue
        sig = found.signature
        if sig in findings:
            findings[sig]["duplicates"] += 1
            if found.kind in ("crash", "hang"):
                servers.get("impl")
            continue
        say(f"finding {len(findings) + 1}: {sig} at command {found.index} ({found.command.show()})")
        prefix = flat[: found.index + 1] if found.index >= 0 else flat
        result = minimise(servers, prefix, found, timeout_s, minimise_s)
        result["sequence"] = sequences
        result["after_commands"] = sent
        findings[sig] = result
        say(f"  minimised {result['original_length']} -> {result['length']} commands "
            f"({result['replays']} replays, reproduces: {result['mode']}):")  # fmt: skip
        for line in result["reproducer"]:
            say(f"    {line}")
        say(f"    got  {result['got']}\n    want {result['want']}")
    doc = {
        "seed": seed,
        "commands": sent,
        "seconds": round(fuzz_s, 2),
        "commands_per_s": round(sent / fuzz_s, 1) if fuzz_s else 0.0,
        "sequences": sequences,
        "families": dict(sorted(families.items())),
        "commands_by_name": dict(sorted(names.items())),
        "unsupported": sorted(unsupported),
        "restarts": servers.restarts,
        "findings": list(findings.values()),
    }
    if out_dir is not None:
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        (out / "difffuzz.json").write_text(json.dumps(doc, indent=2) + "\n")
        for i, f in enumerate(doc["findings"], 1):
            (out / f"finding-{i}.resp").write_bytes(ast.literal_eval(f["stream"]))
    return doc


def _ref_trouble(say: Callable[[str], None], sequence: int, e: RefError, count: int) -> int:
    """A sequence abandoned because redis-server did not answer (a slow machine): not a
    finding. A dead reference is restarted by the next sequence; one alive that keeps failing
    ends the campaign (the reference is not the campaign's to kill)."""
    say(f"sequence {sequence}: {e}; abandoned")
    if count + 1 >= 3:
        raise RuntimeError(f"redis-server failed 3 sequences in a row: {e}")
    return count + 1


# ---- servers for a human's run -----------------------------------------------------------------


class ServerPool:
    """A factory for campaign(): starts msgbench.serverproc.Server(spec) whenever the last one
    is dead (or none yet); `first` is handed out first and is not the pool's to kill."""

    def __init__(self, spec, first: Endpoint | None = None, start: Callable | None = None) -> None:
        self.spec = spec
        self.first = first
        self.started: list = []
        self._start = start
        self._last: Endpoint | None = None

    def __call__(self) -> Endpoint:
        if self.first is not None and self.first.alive() and self._last is None:
            self._last = self.first
            return self.first
        if self._start is None:
            from msgbench.serverproc import Server

            self._start = Server
        s = self._start(self.spec)
        self.started.append(s)
        self._last = s
        return s

    def close(self) -> None:
        for s in self.started:
            s.kill()
        self.started.clear()


def spec_of(impl_id: str):
    """How the conformance suite starts an implementation (conftest._spec)."""
    from msgbench import registry
    from msgbench.serverproc import ServerSpec

    impl = registry.workload("redis").impls[impl_id]
    return ServerSpec(id=impl.id, argv=tuple(impl.argv()), cwd=impl.cwd())


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--impl", required=True, help="implementation id (e.g. c, rust, redis-server)")
    p.add_argument("--seconds", type=float, default=None, help="seconds of fuzzing")
    p.add_argument("--commands", type=int, default=None, help="commands to send")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=Path, default=None, help="folder for difffuzz.json + findings")
    p.add_argument("--timeout", type=float, default=5.0, help="seconds a reply may take")
    p.add_argument("--minimise-seconds", type=float, default=120.0)
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    a = p.parse_args(argv)
    if a.seconds is None and a.commands is None:
        a.seconds = 60.0
    impl, ref = ServerPool(spec_of(a.impl)), ServerPool(spec_of("redis-server"))
    try:
        doc = campaign(
            impl, ref, seconds=a.seconds, commands=a.commands, seed=a.seed, out_dir=a.out,
            log=lambda m: print(m, file=sys.stderr, flush=True), timeout_s=a.timeout,
            minimise_s=a.minimise_seconds,
        )  # fmt: skip
    finally:
        impl.close()
        ref.close()
    if a.json:
        print(json.dumps(doc, indent=2))
    else:
        print(f"{a.impl}: {doc['commands']} commands in {doc['seconds']} s "
              f"({doc['commands_per_s']}/s), {doc['sequences']} sequences, "
              f"{len(doc['findings'])} findings, {doc['restarts']} restarts")  # fmt: skip
        for f in doc["findings"]:
            print(f"- {f['signature']} (x{f['duplicates'] + 1}): {f['case']}")
    return 1 if doc["findings"] else 0


if __name__ == "__main__":
    sys.exit(main())


__all__: list[Any] = ["campaign", "ServerPool", "equivalent", "Generator", "ddmin", "replay"]
