"""The keyspace: 16 databases of typed values, with key expiry.

Values are plain Python containers, chosen so the hot commands are one C-level call each:

    string      bytes, or int once a counter command wrote it (redis's int encoding)
    list        collections.deque of RESP-encoded elements (see commands/lists.py)
    hash        dict (insertion-ordered, like redis's small listpack hashes)
    set         RandomSet: members in a list plus a dict member -> position (O(1) SPOP)
    sorted set  ZSet: a dict member -> score plus a SortedList of (score, member)

A command finds a value's type with `type(value) is ...`. Expiry times are absolute Unix
milliseconds in a per-database dict beside the values (redis keeps `expires` apart the same
way), so a key without a TTL costs nothing extra and a lookup only consults `expires` when
the database has any. Expired keys are deleted lazily when touched, and actively by
`Database.expire_cycle`, which pops a min-heap of (deadline, key) about ten times a second.
"""

from __future__ import annotations

import heapq
import math
import time
from collections import deque
from random import random

from sortedcontainers import SortedList

DATABASES = 16

TYPE_NAMES = {bytes: b"string", int: b"string", deque: b"list", dict: b"hash"}


def now_ms() -> int:
    """Wall-clock Unix time in milliseconds (redis's mstime)."""
    return time.time_ns() // 1_000_000


class ZSet:
    """A sorted set: members ordered by (score, member bytes), as redis orders them.

    `compact` follows redis's choice of encoding (listpack up to 128 members of at most 64
    bytes, then a skiplist for good). It matters for one visible detail: a listpack stores
    an integral score as an integer, so a score of -0 reads back as 0 there."""

    __slots__ = ("scores", "order", "compact")

    MAX_COMPACT_ENTRIES = 128  # zset-max-listpack-entries
    MAX_COMPACT_VALUE = 64  # zset-max-listpack-value

    def __init__(self, first_member_len: int = 0) -> None:
        self.scores: dict[bytes, float] = {}
        self.order: SortedList = SortedList()
        # redis 7.0 decides from ZADD's first member alone, not from its number of pairs (as
        # 7.2 does; found by difffuzz.py: 129 pairs over two members stay a listpack).
        self.compact = first_member_len <= self.MAX_COMPACT_VALUE

    def __len__(self) -> int:
        return len(self.scores)

    def set_score(self, member: bytes, score: float) -> None:
        """Insert member, or move it to a new score."""
        old = self.scores.get(member)
        if old is not None:
            if old == score:
                return
            self.order.remove((old, member))
        elif self.compact and (
            len(self.scores) >= self.MAX_COMPACT_ENTRIES or len(member) > self.MAX_COMPACT_VALUE
        ):
            self.compact = False
        if score == 0.0 and self.compact:
            score = 0.0  # -0.0 becomes 0.0
        self.scores[member] = score
        self.order.add((score, member))

    def remove(self, member: bytes) -> bool:
        score = self.scores.pop(member, None)
        if score is None:
            return False
        self.order.remove((score, member))
        return True

    def pop_first(self) -> tuple[float, bytes]:
        score, member = self.order.pop(0)
        del self.scores[member]
        return score, member

    def pop_last(self) -> tuple[float, bytes]:
        score, member = self.order.pop()
        del self.scores[member]
        return score, member

    def rank(self, member: bytes) -> int | None:
        score = self.scores.get(member)
        if score is None:
            return None
        return self.order.bisect_left((score, member))

    def first_at_or_above(self, score: float) -> int:
        """Index of the first entry whose score is >= score."""
        return self.order.bisect_left((score,))  # (s,) sorts before every (s, member)

    def first_above(self, score: float) -> int:
        """Index of the first entry whose score is > score."""
        if score == math.inf:
            return len(self.order)
        return self.order.bisect_left((math.nextafter(score, math.inf),))


TYPE_NAMES[ZSet] = b"zset"


class RandomSet:
    """A set that also hands out a uniformly random member in O(1), as SPOP and SRANDMEMBER
    need (a Python set can only pop in a fixed order): the members in a list, each one's
    index in a dict. Removing a member moves the last one into its slot."""

    __slots__ = ("positions", "members")

    def __init__(self) -> None:
        self.positions: dict[bytes, int] = {}
        self.members: list[bytes] = []

    def __len__(self) -> int:
        return len(self.members)

    def __contains__(self, member: bytes) -> bool:
        return member in self.positions

    def __iter__(self):
        return iter(self.members)

    def add(self, member: bytes) -> bool:
        """Add member; whether it was new."""
        positions = self.positions
        if member in positions:
            return False
        positions[member] = len(self.members)
        self.members.append(member)
        return True

    def discard(self, member: bytes) -> bool:
        """Remove member; whether it was there."""
        index = self.positions.pop(member, None)
        if index is None:
            return False
        members = self.members
        last = members.pop()
        if index < len(members):
            members[index] = last
            self.positions[last] = index
        return True

    def random_member(self) -> bytes:
        return self.members[int(random() * len(self.members))]

    def pop_random(self) -> bytes:
        members = self.members
        index = int(random() * len(members))
        member = members[index]
        last = members.pop()
        if index < len(members):
            members[index] = last
            self.positions[last] = index
        del self.positions[member]
        return member


