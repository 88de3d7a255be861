//! Native Messaging framing: a 4-byte unsigned length in native byte order, then that many
//! bytes of body. This module knows the caps and the EOF rules and nothing about JSON.

use std::fmt;
use std::io::{self, Read, Write};

/// Size of the length prefix. It is a `u32` on the wire on every platform: writing a `usize`
/// here (8 bytes on x86-64) is the classic bug this lab's conformance suite catches.
pub const HEADER_LEN: usize = 4;

/// Largest request body a browser sends (Chromium refuses to send more than 64 MiB).
pub const MAX_REQUEST: usize = 64 * 1024 * 1024;

/// Largest reply body a browser accepts: Chromium delivers 1,048,576 bytes and drops the
/// connection at 1,048,577.
pub const MAX_REPLY: usize = 1024 * 1024;

/// Largest read the buffer grows to for a stream of small frames. 64 KiB is Linux's default
/// pipe capacity, so one `read` can drain everything the browser has written so far.
const READ_CHUNK: usize = 64 * 1024;

/// Where the buffer starts: one page. `read` needs initialised memory, and zeroing all of
/// `READ_CHUNK` up front costs 16 page faults, a measurable share of a spawn-per-message
/// host's life, for a ping that needs 17 bytes. The buffer doubles towards `READ_CHUNK`
/// whenever a read fills it, so a fast stream gets large reads after a few messages.
const FIRST_CHUNK: usize = 4 * 1024;

/// After a frame larger than this the buffer is shrunk back to `READ_CHUNK`, so that one
/// 64 MiB request does not pin 64 MiB for the rest of a persistent port. It is above the
/// benchmarked echo sizes (up to 512 KiB) so steady traffic never reallocates.
const KEEP_LIMIT: usize = 2 * MAX_REPLY;

/// Why reading a frame failed. Every variant ends the host with exit status 1.
#[derive(Debug)]
pub enum FrameError {
    /// The length prefix exceeds `MAX_REQUEST`; nothing of that size was allocated or read.
    TooLarge(u32),
    /// The input ended inside a length prefix: `got` of `HEADER_LEN` bytes were read.
    EofInHeader { got: usize },
    /// The input ended inside a body: `got` of `want` bytes were read.
    EofInBody { got: usize, want: usize },
    /// The read itself failed.
    Io(io::Error),
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::TooLarge(len) => write!(
                f,
                "frame length {len} exceeds the {MAX_REQUEST}-byte limit for a request"
            ),
            Self::EofInHeader { got } => write!(
                f,
                "input ended inside a frame header ({got} of {HEADER_LEN} bytes)"
            ),
            Self::EofInBody { got, want } => {
                write!(f, "input ended inside a frame body ({got} of {want} bytes)")
            }
            Self::Io(e) => write!(f, "cannot read a frame: {e}"),
        }
    }
}

impl std::error::Error for FrameError {}

/// Reads frames out of a byte stream through one reusable buffer.
///
/// It reads in large chunks (up to 64 KiB, or the whole frame) and parses as many frames as
/// a chunk holds, so a batch of small frames costs one `read`. It only reads when the
/// buffered bytes do not hold a whole frame, so it never blocks on the stream while a
/// complete request sits unanswered.
pub struct FrameReader<R> {
    src: R,
    /// `buf[start..end]` holds bytes read but not yet returned as frames. Invariant:
    /// `start <= end <= buf.len()`, which keeps every slice below in bounds.
    buf: Vec<u8>,
    start: usize,
    end: usize,
}

impl<R: Read> FrameReader<R> {
    pub fn new(src: R) -> Self {
        // Reserved (not touched) up to READ_CHUNK so that growing to it never reallocates.
        let mut buf = Vec::with_capacity(READ_CHUNK);
        buf.resize(FIRST_CHUNK, 0);
        Self {
            src,
            buf,
            start: 0,
            end: 0,
        }
    }

    /// The next frame's body, `Ok(None)` on EOF exactly at a frame boundary.
    ///
    /// The body borrows the reader's buffer: it is valid until the next call.
    pub fn next_frame(&mut self) -> Result<Option<&[u8]>, FrameError> {
        self.release_large_buffer();

        if !self.fill(HEADER_LEN)? {
            return match self.buffered() {
                0 => Ok(None),
                got => Err(FrameError::EofInHeader { got }),
            };
        }
        let mut header = [0u8; HEADER_LEN];
        header.copy_from_slice(&self.buf[self.start..self.start + HEADER_LEN]);
        // Native byte order, as the browsers write it. The cap is checked before anything is
        // allocated or read for this frame.
        let len = u32::from_ne_bytes(header);
        let len = match usize::try_from(len) {
            Ok(len) if len <= MAX_REQUEST => len,
            _ => return Err(FrameError::TooLarge(len)),
        };

        let frame_len = HEADER_LEN + len;
        if !self.fill(frame_len)? {
            return Err(FrameError::EofInBody {
                got: self.buffered() - HEADER_LEN,
                want: len,
            });
        }
        let body = self.start + HEADER_LEN..self.start + frame_len;
        self.start += frame_len;
        Ok(Some(&self.buf[body]))
    }

