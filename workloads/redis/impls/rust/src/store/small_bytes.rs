//! `SmallBytes`: the byte string every key, string value and collection member is stored as.
//!
//! Most keys and values a Redis server sees are short (redis-benchmark sends 16-byte keys and
//! 3-byte values). Storing each as a `Vec<u8>` would cost 24 bytes of header plus a separate
//! heap block (at least 32 bytes with glibc's malloc) per string. Instead, strings of up to
//! `INLINE_CAP` bytes live inside the 24-byte value itself, like redis's embedded `sds`
//! strings; longer ones pay for one exact-size heap block (`Box<[u8]>`, no spare capacity).
//!
//! The enum is 24 bytes and its discriminant has unused values (a "niche"), so an enum that
//! wraps a `SmallBytes` next to boxed variants (see `store::Value`) is also 24 bytes.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// Longest string stored inline: 24 bytes minus the length byte and the discriminant.
pub const INLINE_CAP: usize = 22;

#[derive(Clone)]
pub enum SmallBytes {
    Inline { len: u8, buf: [u8; INLINE_CAP] },
    Heap(Box<[u8]>),
}

impl SmallBytes {
    pub fn new(bytes: &[u8]) -> SmallBytes {
        if bytes.len() <= INLINE_CAP {
            let mut buf = [0u8; INLINE_CAP];
            buf[..bytes.len()].copy_from_slice(bytes);
            SmallBytes::Inline {
                len: bytes.len() as u8,
                buf,
            }
        } else {
            SmallBytes::Heap(bytes.into())
        }
    }

    /// Takes ownership of a buffer built elsewhere (APPEND, SETRANGE, INCR results): short
    /// ones are copied inline, long ones are shrunk to fit so no capacity is wasted.
    pub fn from_vec(v: Vec<u8>) -> SmallBytes {
        if v.len() <= INLINE_CAP {
            SmallBytes::new(&v)
        } else {
            SmallBytes::Heap(v.into_boxed_slice())
        }
    }

    /// The decimal form of an integer, inline (an i64 has at most 20 characters).
    pub fn from_i64(n: i64) -> SmallBytes {
        let mut b = itoa::Buffer::new();
        SmallBytes::new(b.format(n).as_bytes())
    }

    #[inline]
    pub fn as_slice(&self) -> &[u8] {
        match self {
            SmallBytes::Inline { len, buf } => &buf[..*len as usize],
            SmallBytes::Heap(b) => b,
        }
    }
}

/// Size of the fixed block `inline_block` returns.
pub const INLINE_BLOCK: usize = 16;

impl SmallBytes {
    /// For a string of at most `INLINE_BLOCK` bytes stored inline: its length and the first
    /// `INLINE_BLOCK` bytes of the inline buffer (the string, then padding), so that a writer
    /// can copy a fixed-size block and cut it at the length (see `reply::bulk_array`).
    #[inline]
    pub fn inline_block(&self) -> Option<(usize, &[u8; INLINE_BLOCK])> {
        match self {
            SmallBytes::Inline { len, buf } if usize::from(*len) <= INLINE_BLOCK => {
                let block = buf[..INLINE_BLOCK].try_into().expect("INLINE_CAP >= 16");
                Some((usize::from(*len), block))
            }
            _ => None,
        }
    }
}

impl Deref for SmallBytes {
    type Target = [u8];
    #[inline]
    fn deref(&self) -> &[u8] {
        self.as_slice()
    }
}

impl Borrow<[u8]> for SmallBytes {
    #[inline]
    fn borrow(&self) -> &[u8] {
        self.as_slice()
    }
}

// Hash and Eq must agree with `[u8]`'s so maps keyed by `SmallBytes` can be searched with a
// borrowed `&[u8]` taken straight from the request buffer.
impl Hash for SmallBytes {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state)
    }
}

impl PartialEq for SmallBytes {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for SmallBytes {}

impl PartialOrd for SmallBytes {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SmallBytes {
    /// Byte-wise order, as redis's `sdscmp` (memcmp, then the shorter string first).
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_slice().cmp(other.as_slice())
    }
}

impl fmt::Debug for SmallBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(self.as_slice()))
    }
}

impl From<&[u8]> for SmallBytes {
    fn from(b: &[u8]) -> Self {
        SmallBytes::new(b)
    }
}
