//! The lab's test bodies: byte `i` of message `m` of client `c` is `(c*7 + m*13 + i) mod 251`,
//! so a reply that belongs to another message or another client does not compare equal.
//!
//! Every body is a window of one repeating 0..251 ramp, so a `Pattern` builds the ramp once
//! and hands out slices: making a body is one copy, checking a reply is one comparison.

pub struct Pattern {
    size: usize,
    ramp: Vec<u8>,
}

impl Pattern {
    /// Bodies of `size` bytes.
    pub fn new(size: usize) -> Pattern {
        Pattern {
            size,
            ramp: (0..size + 251).map(|j| (j % 251) as u8).collect(),
        }
    }

    /// The body of message `message` of client `client`.
    pub fn body(&self, client: u64, message: u64) -> &[u8] {
        let start = ((client % 251) * 7 + (message % 251) * 13) % 251;
        &self.ramp[start as usize..start as usize + self.size]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_follow_the_formula() {
        let p = Pattern::new(600);
        for (c, m) in [(0u64, 0u64), (1, 0), (0, 1), (15, 999), (255, 100_000)] {
            let b = p.body(c, m);
            assert_eq!(b.len(), 600);
            for (i, &byte) in b.iter().enumerate() {
                assert_eq!(u64::from(byte), (c * 7 + m * 13 + i as u64) % 251);
            }
        }
    }

    #[test]
    fn neighbours_differ() {
        let p = Pattern::new(16);
        assert_ne!(p.body(0, 0), p.body(0, 1));
        assert_ne!(p.body(0, 0), p.body(1, 0));
        assert!(Pattern::new(0).body(3, 4).is_empty());
    }
}
