//! Reading one reply frame: a 4-byte native-endian length, then that many body bytes.
//!
//! The reader is generic over the source of bytes so the split-read logic can be tested
//! without a process; in a trial the source is `Host::read_some` (poll with the remaining
//! budget, then read).

use driver_kit::error::{Failure, Result};
use std::io;

/// Host → browser body cap (SPEC §1): Chromium delivers 1,048,576 bytes and drops the
/// connection at 1,048,577.
pub const MAX_REPLY_BODY: usize = 1024 * 1024;
const HEADER: usize = 4;

/// What to do with bytes that arrive after the reply frame in the same read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Trailing {
    /// Persistent mode: the host answers each request with exactly one frame, so anything
    /// more is a protocol error (and would be misread as the next reply).
    Reject,
    /// Spawn mode: the browser takes the first reply and ignores the rest (SPEC §1).
    Ignore,
}

/// A buffer that holds the largest legal reply, allocated (and its pages touched) once,
/// before the timed loop.
pub struct ReplyBuf {
    buf: Vec<u8>,
    body_len: usize,
}

impl ReplyBuf {
    pub fn new() -> Self {
        // vec![0; n] maps lazily-zeroed pages; writing them now keeps page faults out of the
        // timed round trips.
        let mut buf = vec![0u8; HEADER + MAX_REPLY_BODY];
        buf.fill(1);
        ReplyBuf { buf, body_len: 0 }
    }

    /// The body of the last reply read.
    pub fn body(&self) -> &[u8] {
        &self.buf[HEADER..HEADER + self.body_len]
    }

    /// Reads exactly one frame with `read` (which returns 0 at end of file) and returns its
    /// body length. The length is checked against the cap as soon as its 4 bytes are in,
    /// before any body byte is read.
    pub fn read_frame<F>(&mut self, mut read: F, trailing: Trailing) -> Result<usize>
    where
        F: FnMut(&mut [u8]) -> io::Result<usize>,
    {
        self.body_len = 0;
        let mut filled = 0;
        // Until the length is known, read as much as fits: a small reply then takes one
        // read. Once it is known, read only what is left of this frame.
        let mut want = self.buf.len();
        let mut length_known = false;
        while filled < want {
            let n = read(&mut self.buf[filled..want]).map_err(|e| {
                Failure::new(format!(
                    "reading the reply ({} bytes received): {e}",
                    filled
                ))
            })?;
            if n == 0 {
                return Err(Failure::new(eof_message(filled, length_known, want)));
            }
            filled += n;
            if !length_known && filled >= HEADER {
                let mut prefix = [0u8; HEADER];
                prefix.copy_from_slice(&self.buf[..HEADER]);
                let length = u32::from_ne_bytes(prefix) as usize;
                if length > MAX_REPLY_BODY {
                    return Err(Failure::new(format!(
                        "the reply's length prefix says {length} bytes, above the 1 MiB \
                         ({MAX_REPLY_BODY}-byte) cap (prefix bytes {prefix:02x?})"
                    )));
                }
                length_known = true;
                want = HEADER + length;
            }
        }
        if filled > want && trailing == Trailing::Reject {
            return Err(Failure::new(format!(
                "the host wrote {} bytes after the {}-byte reply frame (an 8-byte length, \
                 or an unsolicited write?)",
                filled - want,
                want
            )));
        }
        self.body_len = want - HEADER;
        Ok(self.body_len)
    }
}

