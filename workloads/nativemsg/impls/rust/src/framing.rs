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
mod tests;
