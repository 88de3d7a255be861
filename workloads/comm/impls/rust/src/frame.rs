//! The wire format (RustComm's): a 9-byte header — message type (u8), body length (u64,
//! big-endian, body only) — followed by the body.
//!
//! Both sides use this module: the server's session decodes headers in place in its receive
//! buffer, the connector encodes whole frames into its send buffer. The cap on the announced
//! body length is checked here, on the header alone, so no caller ever allocates for a length
//! it has not accepted.

/// Header size on the wire: one type byte and an 8-byte length.
pub const HEADER_LEN: usize = 9;

/// Message types. Any other value is legal on the wire and echoed like `DEFAULT`.
pub const DEFAULT: u8 = 0;
pub const TEXT: u8 = 1;
pub const REPLY: u8 = 2;
pub const END: u8 = 4;
pub const QUIT: u8 = 8;
pub const FLUSH: u8 = 16;
pub const STRING: u8 = 64;
pub const BINARY: u8 = 128;

/// The server's default cap on a body length: 64 MiB.
pub const DEFAULT_MAX_BODY: u64 = 64 * 1024 * 1024;

/// A decoded header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub kind: u8,
    pub body_len: u64,
}

impl Header {
    /// Decodes the first `HEADER_LEN` bytes of `bytes` (which must hold at least that many).
    #[inline]
    pub fn decode(bytes: &[u8]) -> Header {
        let mut len = [0u8; 8];
        len.copy_from_slice(&bytes[1..HEADER_LEN]);
        Header {
            kind: bytes[0],
            body_len: u64::from_be_bytes(len),
        }
    }

    /// The header's wire form.
    #[inline]
    pub fn encode(self) -> [u8; HEADER_LEN] {
        let mut out = [0u8; HEADER_LEN];
        out[0] = self.kind;
        out[1..].copy_from_slice(&self.body_len.to_be_bytes());
        out
    }

    /// Whole frame size (header + body) if the body length is within `max_body`, else `None`.
    /// `max_body` is at most `isize::MAX - HEADER_LEN` in practice (see `check_max_body`), so
    /// the sum cannot overflow once the cap has been passed.
    #[inline]
    pub fn frame_len(self, max_body: u64) -> Option<usize> {
        if self.body_len > max_body {
            return None;
        }
        usize::try_from(self.body_len)
            .ok()
            .and_then(|n| n.checked_add(HEADER_LEN))
    }

    /// True for the two types that end a session (`QUIT` is treated as `END`).
    #[inline]
    pub fn ends_session(self) -> bool {
        self.kind == END || self.kind == QUIT
    }
}

/// Largest cap a server accepts: a frame of that size must still be addressable.
pub const MAX_MAX_BODY: u64 = (isize::MAX as u64) - HEADER_LEN as u64;

/// Appends a whole frame (header and body) to `out`.
pub fn encode_into(out: &mut Vec<u8>, kind: u8, body: &[u8]) {
    out.extend_from_slice(
        &Header {
            kind,
            body_len: body.len() as u64,
        }
        .encode(),
    );
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_is_type_then_big_endian_length() {
        let h = Header {
            kind: TEXT,
            body_len: 0x0102_0304_0506_0708,
        };
        assert_eq!(h.encode(), [1, 1, 2, 3, 4, 5, 6, 7, 8]);
        assert_eq!(Header::decode(&h.encode()), h);
    }

    #[test]
    fn decode_reads_only_the_first_nine_bytes() {
        let bytes = [END, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
        assert_eq!(
            Header::decode(&bytes),
            Header {
                kind: END,
                body_len: 0
            }
        );
    }

    #[test]
    fn frame_len_applies_the_cap() {
        let h = Header {
            kind: DEFAULT,
            body_len: 100,
        };
        assert_eq!(h.frame_len(100), Some(109));
        assert_eq!(h.frame_len(99), None);
        let huge = Header {
            kind: DEFAULT,
            body_len: u64::MAX,
        };
        assert_eq!(huge.frame_len(u64::MAX), None, "no overflow past usize");
        assert_eq!(huge.frame_len(DEFAULT_MAX_BODY), None);
    }

    #[test]
    fn end_and_quit_end_the_session() {
        for (kind, ends) in [
            (DEFAULT, false),
            (TEXT, false),
            (REPLY, false),
            (END, true),
            (QUIT, true),
            (FLUSH, false),
            (STRING, false),
            (BINARY, false),
            (255, false),
        ] {
            assert_eq!(Header { kind, body_len: 0 }.ends_session(), ends, "{kind}");
        }
    }

    #[test]
    fn encode_into_appends_header_and_body() {
        let mut out = vec![0xaa];
        encode_into(&mut out, BINARY, b"xyz");
        assert_eq!(out, [0xaa, 128, 0, 0, 0, 0, 0, 0, 0, 3, b'x', b'y', b'z']);
    }
}
