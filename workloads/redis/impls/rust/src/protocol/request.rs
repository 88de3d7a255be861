//! The request parser.
//!
//! A client's bytes arrive in arbitrary pieces: one read may hold a hundred pipelined
//! commands, or half of one. `Parser::parse` takes the buffered bytes and a position and
//! either consumes one whole request or reports that more bytes are needed, keeping enough
//! state that it never re-scans what it has already parsed (a 1M-argument command that
//! arrives in 16 KiB reads costs linear time, not quadratic).
//!
//! Arguments are not copied: a parsed multibulk command is a list of ranges into the caller's
//! buffer. Inline commands need unescaping, so their arguments are copied into a scratch
//! buffer owned by the parser.
//!
//! The rules are redis 7.0's `processMultibulkBuffer` / `processInlineBuffer`, including their
//! quirks, because replies are compared byte for byte with redis:
//! - a header line ends at the first `\r`; the byte after it is skipped unchecked, and so are
//!   the two bytes after a bulk's payload;
//! - redis searches lines with `strchr`, which stops at a NUL byte: a NUL before the line end
//!   means "no complete line yet";
//! - `*N` with N ≤ 0 is an empty request (no reply); N must fit in a C `int`;
//! - lengths are parsed strictly (`string2ll`: no `+`, no leading zeros, no blanks).

use crate::numeric::parse_i64;

/// Longest inline command line, and longest `*`/`$` header line, without a terminator.
pub const INLINE_MAX: usize = 64 * 1024;
/// Largest bulk argument (redis's `proto-max-bulk-len`, 512 MiB).
pub const BULK_MAX: i64 = 512 * 1024 * 1024;
/// Largest multibulk count (C `INT_MAX`).
const MULTIBULK_MAX: i64 = i32::MAX as i64;
/// Argument slots reserved ahead of arrival: a `*2000000000` header must not allocate
/// two billion slots before a single argument has been sent.
const ARGS_PREALLOC: usize = 1024;

/// A protocol error: the message to reply with (raw bytes, without `-ERR `), after which the
/// connection is closed.
#[derive(Debug, PartialEq, Eq)]
pub struct ProtocolError(pub Vec<u8>);

#[derive(Debug, PartialEq, Eq)]
pub enum Parsed {
    /// A whole command was consumed; read it with `Parser::args`.
    Command,
    /// Bytes were consumed that form no command (an empty line, `*0`, `*-1`).
    Nothing,
    /// The buffer ends inside a request: call again when more bytes have arrived.
    Incomplete,
}

/// Where the parser is inside a multibulk request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Between requests.
    Idle,
    /// Inside `*N`: `remaining` arguments still to come; `bulk_len` is set once the current
    /// argument's `$len` header has been read.
    Multibulk {
        remaining: usize,
        bulk_len: Option<usize>,
    },
}

/// Where the arguments of the last parsed command live.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    Buffer,
    Scratch,
}

pub struct Parser {
    state: State,
    /// Where the multibulk request being parsed started in the caller's buffer.
    start: usize,
    source: Source,
    /// (start, end) of each argument, in the caller's buffer or in `scratch`.
    ranges: Vec<(usize, usize)>,
    /// Unescaped arguments of an inline command.
    scratch: Vec<u8>,
}

impl Default for Parser {
    fn default() -> Self {
        Parser {
            state: State::Idle,
            start: 0,
            source: Source::Buffer,
            ranges: Vec::new(),
            scratch: Vec::new(),
        }
    }
}

/// Finds a line terminator the way `strchr` does: the first `want` byte, unless a NUL comes
/// first (then there is no line as far as redis is concerned).
#[inline]
fn find_line_end(buf: &[u8], want: u8) -> Option<usize> {
    // Header lines are a few bytes long: a plain scan beats setting up a vector search.
    for (i, &b) in buf.iter().take(16).enumerate() {
        if b == want {
            return Some(i);
        }
        if b == 0 {
            return None;
        }
    }
    if buf.len() <= 16 {
        return None;
    }
    match memchr::memchr2(want, 0, &buf[16..]).map(|i| i + 16) {
        Some(i) if buf[i] == want => Some(i),
        _ => None,
    }
}

impl Parser {
    /// True when no request is partially parsed (the connection may drop its buffer).
    pub fn is_idle(&self) -> bool {
        self.state == State::Idle
    }

    /// The first byte the caller must keep when it stops at `pos`: the start of a partially
    /// parsed multibulk request (whose parsed arguments point into the buffer), else `pos`.
    pub fn keep_from(&self, pos: usize) -> usize {
        if self.is_idle() {
            pos
        } else {
            self.start
        }
    }

