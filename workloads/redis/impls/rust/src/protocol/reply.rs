//! Reply encoding: every function appends one RESP2 value to a client's output buffer.
//!
//! Replies are written straight into the client's `Vec<u8>`; a pipelined batch of replies is
//! then sent with one `write`. Integers are formatted with `itoa` (no allocation), and the
//! handful of constant replies are byte-string constants.

use crate::numeric;
use crate::store::small_bytes::{SmallBytes, INLINE_BLOCK};
use std::ops::{Deref, DerefMut};

/// A client's output buffer and the protocol version its replies use (2 by default, 3
/// after `HELLO 3`). It dereferences to the byte vector.
#[derive(Default)]
pub struct Out {
    pub buf: Vec<u8>,
    pub resp3: bool,
}

impl Deref for Out {
    type Target = Vec<u8>;
    #[inline]
    fn deref(&self) -> &Vec<u8> {
        &self.buf
    }
}

impl DerefMut for Out {
    #[inline]
    fn deref_mut(&mut self) -> &mut Vec<u8> {
        &mut self.buf
    }
}

pub const OK: &[u8] = b"+OK\r\n";
pub const NULL: &[u8] = b"$-1\r\n";
pub const NULL_ARRAY: &[u8] = b"*-1\r\n";
pub const EMPTY_ARRAY: &[u8] = b"*0\r\n";
pub const PONG: &[u8] = b"+PONG\r\n";
pub const ZERO: &[u8] = b":0\r\n";
pub const ONE: &[u8] = b":1\r\n";

pub const WRONGTYPE: &str = "-WRONGTYPE Operation against a key holding the wrong kind of value";
pub const NOT_INTEGER: &str = "value is not an integer or out of range";
pub const NOT_FLOAT: &str = "value is not a valid float";
pub const SYNTAX: &str = "syntax error";
pub const NO_SUCH_KEY: &str = "no such key";
pub const OUT_OF_RANGE: &str = "index out of range";
pub const OVERFLOW: &str = "increment or decrement would overflow";

#[inline]
pub fn raw(out: &mut Out, bytes: &[u8]) {
    out.extend_from_slice(bytes);
}