    fn buffered(&self) -> usize {
        self.end - self.start
    }

    /// Reads until at least `want` bytes are buffered; `Ok(false)` if the input ends first.
    /// `want` is at most `HEADER_LEN + MAX_REQUEST`, so growing the buffer to it is bounded.
    fn fill(&mut self, want: usize) -> Result<bool, FrameError> {
        if self.buffered() >= want {
            return Ok(true);
        }
        if self.start + want > self.buf.len() {
            // Move the partial frame to the front so the rest of it fits behind it.
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
            if want > self.buf.len() {
                self.buf.resize(want, 0);
            }
        }
        while self.buffered() < want {
            // Read as much as fits, not just what this frame needs: the next frames are
            // often already in the pipe.
            match self.src.read(&mut self.buf[self.end..]) {
                Ok(0) => return Ok(false),
                Ok(n) => {
                    self.end += n;
                    if self.end == self.buf.len() && self.buf.len() < READ_CHUNK {
                        // The read filled the buffer: more may be waiting, read more at once.
                        self.buf.resize((2 * self.buf.len()).min(READ_CHUNK), 0);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(FrameError::Io(e)),
            }
        }
        Ok(true)
    }

    /// Gives back the memory of a past large frame once nothing is left to parse in it.
    fn release_large_buffer(&mut self) {
        if self.start == self.end {
            // Empty: restart at the front so the next read gets the whole buffer.
            self.start = 0;
            self.end = 0;
            if self.buf.len() > KEEP_LIMIT {
                self.buf.truncate(READ_CHUNK);
                self.buf.shrink_to_fit();
            }
        }
    }
}

/// Starts a reply frame in `frame`: clears it and reserves the length prefix, which
/// `write_frame` fills in once the body behind it is complete.
pub fn begin_frame(frame: &mut Vec<u8>) {
    frame.clear();
    frame.extend_from_slice(&[0; HEADER_LEN]);
}

/// Fills in the length prefix of a frame built with `begin_frame` and writes the whole
/// frame with one `write_all`.
///
/// One write per reply: a reader never sees a header without its body, and an unbuffered
/// destination (the host passes the raw stdout file) needs no separate flush, so the reply
/// has left the process when this returns.
pub fn write_frame<W: Write>(dst: &mut W, frame: &mut [u8]) -> io::Result<()> {
    let body_len = frame.len().saturating_sub(HEADER_LEN);
    let len = match u32::try_from(body_len) {
        Ok(len) if frame.len() >= HEADER_LEN && body_len <= MAX_REPLY => len,
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("reply body of {body_len} bytes exceeds the {MAX_REPLY}-byte limit"),
            ))
        }
    };
    frame[..HEADER_LEN].copy_from_slice(&len.to_ne_bytes());
    dst.write_all(frame)?;
    dst.flush()
}

#[cfg(test)]
mod tests {
    //! Unit tests of the framing: each would fail on one of the classic Native Messaging bugs
    //! (8-byte or big-endian length, character count, no cap, EOF mid-frame, split reads).

    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use super::*;
    use std::io::Cursor;

    /// One frame: the 4-byte native-order length, then the body.
    fn frame(body: &[u8]) -> Vec<u8> {
        let mut v = (body.len() as u32).to_ne_bytes().to_vec();
        v.extend_from_slice(body);
        v
    }

    /// A reader that returns at most `step` bytes per `read`, like a pipe fed byte by byte.
    struct Trickle {
        data: Vec<u8>,
        pos: usize,
        step: usize,
        reads: usize,
    }

    impl Read for Trickle {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            self.reads += 1;
            let n = self.step.min(out.len()).min(self.data.len() - self.pos);
            out[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
            self.pos += n;
            Ok(n)
        }
    }

    fn trickle(data: Vec<u8>, step: usize) -> Trickle {
        Trickle {
            data,
            pos: 0,
            step,
            reads: 0,
        }
    }

    fn all_frames<R: Read>(r: &mut FrameReader<R>) -> Result<Vec<Vec<u8>>, FrameError> {
        let mut out = Vec::new();
        while let Some(body) = r.next_frame()? {
            out.push(body.to_vec());
        }
        Ok(out)
    }