    /// The arguments of the command just parsed, given the buffer that was parsed.
    pub fn args<'a>(&'a self, buf: &'a [u8]) -> Args<'a> {
        let data = match self.source {
            Source::Buffer => buf,
            Source::Scratch => &self.scratch,
        };
        Args {
            data,
            ranges: &self.ranges,
        }
    }

    /// The caller moved its unparsed bytes `by` positions towards the start of its buffer:
    /// shift the ranges of a partially parsed command accordingly.
    pub fn shift(&mut self, by: usize) {
        if self.is_idle() {
            return;
        }
        self.start -= by;
        for r in &mut self.ranges {
            r.0 -= by;
            r.1 -= by;
        }
    }

    /// Parses at most one request from `buf[*pos..]`, advancing `*pos` past what it consumed.
    pub fn parse(&mut self, buf: &[u8], pos: &mut usize) -> Result<Parsed, ProtocolError> {
        if self.state == State::Idle {
            if *pos >= buf.len() {
                return Ok(Parsed::Incomplete);
            }
            if buf[*pos] != b'*' {
                return self.parse_inline(buf, pos);
            }
            if self.parse_whole(buf, pos) {
                return Ok(Parsed::Command);
            }
            self.start = *pos;
            let Some((count, next)) = header_line(buf, *pos, "mbulk")? else {
                return Ok(Parsed::Incomplete);
            };
            let count = match parse_i64(count) {
                Some(n) if n <= MULTIBULK_MAX => n,
                _ => return Err(error("invalid multibulk length")),
            };
            *pos = next;
            if count <= 0 {
                return Ok(Parsed::Nothing);
            }
            self.source = Source::Buffer;
            self.ranges.clear();
            self.ranges.reserve((count as usize).min(ARGS_PREALLOC));
            self.state = State::Multibulk {
                remaining: count as usize,
                bulk_len: None,
            };
        }
        self.parse_multibulk(buf, pos)
    }

    /// The common case in one pass: a whole multibulk request already in `buf` at `*pos`,
    /// every header spelled the usual way (see `usual_header`). The general path below keeps
    /// its place in `self.state` so that it can stop anywhere and resume on the next read, and
    /// parses each header twice (find the line end, then the number); this one keeps its place
    /// in a local and reads each header once, about half the work per request at -P 16. On
    /// anything else (a request cut by the end of the read, an odd spelling, an error) it
    /// returns false with `*pos` unchanged, and the general path gives redis's answer.
    fn parse_whole(&mut self, buf: &[u8], pos: &mut usize) -> bool {
        let mut at = *pos;
        let count = match usual_header(buf, &mut at, b'*', MULTIBULK_MAX) {
            Some(n) if n > 0 => n,
            _ => return false,
        };
        self.ranges.clear();
        for _ in 0..count {
            let Some(len) = usual_header(buf, &mut at, b'$', BULK_MAX) else {
                return false;
            };
            // The payload and the two bytes after it (not checked, as redis).
            let len = len as usize;
            if buf.len() - at < len + 2 {
                return false;
            }
            self.ranges.push((at, at + len));
            at += len + 2;
        }
        self.source = Source::Buffer;
        *pos = at;
        true
    }

    fn parse_multibulk(&mut self, buf: &[u8], pos: &mut usize) -> Result<Parsed, ProtocolError> {
        while let State::Multibulk {
            remaining,
            bulk_len,
        } = self.state
        {
            let len = match bulk_len {
                Some(len) => len,
                None => {
                    let Some((digits, next)) = header_line(buf, *pos, "bulk")? else {
                        return Ok(Parsed::Incomplete);
                    };
                    if buf[*pos] != b'$' {
                        return Err(unexpected_type(buf[*pos]));
                    }
                    let len = match parse_i64(digits) {
                        Some(n) if (0..=BULK_MAX).contains(&n) => n as usize,
                        _ => return Err(error("invalid bulk length")),
                    };
                    *pos = next;
                    self.state = State::Multibulk {
                        remaining,
                        bulk_len: Some(len),
                    };
                    len
                }
            };
            // The payload and the two bytes after it (not checked, as redis).
            if buf.len() - *pos < len + 2 {
                return Ok(Parsed::Incomplete);
            }
            self.ranges.push((*pos, *pos + len));
            *pos += len + 2;
            self.state = if remaining == 1 {
                State::Idle
            } else {
                if self.ranges.len() == self.ranges.capacity() {
                    self.ranges.reserve(ARGS_PREALLOC.min(remaining - 1));
                }
                State::Multibulk {
                    remaining: remaining - 1,
                    bulk_len: None,
                }
            };
        }
        Ok(Parsed::Command)
    }