pub fn simple(out: &mut Out, s: &str) {
    out.push(b'+');
    out.extend_from_slice(s.as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// An error reply. As redis's `addReplyError`, the message gets an `-ERR ` prefix unless it
/// already starts with `-` (an error code such as `-WRONGTYPE`).
pub fn error(out: &mut Out, msg: &str) {
    error_bytes(out, msg.as_bytes());
}

pub fn error_bytes(out: &mut Out, msg: &[u8]) {
    if !msg.starts_with(b"-") {
        out.extend_from_slice(b"-ERR ");
    }
    out.extend_from_slice(msg);
    out.extend_from_slice(b"\r\n");
}

/// An error whose text includes client-supplied bytes, as redis's `addReplyErrorFormat`:
/// CR and LF become spaces so that the reply stays one protocol line.
pub fn error_sanitized(out: &mut Out, msg: &[u8]) {
    out.extend_from_slice(b"-ERR ");
    out.extend(
        msg.iter()
            .map(|&b| if b == b'\r' || b == b'\n' { b' ' } else { b }),
    );
    out.extend_from_slice(b"\r\n");
}

#[inline]
pub fn int(out: &mut Out, n: i64) {
    let mut b = itoa::Buffer::new();
    out.push(b':');
    out.extend_from_slice(b.format(n).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Writes `kind`, `n` in decimal and CRLF into `buf`, returning the length. Lengths below
/// 100 (nearly every bulk string and array header) skip the general formatter.
#[inline]
fn format_header(buf: &mut [u8; 24], kind: u8, n: usize) -> usize {
    buf[0] = kind;
    let digits = if n < 10 {
        buf[1] = b'0' + n as u8;
        1
    } else if n < 100 {
        buf[1] = b'0' + (n / 10) as u8;
        buf[2] = b'0' + (n % 10) as u8;
        2
    } else {
        let mut b = itoa::Buffer::new();
        let d = b.format(n).as_bytes();
        buf[1..1 + d.len()].copy_from_slice(d);
        d.len()
    };
    buf[1 + digits] = b'\r';
    buf[2 + digits] = b'\n';
    3 + digits
}

#[inline]
fn header(out: &mut Out, kind: u8, n: usize) {
    let mut buf = [0u8; 24];
    let len = format_header(&mut buf, kind, n);
    out.extend_from_slice(&buf[..len]);
}

/// Bulk strings up to this size take the short path (`short_bulk`).
const SHORT_BULK: usize = 16;
/// The short path's staging block: `$`, up to two length digits, CRLF, the payload, CRLF.
const SHORT_BLOCK: usize = 32;

/// A bulk string: `$<len>\r\n<bytes>\r\n`. This is the hottest function of the server (LRANGE
/// replies are hundreds of them), so short strings avoid every variable-length copy: a
/// variable-length `extend_from_slice` is a call to `memcpy`, which costs more than the few
/// bytes it moves.
#[inline]
pub fn bulk(out: &mut Out, s: &[u8]) {
    if s.len() <= SHORT_BULK {
        short_bulk(out, s);
    } else {
        long_bulk(out, s);
    }
}

/// A bulk string longer than `SHORT_BULK`: three appends (`memcpy` is worth calling for the
/// payload). Kept out of line so that `bulk`, the short path alone, inlines into loops.
#[inline(never)]
fn long_bulk(out: &mut Out, s: &[u8]) {
    let mut head = [0u8; 24];
    let h = format_header(&mut head, b'$', s.len());
    out.reserve(h + s.len() + 2);
    out.extend_from_slice(&head[..h]);
    out.extend_from_slice(s);
    out.extend_from_slice(b"\r\n");
}

/// Room added at a time by `bulk_array` (small enough for `memset` to zero it with vector
/// stores rather than `rep stosb`).
const ARRAY_CHUNK: usize = 1024;

/// An array of stored strings as bulk replies (LRANGE's reply: hundreds of elements, the
/// hottest loop of the server). Per-element appends would check the capacity and store the
/// vector's length around every element; here the buffer grows (zeroed) a chunk at a time, the
/// elements are written at a local position `at`, and the buffer is cut to `at` at the end.
/// A string of up to 16 bytes stored inline is copied as one fixed 16-byte block (its bytes
/// and padding, the padding then overwritten or cut), as C's LRANGE copies one 8-byte word:
/// no branch on its length, no `memcpy` call.
pub fn bulk_array<'a>(out: &mut Out, items: impl ExactSizeIterator<Item = &'a SmallBytes>) {
    array(out, items.len());
    let mut at = out.len();
    for item in items {
        let Some((n, bytes)) = item.inline_block() else {
            out.truncate(at);
            bulk(out, item);
            at = out.len();
            continue;
        };
        if out.len() - at < SHORT_BLOCK {
            out.resize(at + ARRAY_CHUNK, 0);
        }
        let block: &mut [u8; SHORT_BLOCK] = (&mut out[at..at + SHORT_BLOCK])
            .try_into()
            .expect("room was added");
        let h = write_short_header(block, n);
        block[h + 2..h + 2 + INLINE_BLOCK].copy_from_slice(bytes);
        block[h + 2 + n..h + 4 + n].copy_from_slice(b"\r\n");
        at += h + 4 + n;
    }
    out.truncate(at);
}

/// A bulk string of at most `SHORT_BULK` bytes, written straight into the output buffer with
/// copies whose lengths are known at compile time, so the compiler emits a few register moves
/// instead of `memcpy` calls: the buffer grows by a fixed-size block of zeros, the reply is
/// written over its start, and the buffer is cut back to the reply's end. The payload is
/// copied as C's `copy_bytes` does, with two overlapping fixed-size moves (the first and the
/// last 8 or 4 bytes). (Assembling the block on the stack and appending it would read back
/// bytes just stored one by one, which stalls the CPU's store forwarding on every reply.)
#[inline]
fn short_bulk(out: &mut Out, s: &[u8]) {
    let start = out.len();
    out.extend_from_slice(&[0u8; SHORT_BLOCK]);
    let block: &mut [u8; SHORT_BLOCK] = (&mut out[start..start + SHORT_BLOCK])
        .try_into()
        .expect("the block just appended");
    let len = write_short_bulk(block, s);
    out.truncate(start + len);
}

/// Writes `$<n>\r\n` (`n` below 20) at the start of `block`; returns the length of `$<n>`, so
/// the payload starts two bytes further on.
#[inline(always)]
fn write_short_header(block: &mut [u8; SHORT_BLOCK], n: usize) -> usize {
    block[0] = b'$';
    let h = if n < 10 {
        block[1] = b'0' + n as u8;
        2
    } else {
        block[1] = b'1';
        block[2] = b'0' + (n - 10) as u8;
        3
    };
    block[h..h + 2].copy_from_slice(b"\r\n");
    h
}

/// Writes `$<len>\r\n<s>\r\n` (`s` at most `SHORT_BULK` bytes) at the start of `block`;
/// returns its length.
#[inline]
fn write_short_bulk(block: &mut [u8; SHORT_BLOCK], s: &[u8]) -> usize {
    let n = s.len();
    let h = write_short_header(block, n);
    let body = &mut block[h + 2..];
    if n >= 8 {
        body[..8].copy_from_slice(&s[..8]);
        body[n - 8..n].copy_from_slice(&s[n - 8..]);
    } else if n >= 4 {
        body[..4].copy_from_slice(&s[..4]);
        body[n - 4..n].copy_from_slice(&s[n - 4..]);
    } else if n > 0 {
        // 1 to 3 bytes: first, middle and last (a byte loop would become a `memcpy` call).
        body[0] = s[0];
        body[n / 2] = s[n / 2];
        body[n - 1] = s[n - 1];
    }
    body[n..n + 2].copy_from_slice(b"\r\n");
    h + 2 + n + 2
}

#[inline]
pub fn array(out: &mut Out, n: usize) {
    header(out, b'*', n);
}

pub fn opt_bulk(out: &mut Out, s: Option<&[u8]>) {
    match s {
        Some(s) => bulk(out, s),
        None => null(out),
    }
}

/// The null bulk string (`$-1`), or RESP3's null.
#[inline]
pub fn null(out: &mut Out) {
    let r: &[u8] = if out.resp3 { b"_\r\n" } else { NULL };
    out.extend_from_slice(r);
}

/// The null array (`*-1`), or RESP3's null.
pub fn null_array(out: &mut Out) {
    let r: &[u8] = if out.resp3 { b"_\r\n" } else { NULL_ARRAY };
    out.extend_from_slice(r);
}

/// A map of `n` key/value pairs: RESP3 `%n`, a flat array of 2n in RESP2.
pub fn map(out: &mut Out, n: usize) {
    if out.resp3 {
        header(out, b'%', n);
    } else {
        header(out, b'*', n * 2);
    }
}

/// A set of `n` members: RESP3 `~n`, an array in RESP2.
pub fn set(out: &mut Out, n: usize) {
    let kind = if out.resp3 { b'~' } else { b'*' };
    header(out, kind, n);
}

pub fn int_bulk(out: &mut Out, n: i64) {
    let mut b = itoa::Buffer::new();
    bulk(out, b.format(n).as_bytes());
}

/// A double as redis 7.0's `addReplyDouble`: `inf`/`-inf`, else `%.17g`; a bulk string in
/// RESP2, RESP3's `,` double type otherwise.
pub fn double(out: &mut Out, d: f64) {
    let mut buf = [0u8; 32];
    let n = numeric::format_double(d, &mut buf);
    if out.resp3 {
        out.push(b',');
        out.extend_from_slice(&buf[..n]);
        out.extend_from_slice(b"\r\n");
    } else {
        bulk(out, &buf[..n]);
    }
}
