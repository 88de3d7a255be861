//! The body pattern (SPEC §3): byte i of message m of client c is `(c * 7 + m * 13 + i) mod
//! 251`, so a reply that belongs to another message or another client is detected. Clients
//! and messages count from 0.
//!
//! Every body is a window of one precomputed tape (`tape[j] = j mod 251`, 250 bytes longer
//! than a body): message m of client c is `tape[start(c, m)..][..size]`. Sending a body is a
//! slice, checking a reply is a `memcmp`; nothing is generated or allocated per message.

/// A client's bodies start 13 bytes further on the cycle for each message (7 for each client),
/// so the body of message m recurs only at message m + 251: a reply lost or out of order shows
/// at its first byte, and one that came from another connection almost always does.
pub const MODULUS: u64 = 251;

/// Byte `i` of message `m` of client `c`, as the SPEC writes it: the reference the tape is
/// tested against.
#[cfg(test)]
pub fn byte(c: u64, m: u64, i: u64) -> u8 {
    // u128: no overflow for any u64 arguments.
    ((u128::from(c) * 7 + u128::from(m) * 13 + u128::from(i)) % u128::from(MODULUS)) as u8
}

/// Where message `m` of client `c` starts on the tape.
pub fn start(c: u64, m: u64) -> usize {
    (((c % MODULUS) * 7 + (m % MODULUS) * 13) % MODULUS) as usize
}

/// All the bodies of one size.
pub struct Tape {
    bytes: Vec<u8>,
    size: usize,
}

impl Tape {
    pub fn new(size: usize) -> Self {
        let len = size + MODULUS as usize - 1;
        Tape {
            bytes: (0..len).map(|j| (j % MODULUS as usize) as u8).collect(),
            size,
        }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    /// The body of message `m` of client `c`.
    pub fn body(&self, c: u64, m: u64) -> &[u8] {
        let from = start(c, m);
        &self.bytes[from..from + self.size]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_follow_the_formula() {
        for size in [0, 1, 250, 251, 252, 4096] {
            let tape = Tape::new(size);
            for (c, m) in [
                (0, 0),
                (1, 0),
                (0, 1),
                (15, 999),
                (255, 49_999),
                (300, 1 << 40),
            ] {
                let body = tape.body(c, m);
                assert_eq!(body.len(), size);
                for (i, &b) in body.iter().enumerate() {
                    assert_eq!(b, byte(c, m, i as u64), "size {size} c {c} m {m} i {i}");
                }
            }
        }
    }

    #[test]
    fn known_values() {
        // c = 1, m = 2: 7 + 26 = 33, then 34, 35, ...
        assert_eq!(&Tape::new(3).body(1, 2), &[33, 34, 35]);
        // Wraps at 251, never reaches 251..=255.
        assert_eq!(byte(0, 0, 250), 250);
        assert_eq!(byte(0, 0, 251), 0);
        assert!(Tape::new(1000).body(3, 4).iter().all(|&b| b < 251));
    }

    #[test]
    fn neighbouring_messages_and_clients_differ() {
        let tape = Tape::new(64);
        assert_ne!(tape.body(0, 0), tape.body(0, 1));
        assert_ne!(tape.body(0, 0), tape.body(1, 0));
        assert_ne!(tape.body(5, 17), tape.body(5, 18));
    }
}
