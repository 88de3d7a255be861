//! The sorted set: members ordered by (score, member), with O(1) score lookup by member.
//!
//! redis keeps a skiplist with span counters (for ranks) next to a dict. Here the order lives
//! in a *chunked sorted list*: a vector of sorted runs of at most `MAX_CHUNK` entries. Finding
//! a position is a binary search over the runs' last entries and then within one run;
//! inserting or removing moves at most one run's worth of 32-byte entries; a rank is the sum of
//! the preceding runs' lengths. That is as fast as a skiplist for the sizes people use, has no
//! per-node allocation, and is simple to get right.

use super::small_bytes::SmallBytes;
use super::Map;
use std::cmp::Ordering;

/// Split a run when it grows past this many entries (2 × the steady-state size).
const MAX_CHUNK: usize = 512;

#[derive(Clone, Debug)]
pub struct Entry {
    pub score: f64,
    pub member: SmallBytes,
}

/// redis's order: by score, then by member bytes. Scores are never NaN (commands reject it),
/// and -0.0 equals 0.0 as in C.
fn compare(score: f64, member: &[u8], e: &Entry) -> Ordering {
    if score < e.score {
        Ordering::Less
    } else if score > e.score {
        Ordering::Greater
    } else {
        member.cmp(e.member.as_slice())
    }
}

/// redis keeps a sorted set of at most 128 members of at most 64 bytes as a listpack, which
/// stores -0 as 0; once it has outgrown that (it never goes back) -0 is kept.
const LISTPACK_ENTRIES: usize = 128;
const LISTPACK_VALUE: usize = 64;

#[derive(Default)]
pub struct SortedSet {
    scores: Map<SmallBytes, f64>,
    chunks: Vec<Vec<Entry>>,
    /// Whether redis would have converted this set from a listpack to a skiplist.
    outgrown_listpack: bool,
}

impl SortedSet {
    pub fn len(&self) -> usize {
        self.scores.len()
    }

    pub fn is_empty(&self) -> bool {
        self.scores.is_empty()
    }

    pub fn score(&self, member: &[u8]) -> Option<f64> {
        self.scores.get(member).copied()
    }

    /// Adds `member` or moves it to `score`. Returns true if it was new.
    pub fn insert(&mut self, member: &[u8], mut score: f64) -> bool {
        if !self.outgrown_listpack
            && (member.len() > LISTPACK_VALUE
                || (self.len() >= LISTPACK_ENTRIES && !self.scores.contains_key(member)))
        {
            self.outgrown_listpack = true;
        }
        if score == 0.0 && !self.outgrown_listpack {
            score = 0.0;
        }
        match self.scores.get_mut(member) {
            Some(old) => {
                let old_score = *old;
                // As redis: 0.0 and -0.0 compare equal, so that is no change.
                if old_score != score {
                    *old = score;
                    self.remove_ordered(old_score, member);
                    self.insert_ordered(score, member);
                }
                false
            }
            None => {
                self.scores.insert(SmallBytes::new(member), score);
                self.insert_ordered(score, member);
                true
            }
        }
    }

    pub fn remove(&mut self, member: &[u8]) -> bool {
        match self.scores.swap_remove(member) {
            Some(score) => {
                self.remove_ordered(score, member);
                true
            }
            None => false,
        }
    }

    /// 0-based rank of `member` in ascending order.
    pub fn rank(&self, member: &[u8]) -> Option<usize> {
        let score = self.score(member)?;
        let (ci, pos, found) = self.locate(score, member);
        debug_assert!(found);
        let before: usize = self.chunks[..ci].iter().map(Vec::len).sum();
        Some(before + pos)
    }

    /// Entries from rank `start` (ascending) onwards.
    pub fn iter_from(&self, start: usize) -> impl DoubleEndedIterator<Item = &Entry> {
        let (ci, off) = self.chunk_of_rank(start);
        let first = self.chunks.get(ci).map_or(&[][..], |c| &c[off..]);
        let rest = self.chunks.get(ci + 1..).unwrap_or(&[]);
        first.iter().chain(rest.iter().flatten())
    }

    /// Entries from the highest downwards, starting at reverse rank `start`.
    pub fn iter_rev_from(&self, start: usize) -> impl Iterator<Item = &Entry> {
        let len = self.len();
        let end = len.saturating_sub(start);
        let (ci, off) = self.chunk_of_rank(end);
        let head = &self.chunks[..ci];
        let last = self.chunks.get(ci).map_or(&[][..], |c| &c[..off]);
        last.iter()
            .rev()
            .chain(head.iter().rev().flat_map(|c| c.iter().rev()))
    }

    /// Number of entries for which `below` holds; `below` must be true for a prefix of the
    /// order and false after it (e.g. "score < min").
    pub fn count_below(&self, below: impl Fn(&Entry) -> bool) -> usize {
        let ci = self
            .chunks
            .partition_point(|c| c.last().is_some_and(&below));
        let before: usize = self.chunks[..ci].iter().map(Vec::len).sum();
        before + self.chunks.get(ci).map_or(0, |c| c.partition_point(&below))
    }

    pub fn pop_first(&mut self) -> Option<Entry> {
        let first = self.chunks.first_mut()?;
        let e = first.remove(0);
        if first.is_empty() {
            self.chunks.remove(0);
        }
        self.scores.swap_remove(e.member.as_slice());
        Some(e)
    }

    pub fn pop_last(&mut self) -> Option<Entry> {
        let last = self.chunks.last_mut()?;
        let e = last.pop()?;
        if last.is_empty() {
            self.chunks.pop();
        }
        self.scores.swap_remove(e.member.as_slice());
        Some(e)
    }

    /// (run index, offset in the run) of ascending rank `rank`; one past the end if beyond.
    fn chunk_of_rank(&self, mut rank: usize) -> (usize, usize) {
        for (i, c) in self.chunks.iter().enumerate() {
            if rank < c.len() {
                return (i, rank);
            }
            rank -= c.len();
        }
        (self.chunks.len(), 0)
    }

    /// Where (score, member) is or would go: (run, position in run, present?).
    fn locate(&self, score: f64, member: &[u8]) -> (usize, usize, bool) {
        if self.chunks.is_empty() {
            return (0, 0, false);
        }
        let ci = self
            .chunks
            .partition_point(|c| c.last().is_some_and(|e| compare(score, member, e).is_gt()))
            .min(self.chunks.len() - 1);
        match self.chunks[ci].binary_search_by(|e| compare(score, member, e).reverse()) {
            Ok(pos) => (ci, pos, true),
            Err(pos) => (ci, pos, false),
        }
    }

    fn insert_ordered(&mut self, score: f64, member: &[u8]) {
        let entry = Entry {
            score,
            member: SmallBytes::new(member),
        };
        if self.chunks.is_empty() {
            self.chunks.push(vec![entry]);
            return;
        }
        let (ci, pos, _) = self.locate(score, member);
        let chunk = &mut self.chunks[ci];
        chunk.insert(pos, entry);
        if chunk.len() > MAX_CHUNK {
            let tail = chunk.split_off(MAX_CHUNK / 2);
            self.chunks.insert(ci + 1, tail);
        }
    }

    fn remove_ordered(&mut self, score: f64, member: &[u8]) {
        let (ci, pos, found) = self.locate(score, member);
        if found {
            self.chunks[ci].remove(pos);
            if self.chunks[ci].is_empty() {
                self.chunks.remove(ci);
            }
        }
    }
}
