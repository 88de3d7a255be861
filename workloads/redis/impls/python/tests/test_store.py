"""store: lazy and active expiry, the plain/checking `get` swap, sorted and random sets."""

from redis_impl.store import Database, RandomSet, Store, ZSet, now_ms


def test_get_is_the_dict_get_until_a_deadline_exists():
    db = Database(0)
    db.data[b"k"] = b"v"
    assert db.get == db.data.get
    db.set_deadline(b"k", now_ms() - 1)
    assert db.get(b"k") is None  # expired: deleted on access
    assert b"k" not in db.data and not db.expires


def test_active_expiry_deletes_untouched_keys_and_restores_the_plain_get():
    store = Store()
    db = store.dbs[3]
    for i in range(10):
        db.data[b"k%d" % i] = b"v"
        db.set_deadline(b"k%d" % i, now_ms() - 1 if i < 7 else now_ms() + 60_000)
    assert store.expire_cycle() == 7
    assert len(db) == 3
    db.persist(b"k7"), db.persist(b"k8"), db.persist(b"k9")
    store.expire_cycle()
    assert db.get == db.data.get


def test_expiry_heap_does_not_grow_without_bound():
    db = Database(0)
    db.data[b"k"] = b"v"
    for i in range(10_000):
        db.set_deadline(b"k", now_ms() + 100_000 + i)
    assert len(db._deadlines) < 3000


def test_zset_order_and_ranks():
    zs = ZSet()
    for score, member in ((2.0, b"b"), (1.0, b"z"), (1.0, b"a")):
        zs.set_score(member, score)
    assert list(zs.order) == [(1.0, b"a"), (1.0, b"z"), (2.0, b"b")]
    assert zs.rank(b"b") == 2 and zs.rank(b"x") is None
    assert zs.first_above(1.0) == 2 and zs.first_at_or_above(1.0) == 0
    zs.set_score(b"b", 0.5)
    assert zs.pop_first() == (0.5, b"b")


def test_random_set():
    s = RandomSet()
    assert s.add(b"a") and s.add(b"b") and not s.add(b"a")
    assert s.discard(b"a") and not s.discard(b"a")
    assert list(s) == [b"b"] and b"b" in s
    assert s.pop_random() == b"b" and len(s) == 0