fn eof_message(filled: usize, length_known: bool, want: usize) -> String {
    if filled == 0 {
        "the host closed stdout instead of replying".to_string()
    } else if !length_known {
        format!("the host closed stdout after {filled} of the 4 length-prefix bytes")
    } else {
        format!(
            "the host closed stdout after {} of the {} body bytes its length prefix announced",
            filled - HEADER,
            want - HEADER
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out `data` in the given chunk sizes, then end of file.
    fn chunked<'a>(
        data: &'a [u8],
        chunks: &'a [usize],
    ) -> impl FnMut(&mut [u8]) -> io::Result<usize> + 'a {
        let mut at = 0;
        let mut chunk = 0;
        move |buf: &mut [u8]| {
            let size = chunks.get(chunk).copied().unwrap_or(usize::MAX);
            chunk += 1;
            let n = size.min(buf.len()).min(data.len() - at);
            buf[..n].copy_from_slice(&data[at..at + n]);
            at += n;
            Ok(n)
        }
    }

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut f = (body.len() as u32).to_ne_bytes().to_vec();
        f.extend_from_slice(body);
        f
    }

    #[test]
    fn reads_a_whole_frame_in_one_read() {
        let data = frame(br#"{"op":"pong"}"#);
        let mut buf = ReplyBuf::new();
        let n = buf
            .read_frame(chunked(&data, &[]), Trailing::Reject)
            .unwrap();
        assert_eq!(n, 13);
        assert_eq!(buf.body(), br#"{"op":"pong"}"#);
    }

    #[test]
    fn reads_a_frame_split_anywhere() {
        let body = br#"{"op":"echo","data":"split \u00e9 reads"}"#;
        let data = frame(body);
        let mut buf = ReplyBuf::new();
        // One byte at a time, a split inside the prefix, and a split right after it.
        for chunks in [
            vec![1; data.len()],
            vec![3, 2, 100],
            vec![4, 5, 1000],
            vec![2, 2],
        ] {
            let n = buf
                .read_frame(chunked(&data, &chunks), Trailing::Reject)
                .unwrap();
            assert_eq!(n, body.len(), "chunks {chunks:?}");
            assert_eq!(buf.body(), body, "chunks {chunks:?}");
        }
    }

    #[test]
    fn reads_the_largest_legal_reply() {
        let body = vec![b'x'; MAX_REPLY_BODY];
        let data = frame(&body);
        let mut buf = ReplyBuf::new();
        let n = buf
            .read_frame(chunked(&data, &[65536; 17]), Trailing::Reject)
            .unwrap();
        assert_eq!(n, MAX_REPLY_BODY);
    }

    #[test]
    fn refuses_an_oversize_length_before_reading_the_body() {
        let mut data = ((MAX_REPLY_BODY + 1) as u32).to_ne_bytes().to_vec();
        data.extend_from_slice(b"{}");
        let mut reads = 0;
        let mut inner = chunked(&data, &[4, 2]);
        let mut buf = ReplyBuf::new();
        let err = buf
            .read_frame(
                |b: &mut [u8]| {
                    reads += 1;
                    inner(b)
                },
                Trailing::Reject,
            )
            .unwrap_err();
        assert!(err.message().contains("1048577"), "{err}");
        assert_eq!(reads, 1, "no read after the length prefix");
    }

    #[test]
    fn a_big_endian_length_is_refused() {
        let mut data = 13u32.to_be_bytes().to_vec();
        data.extend_from_slice(br#"{"op":"pong"}"#);
        let mut buf = ReplyBuf::new();
        let err = buf
            .read_frame(chunked(&data, &[]), Trailing::Reject)
            .unwrap_err();
        assert!(err.message().contains("cap"), "{err}");
    }

    #[test]
    fn an_8_byte_length_leaves_trailing_bytes() {
        let body = br#"{"op":"pong"}"#;
        let mut data = (body.len() as u64).to_ne_bytes().to_vec();
        data.extend_from_slice(body);
        let mut buf = ReplyBuf::new();
        let err = buf
            .read_frame(chunked(&data, &[]), Trailing::Reject)
            .unwrap_err();
        assert!(err.message().contains("4 bytes after"), "{err}");
        // Where trailing bytes are ignored, the "body" is the wrong 13 bytes: the reply
        // checker rejects it (see check.rs).
        let n = buf
            .read_frame(chunked(&data, &[]), Trailing::Ignore)
            .unwrap();
        assert_eq!(&buf.body()[..n], b"\0\0\0\0{\"op\":\"po");
    }

    #[test]
    fn end_of_file_is_reported_where_it_happened() {
        let data = frame(br#"{"op":"pong"}"#);
        let mut buf = ReplyBuf::new();
        for (cut, expect) in [
            (0, "instead of replying"),
            (3, "3 of the 4 length-prefix"),
            (10, "6 of the 13 body bytes"),
        ] {
            let err = buf
                .read_frame(chunked(&data[..cut], &[]), Trailing::Reject)
                .unwrap_err();
            assert!(err.message().contains(expect), "cut at {cut}: {err}");
        }
    }

    #[test]
    fn read_errors_are_reported() {
        let mut buf = ReplyBuf::new();
        let err = buf
            .read_frame(
                |_: &mut [u8]| Err(io::Error::new(io::ErrorKind::TimedOut, "timed out")),
                Trailing::Reject,
            )
            .unwrap_err();
        assert!(err.message().contains("timed out"), "{err}");
    }
}
