//! The keyspace: sixteen databases of keys, their typed values, and their expiry times.
//!
//! Each database is an `IndexMap` (a hash index over a dense vector of entries) rather than a
//! plain hash map, for three redis features that need positions: `SCAN` walks the entry vector
//! with a cursor, `RANDOMKEY`/`SPOP` pick a uniformly random position, and the active expiry
//! cycle samples random keys with a TTL. Removal is `swap_remove` (the last entry fills the
//! hole), which keeps the vector dense; see `commands::keys::scan` for why SCAN still returns
//! every key that exists for the whole scan.
//!
//! Expiry times live in a second map holding only the keys that have one (as redis's
//! `db->expires`), so a database without TTLs pays nothing for them: every lookup checks
//! `expires` only when it is non-empty.

pub mod small_bytes;
pub mod sorted_set;

use indexmap::{IndexMap, IndexSet};
use small_bytes::SmallBytes;
use sorted_set::SortedSet;
use std::collections::VecDeque;

/// The hasher of every map: foldhash, seeded randomly per process (so hash flooding cannot be
/// precomputed), and several times faster than std's SipHash on short keys.
pub type Hasher = foldhash::fast::RandomState;
pub type Map<K, V> = IndexMap<K, V, Hasher>;
pub type Set<K> = IndexSet<K, Hasher>;

/// Number of databases (`SELECT 0` … `SELECT 15`), as redis's default `databases 16`.
pub const DATABASES: usize = 16;

/// A value. Collections are boxed so that a `Value` is as small as a `SmallBytes` (24 bytes):
/// the keyspace stores millions of short strings and pays for collection headers only where
/// there are collections.
// The box around VecDeque is deliberate (see above): it keeps `Value` at 24 bytes.
#[allow(clippy::box_collection)]
pub enum Value {
    Str(SmallBytes),
    List(Box<VecDeque<SmallBytes>>),
    Hash(Box<Map<SmallBytes, SmallBytes>>),
    Set(Box<Set<SmallBytes>>),
    ZSet(Box<SortedSet>),
}

impl Value {
    /// The name `TYPE` replies with.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
        }
    }

    /// True for a collection with no elements left (such a key must be deleted).
    pub fn is_empty_collection(&self) -> bool {
        match self {
            Value::Str(_) => false,
            Value::List(l) => l.is_empty(),
            Value::Hash(h) => h.is_empty(),
            Value::Set(s) => s.is_empty(),
            Value::ZSet(z) => z.is_empty(),
        }
    }
}

#[derive(Default)]
pub struct Db {
    pub keys: Map<SmallBytes, Value>,
    /// Absolute expiry time in Unix milliseconds, for keys that have one.
    pub expires: Map<SmallBytes, i64>,
}