TYPE_NAMES[RandomSet] = b"set"


class Database:
    """One numbered database: values, expiry deadlines, and the heap that drives active
    expiry.

    Every access to a key goes through `get`, which is where lazy expiry happens. While the
    database has no deadline at all, `get` *is* the values dict's own `get` (a C call, no
    Python frame: the common case costs nothing); the first deadline swaps in the checking
    version, and the expire cycle swaps the plain one back once no deadline is left."""

    __slots__ = ("index", "data", "expires", "_deadlines", "get", "_checking")

    def __init__(self, index: int) -> None:
        self.index = index
        self.data: dict[bytes, object] = {}
        self.expires: dict[bytes, int] = {}  # key -> deadline (Unix ms)
        # (deadline, key) for every deadline ever set; entries whose key has since been
        # deleted or given another deadline are skipped when they surface.
        self._deadlines: list[tuple[int, bytes]] = []
        self._checking = False
        self.get = self.data.get

    def _get_live(self, key: bytes):
        """The live value of key, or None. An expired key is deleted on the way."""
        value = self.data.get(key)
        if value is not None and self.expires:
            deadline = self.expires.get(key)
            if deadline is not None and deadline < now_ms():
                self.delete(key)
                return None
        return value

    def _check_expiry(self, on: bool) -> None:
        if on != self._checking:
            self._checking = on
            self.get = self._get_live if on else self.data.get

    def exists(self, key: bytes) -> bool:
        return self.get(key) is not None

    def delete(self, key: bytes) -> bool:
        if self.data.pop(key, None) is None:
            return False
        if self.expires:
            self.expires.pop(key, None)
        return True

    def set_deadline(self, key: bytes, deadline: int) -> None:
        if not self._checking:
            self._check_expiry(True)
        self.expires[key] = deadline
        heapq.heappush(self._deadlines, (deadline, key))
        # Entries of keys given new deadlines pile up: rebuild when most are stale.
        if len(self._deadlines) > 2 * len(self.expires) + 1024:
            self._deadlines = [(d, k) for k, d in self.expires.items()]
            heapq.heapify(self._deadlines)

    def persist(self, key: bytes) -> bool:
        """Drop key's deadline; whether it had one."""
        return self.expires.pop(key, None) is not None

    def ttl_ms(self, key: bytes) -> int | None:
        """Milliseconds left before key expires, or None when it has no deadline."""
        deadline = self.expires.get(key)
        if deadline is None:
            return None
        return max(deadline - now_ms(), 0)

    def flush(self) -> None:
        self.data = {}
        self.expires = {}
        self._deadlines = []
        self._checking = True  # forces the rebind below to the new dict's get
        self._check_expiry(False)

    def live_keys(self) -> list[bytes]:
        """Every key that has not expired (KEYS, SCAN), without deleting anything."""
        if not self.expires:
            return list(self.data)
        now = now_ms()
        expires = self.expires
        return [k for k in self.data if expires.get(k, now) >= now]

    def expire_cycle(self, now: int, budget: int) -> int:
        """Delete up to `budget` keys whose deadline has passed; return how many."""
        heap = self._deadlines
        expires = self.expires
        done = 0
        while heap and heap[0][0] < now and done < budget:
            deadline, key = heapq.heappop(heap)
            if expires.get(key) == deadline:
                del expires[key]
                del self.data[key]
                done += 1
        if not expires:
            self._deadlines = []
            self._check_expiry(False)
        return done

    def __len__(self) -> int:
        return len(self.data)


class Store:
    """All databases of the server."""

    __slots__ = ("dbs",)

    def __init__(self) -> None:
        self.dbs = [Database(i) for i in range(DATABASES)]

    def flush_all(self) -> None:
        for db in self.dbs:
            db.flush()

    def expire_cycle(self, budget: int = 20_000) -> int:
        now = now_ms()
        done = 0
        for db in self.dbs:
            if db.expires or db._deadlines:
                done += db.expire_cycle(now, budget - done)
        return done
