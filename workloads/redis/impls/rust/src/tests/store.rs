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