impl Db {
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Deletes `key` if its TTL has passed (redis's lazy expiry, done on every access).
    /// Returns true if the key was deleted.
    #[inline]
    pub fn expire_if_needed(&mut self, key: &[u8], now: i64) -> bool {
        if self.expires.is_empty() {
            return false;
        }
        match self.expires.get(key) {
            Some(&when) if when <= now => {
                self.remove(key);
                true
            }
            _ => false,
        }
    }

    /// The live value of `key`, expiring it first if its time has passed.
    #[inline]
    pub fn get(&mut self, key: &[u8], now: i64) -> Option<&Value> {
        self.expire_if_needed(key, now);
        self.keys.get(key)
    }

    #[inline]
    pub fn get_mut(&mut self, key: &[u8], now: i64) -> Option<&mut Value> {
        self.expire_if_needed(key, now);
        self.keys.get_mut(key)
    }

    pub fn contains(&mut self, key: &[u8], now: i64) -> bool {
        self.expire_if_needed(key, now);
        self.keys.contains_key(key)
    }

    /// Sets `key` to `value`. Any TTL is cleared unless `keep_ttl` (SET KEEPTTL).
    #[inline]
    pub fn set(&mut self, key: &[u8], value: Value, keep_ttl: bool) {
        match self.keys.get_mut(key) {
            Some(slot) => *slot = value,
            None => {
                self.keys.insert(SmallBytes::new(key), value);
            }
        }
        if !keep_ttl && !self.expires.is_empty() {
            self.expires.swap_remove(key);
        }
    }

    /// Stores a new key that is known to be absent (after a failed `get_mut`).
    pub fn insert_new(&mut self, key: &[u8], value: Value) -> &mut Value {
        let (i, _) = self.keys.insert_full(SmallBytes::new(key), value);
        &mut self.keys[i]
    }

    pub fn remove(&mut self, key: &[u8]) -> Option<Value> {
        let v = self.keys.swap_remove(key)?;
        if !self.expires.is_empty() {
            self.expires.swap_remove(key);
        }
        Some(v)
    }

    /// Deletes `key` if it holds an empty collection (after a pop or remove).
    pub fn remove_if_empty(&mut self, key: &[u8]) {
        if self.keys.get(key).is_some_and(Value::is_empty_collection) {
            self.remove(key);
        }
    }

    pub fn expire_at(&self, key: &[u8]) -> Option<i64> {
        if self.expires.is_empty() {
            return None;
        }
        self.expires.get(key).copied()
    }

    /// Sets the absolute expiry of an existing key.
    pub fn set_expire(&mut self, key: &[u8], when: i64) {
        match self.expires.get_mut(key) {
            Some(w) => *w = when,
            None => {
                self.expires.insert(SmallBytes::new(key), when);
            }
        }
    }

    /// Removes the TTL of `key`; true if it had one.
    pub fn persist(&mut self, key: &[u8]) -> bool {
        !self.expires.is_empty() && self.expires.swap_remove(key).is_some()
    }

    pub fn clear(&mut self) {
        // Replace rather than clear(): a flushed 1M-key database should give its memory back.
        self.keys = Map::default();
        self.expires = Map::default();
    }

    /// One round of active expiry: samples up to `samples` keys with a TTL and deletes the
    /// expired ones. Returns (sampled, expired), so the caller can repeat while many expire.
    pub fn expire_sample(&mut self, now: i64, samples: usize, rng: &mut Rng) -> (usize, usize) {
        let n = samples.min(self.expires.len());
        let mut expired = 0;
        for _ in 0..n {
            if self.expires.is_empty() {
                break;
            }
            let i = rng.below(self.expires.len());
            let Some((key, &when)) = self.expires.get_index(i) else {
                break;
            };
            if when <= now {
                let key = key.clone();
                self.remove(&key);
                expired += 1;
            }
        }
        (n, expired)
    }
}

/// Every database plus the few server-wide counters INFO reports.
pub struct Store {
    pub dbs: Vec<Db>,
    pub rng: Rng,
    pub stats: Stats,
}

/// Counters and facts for INFO, LASTSAVE and CLIENT.
#[derive(Default)]
pub struct Stats {
    pub port: u16,
    /// Start time in Unix seconds.
    pub start_unix: i64,
    pub connected_clients: usize,
    pub total_connections: u64,
    pub total_commands: u64,
}

impl Default for Store {
    fn default() -> Self {
        Store {
            dbs: (0..DATABASES).map(|_| Db::default()).collect(),
            rng: Rng::seeded(),
            stats: Stats::default(),
        }
    }
}

impl Store {
    /// redis's active expire cycle, run about every 100 ms: per database, sample 20 keys with
    /// a TTL and repeat while more than a quarter of them had expired, within a time budget
    /// so that a mass expiry cannot stall the event loop.
    pub fn active_expire(&mut self, now: i64, budget: std::time::Duration) {
        let start = std::time::Instant::now();
        for db in &mut self.dbs {
            loop {
                let (sampled, expired) = db.expire_sample(now, 20, &mut self.rng);
                if sampled == 0 || expired * 4 <= sampled || start.elapsed() > budget {
                    break;
                }
            }
        }
    }
}

/// A small fast PRNG (xorshift64*) for SPOP, SRANDMEMBER, RANDOMKEY and expiry sampling.
/// Not cryptographic, like redis's `random()`.
pub struct Rng(u64);

impl Rng {
    pub fn seeded() -> Rng {
        use std::hash::BuildHasher;
        // A randomly seeded hasher is a convenient source of per-process entropy.
        let seed = Hasher::default().hash_one(std::process::id());
        Rng(seed | 1)
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// Uniform in `0..n` (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 32).wrapping_mul(n as u64) >> 32) as usize
    }
}

#[cfg(test)]
mod tests {
    //! Store tests: value sizes (the keyspace's memory per key depends on them), expiry, and the
    //! sorted set's order and ranks.