    fn parse_inline(&mut self, buf: &[u8], pos: &mut usize) -> Result<Parsed, ProtocolError> {
        let rest = &buf[*pos..];
        let Some(newline) = find_line_end(rest, b'\n') else {
            if rest.len() > INLINE_MAX {
                return Err(error("too big inline request"));
            }
            return Ok(Parsed::Incomplete);
        };
        let line_end = if newline > 0 && rest[newline - 1] == b'\r' {
            newline - 1
        } else {
            newline
        };
        self.scratch.clear();
        self.ranges.clear();
        if super::inline::split_args(&rest[..line_end], &mut self.scratch, &mut self.ranges)
            .is_err()
        {
            return Err(error("unbalanced quotes in request"));
        }
        *pos += newline + 1;
        self.source = Source::Scratch;
        Ok(if self.ranges.is_empty() {
            Parsed::Nothing
        } else {
            Parsed::Command
        })
    }
}

fn error(what: &str) -> ProtocolError {
    ProtocolError(format!("Protocol error: {what}").into_bytes())
}

/// redis formats this one with `%c` through its printf-style error path, which cuts the
/// message at a NUL byte and turns CR and LF into spaces.
fn unexpected_type(byte: u8) -> ProtocolError {
    let mut msg = b"Protocol error: expected '$', got '".to_vec();
    match byte {
        0 => return ProtocolError(msg),
        b'\r' | b'\n' => msg.push(b' '),
        b => msg.push(b),
    }
    msg.push(b'\'');
    ProtocolError(msg)
}

/// Reads a `*N` / `$N` header line at `start`: returns the bytes after the type byte up to
/// the `\r`, and the position after the terminator; `None` if the line is not complete yet.
fn header_line<'a>(
    buf: &'a [u8],
    start: usize,
    what: &str,
) -> Result<Option<(&'a [u8], usize)>, ProtocolError> {
    let rest = &buf[start..];
    match find_line_end(rest, b'\r') {
        // redis only needs *some* byte after the '\r' (it assumes '\n').
        Some(cr) if cr + 2 <= rest.len() => Ok(Some((&rest[cr.min(1)..cr], start + cr + 2))),
        Some(_) => Ok(None),
        None if rest.len() > INLINE_MAX => Err(error(&format!("too big {what} count string"))),
        None => Ok(None),
    }
}

/// Reads a `*N` / `$N` header at `*at` if it is spelled as every client spells it: `prefix`,
/// 1 to 10 digits without a leading zero (or a lone `0`), `\r`, and the byte after it present
/// (skipped unchecked, as redis); the value at most `max`. Moves `*at` past the line. `None`
/// for anything else, which `header_line` and `parse_i64` then judge by redis's rules. Such a
/// line holds no NUL byte, so it ends where redis's `strchr` would end it.
#[inline(always)]
fn usual_header(buf: &[u8], at: &mut usize, prefix: u8, max: i64) -> Option<i64> {
    let s = &buf[*at..];
    if s.len() < 4 || s[0] != prefix {
        return None;
    }
    // The `\r` must come before `limit`: after at most 10 digits, with a byte after it.
    let limit = (s.len() - 1).min(12);
    let mut i = 1;
    let mut value: i64 = 0;
    while i < limit {
        let digit = s[i].wrapping_sub(b'0');
        if digit > 9 {
            break;
        }
        value = value * 10 + i64::from(digit);
        i += 1;
    }
    let leading_zero = s[1] == b'0' && i > 2;
    if i == 1 || i == limit || s[i] != b'\r' || leading_zero || value > max {
        return None;
    }
    *at += i + 2;
    Some(value)
}

/// The arguments of one command: `args[0]` is the command name.
#[derive(Clone, Copy)]
pub struct Args<'a> {
    data: &'a [u8],
    ranges: &'a [(usize, usize)],
}

impl<'a> Args<'a> {
    #[inline]
    pub fn len(&self) -> usize {
        self.ranges.len()
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    #[inline]
    pub fn get(&self, i: usize) -> &'a [u8] {
        let (s, e) = self.ranges[i];
        &self.data[s..e]
    }

    /// Arguments `from..` as an iterator of byte slices.
    pub fn iter_from(&self, from: usize) -> impl ExactSizeIterator<Item = &'a [u8]> + 'a {
        let data = self.data;
        self.ranges[from..].iter().map(move |&(s, e)| &data[s..e])
    }
}

impl<'a> std::ops::Index<usize> for Args<'a> {
    type Output = [u8];
    #[inline]
    fn index(&self, i: usize) -> &[u8] {
        self.get(i)
    }
}