    #[test]
    fn reads_one_frame_then_clean_eof() {
        let mut r = FrameReader::new(Cursor::new(frame(br#"{"op":"ping"}"#)));
        assert_eq!(r.next_frame().unwrap(), Some(&br#"{"op":"ping"}"#[..]));
        assert_eq!(r.next_frame().unwrap(), None);
    }

    #[test]
    fn eof_before_any_frame_is_clean() {
        let mut r = FrameReader::new(Cursor::new(Vec::new()));
        assert!(matches!(r.next_frame(), Ok(None)));
    }

    #[test]
    fn empty_body_is_a_frame() {
        let mut r = FrameReader::new(Cursor::new(frame(b"")));
        assert_eq!(r.next_frame().unwrap(), Some(&b""[..]));
        assert_eq!(r.next_frame().unwrap(), None);
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn length_is_four_bytes_little_endian() {
        // 5 as little-endian u32, then 5 bytes, then a second frame: an 8-byte or big-endian
        // reader would see a different length and fail.
        let mut data = vec![5, 0, 0, 0];
        data.extend_from_slice(b"hello");
        data.extend_from_slice(&[2, 0, 0, 0]);
        data.extend_from_slice(b"[]");
        let mut r = FrameReader::new(Cursor::new(data));
        assert_eq!(
            all_frames(&mut r).unwrap(),
            vec![b"hello".to_vec(), b"[]".to_vec()]
        );
    }

    #[test]
    #[cfg(target_endian = "little")]
    fn big_endian_length_is_read_as_native() {
        // A big-endian 1 is 16 MiB in native (little-endian) order: the reader must wait for
        // 16 MiB of body, and so reports EOF inside the body.
        let mut data = vec![0, 0, 0, 1];
        data.push(b'x');
        let mut r = FrameReader::new(Cursor::new(data));
        match r.next_frame() {
            Err(FrameError::EofInBody { got: 1, want }) => assert_eq!(want, 1 << 24),
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn length_counts_bytes_not_characters() {
        let body = "{\"data\":\"é€😀\"}".as_bytes();
        assert_eq!(body.len(), 9 + 2 + 3 + 4 + 2);
        let mut data = frame(body);
        data.extend(frame(b"{}"));
        let mut r = FrameReader::new(Cursor::new(data));
        assert_eq!(
            all_frames(&mut r).unwrap(),
            vec![body.to_vec(), b"{}".to_vec()]
        );
    }

    #[test]
    fn many_frames_in_one_read() {
        let mut data = Vec::new();
        for i in 0..1000 {
            data.extend(frame(format!("{{\"seq\":{i}}}").as_bytes()));
        }
        let mut src = trickle(data, usize::MAX);
        let frames = all_frames(&mut FrameReader::new(&mut src)).unwrap();
        assert_eq!(frames.len(), 1000);
        assert_eq!(frames[999], b"{\"seq\":999}");
        // 1000 small frames (14 KB) fit in a handful of chunked reads, not one per frame:
        // the buffer doubles from 4 KiB as each read fills it.
        assert!(src.reads <= 5, "{} reads", src.reads);
    }

    #[test]
    fn buffer_grows_to_the_read_chunk_on_a_fast_stream_only() {
        let one = frame(br#"{"op":"ping"}"#);
        let mut r = FrameReader::new(Cursor::new(one.repeat(3)));
        assert_eq!(all_frames(&mut r).unwrap().len(), 3);
        assert_eq!(r.buf.len(), FIRST_CHUNK);

        let mut r = FrameReader::new(Cursor::new(one.repeat(20_000)));
        assert_eq!(all_frames(&mut r).unwrap().len(), 20_000);
        assert_eq!(r.buf.len(), READ_CHUNK);
    }

    #[test]
    fn split_reads_one_byte_at_a_time() {
        let bodies: Vec<Vec<u8>> = vec![
            b"{\"op\":\"ping\"}".to_vec(),
            vec![b'a'; 70_000], // larger than the initial buffer: forces a grow
            b"".to_vec(),
            b"[1,2,3]".to_vec(),
        ];
        let data: Vec<u8> = bodies.iter().flat_map(|b| frame(b)).collect();
        for step in [1, 2, 3, 5, 4096, 65_536, 100_000] {
            let mut r = FrameReader::new(trickle(data.clone(), step));
            assert_eq!(all_frames(&mut r).unwrap(), bodies, "step {step}");
        }
    }

    #[test]
    fn eof_inside_header_is_an_error() {
        for got in 1..HEADER_LEN {
            let data = frame(b"{}")[..got].to_vec();
            let mut r = FrameReader::new(trickle(data, 1));
            match r.next_frame() {
                Err(FrameError::EofInHeader { got: g }) => assert_eq!(g, got),
                other => panic!("unexpected {other:?}"),
            }
        }
    }

    #[test]
    fn eof_inside_body_is_an_error() {
        let mut data = frame(b"{\"op\":\"ping\"}");
        data.truncate(HEADER_LEN + 5);
        let mut r = FrameReader::new(Cursor::new(data));
        match r.next_frame() {
            Err(FrameError::EofInBody { got: 5, want: 13 }) => {}
            other => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn eof_inside_body_after_a_good_frame() {
        let mut data = frame(b"{}");
        data.extend_from_slice(&100u32.to_ne_bytes());
        let mut r = FrameReader::new(Cursor::new(data));
        assert_eq!(r.next_frame().unwrap(), Some(&b"{}"[..]));
        assert!(matches!(
            r.next_frame(),
            Err(FrameError::EofInBody { got: 0, want: 100 })
        ));
    }

    /// A source that holds just a header claiming `len` bytes and fails the test if the
    /// reader asks for more: an oversized length must be refused without waiting.
    struct HeaderOnly {
        header: Option<[u8; 4]>,
    }

    impl Read for HeaderOnly {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let h = self
                .header
                .take()
                .expect("reader waited for the body of a huge frame");
            out[..4].copy_from_slice(&h);
            Ok(4)
        }
    }

    #[test]
    fn length_over_cap_is_refused_at_once() {
        for len in [MAX_REQUEST as u32 + 1, u32::MAX, 0x8000_0000] {
            let mut r = FrameReader::new(HeaderOnly {
                header: Some(len.to_ne_bytes()),
            });
            match r.next_frame() {
                Err(FrameError::TooLarge(l)) => assert_eq!(l, len),
                other => panic!("unexpected {other:?}"),
            }
            // Nothing was allocated for the claimed length.
            assert_eq!(r.buf.len(), FIRST_CHUNK);
            assert_eq!(r.buf.capacity(), READ_CHUNK);
        }
    }

    #[test]
    fn length_at_cap_is_accepted() {
        let body = vec![b'x'; MAX_REQUEST];
        let mut r = FrameReader::new(Cursor::new(frame(&body)));
        assert_eq!(r.next_frame().unwrap().map(<[u8]>::len), Some(MAX_REQUEST));
        assert_eq!(r.next_frame().unwrap(), None);
        // And the 64 MiB buffer is given back afterwards.
        assert_eq!(r.buf.len(), READ_CHUNK);
    }

    #[test]
    fn read_errors_are_reported_and_interrupts_retried() {
        struct Flaky(u32);
        impl Read for Flaky {
            fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
                self.0 += 1;
                if self.0 < 3 {
                    Err(io::ErrorKind::Interrupted.into())
                } else {
                    Err(io::Error::other("boom"))
                }
            }
        }
        let mut r = FrameReader::new(Flaky(0));
        assert!(matches!(r.next_frame(), Err(FrameError::Io(e)) if e.to_string() == "boom"));
    }

    /// A writer that records each `write` call separately.
    #[derive(Default)]
    struct Calls(Vec<Vec<u8>>);

    impl Write for Calls {
        fn write(&mut self, b: &[u8]) -> io::Result<usize> {
            self.0.push(b.to_vec());
            Ok(b.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn write_frame_is_one_write_with_a_four_byte_length() {
        let mut frame_buf = Vec::new();
        begin_frame(&mut frame_buf);
        frame_buf.extend_from_slice("{\"s\":\"é\"}".as_bytes());
        let mut out = Calls::default();
        write_frame(&mut out, &mut frame_buf).unwrap();
        assert_eq!(out.0.len(), 1);
        let written = &out.0[0];
        assert_eq!(written.len(), 4 + 10);
        assert_eq!(&written[..4], &10u32.to_ne_bytes());
        assert_eq!(&written[4..], "{\"s\":\"é\"}".as_bytes());
    }

    #[test]
    fn write_frame_round_trips_through_the_reader() {
        let mut wire = Vec::new();
        let mut f = Vec::new();
        for body in [&b"{}"[..], b"", &[b'y'; MAX_REPLY]] {
            begin_frame(&mut f);
            f.extend_from_slice(body);
            write_frame(&mut wire, &mut f).unwrap();
        }
        let frames = all_frames(&mut FrameReader::new(Cursor::new(wire))).unwrap();
        assert_eq!(frames.len(), 3);
        assert_eq!(frames[2].len(), MAX_REPLY);
    }

    #[test]
    fn write_frame_refuses_a_reply_over_one_mib() {
        let mut f = Vec::new();
        begin_frame(&mut f);
        f.resize(HEADER_LEN + MAX_REPLY + 1, b'x');
        let mut out = Calls::default();
        assert!(write_frame(&mut out, &mut f).is_err());
        assert!(out.0.is_empty());
    }
}