    use super::small_bytes::{SmallBytes, INLINE_CAP};
    use super::sorted_set::SortedSet;
    use super::{Db, Rng, Value};

    #[test]
    fn values_are_24_bytes() {
        assert_eq!(std::mem::size_of::<SmallBytes>(), 24);
        assert_eq!(std::mem::size_of::<Value>(), 24);
    }

    #[test]
    fn small_bytes_inline_and_heap() {
        let short = SmallBytes::new(b"key:000000123456");
        assert!(matches!(short, SmallBytes::Inline { .. }));
        assert_eq!(short.as_slice(), b"key:000000123456");
        let edge = SmallBytes::new(&[7u8; INLINE_CAP]);
        assert!(matches!(edge, SmallBytes::Inline { .. }));
        let long = SmallBytes::new(&[7u8; INLINE_CAP + 1]);
        assert!(matches!(long, SmallBytes::Heap(_)));
        assert_eq!(long.len(), INLINE_CAP + 1);
        assert_eq!(SmallBytes::from_i64(-12).as_slice(), b"-12");
    }

    #[test]
    fn lazy_expiry() {
        let mut db = Db::default();
        db.set(b"a", Value::Str(SmallBytes::new(b"1")), false);
        db.set_expire(b"a", 1000);
        assert!(db.get(b"a", 999).is_some());
        assert!(db.get(b"a", 1000).is_none());
        assert_eq!(db.len(), 0);
        assert!(db.expires.is_empty());
    }

    #[test]
    fn set_clears_ttl_unless_kept() {
        let mut db = Db::default();
        db.set(b"a", Value::Str(SmallBytes::new(b"1")), false);
        db.set_expire(b"a", 5000);
        db.set(b"a", Value::Str(SmallBytes::new(b"2")), true);
        assert_eq!(db.expire_at(b"a"), Some(5000));
        db.set(b"a", Value::Str(SmallBytes::new(b"3")), false);
        assert_eq!(db.expire_at(b"a"), None);
    }

    #[test]
    fn active_expiry_samples() {
        let mut db = Db::default();
        for i in 0..100 {
            let k = format!("k{i}");
            db.set(k.as_bytes(), Value::Str(SmallBytes::new(b"v")), false);
            db.set_expire(k.as_bytes(), 10);
        }
        let mut rng = Rng(12345);
        while db.expire_sample(11, 20, &mut rng).1 > 0 {}
        assert_eq!(db.len(), 0);
    }

    #[test]
    fn sorted_set_order_and_ranks() {
        let mut z = SortedSet::default();
        // Enough members to split runs several times.
        for i in 0..3000 {
            let m = format!("m{i:05}");
            z.insert(m.as_bytes(), f64::from(i % 7));
        }
        assert_eq!(z.len(), 3000);
        let all: Vec<(f64, Vec<u8>)> = z
            .iter_from(0)
            .map(|e| (e.score, e.member.to_vec()))
            .collect();
        assert!(all
            .windows(2)
            .all(|w| (w[0].0, &w[0].1) < (w[1].0, &w[1].1)));
        for (rank, (_, m)) in all.iter().enumerate().step_by(97) {
            assert_eq!(z.rank(m), Some(rank));
        }
        let rev: Vec<Vec<u8>> = z.iter_rev_from(0).map(|e| e.member.to_vec()).collect();
        assert_eq!(rev.first(), all.last().map(|x| &x.1));
        assert_eq!(z.iter_rev_from(10).count(), 2990);
        // Moving a member re-sorts it.
        z.insert(b"m00000", 100.0);
        assert_eq!(z.rank(b"m00000"), Some(2999));
        assert_eq!(z.count_below(|e| e.score < 1.0), 428);
        assert!(z.remove(b"m00000"));
        assert!(!z.remove(b"m00000"));
        assert_eq!(
            z.pop_first().map(|e| e.member.to_vec()),
            Some(b"m00007".to_vec())
        );
        assert_eq!(z.len(), 2998);
    }

    #[test]
    fn sorted_set_negative_zero_in_small_sets() {
        let mut z = SortedSet::default();
        z.insert(b"a", -0.0);
        assert!(z.score(b"a").is_some_and(|s| s.is_sign_positive()));
    }
}
