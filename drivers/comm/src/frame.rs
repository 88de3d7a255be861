//! The wire format (SPEC §1, RustComm's): a 9-byte header, then the body.
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | message type |
//! | 1 | 8 | body length, unsigned 64-bit big-endian, body only |
//! | 9 | n | body |

pub const HEADER_LEN: usize = 9;

pub const DEFAULT: u8 = 0;
pub const TEXT: u8 = 1;
pub const REPLY: u8 = 2;
pub const END: u8 = 4;
pub const QUIT: u8 = 8;
pub const FLUSH: u8 = 16;
pub const STRING: u8 = 64;
pub const BINARY: u8 = 128;

/// The header of a message of type `kind` with a body of `body_len` bytes.
pub fn encode_header(kind: u8, body_len: u64) -> [u8; HEADER_LEN] {
    let mut header = [0u8; HEADER_LEN];
    header[0] = kind;
    header[1..].copy_from_slice(&body_len.to_be_bytes());
    header
}

/// (type, body length) of a header.
pub fn decode_header(header: &[u8; HEADER_LEN]) -> (u8, u64) {
    let mut len = [0u8; 8];
    len.copy_from_slice(&header[1..]);
    (header[0], u64::from_be_bytes(len))
}

/// "REPLY (2)", "type 99", for error messages.
pub fn describe_type(kind: u8) -> String {
    let name = match kind {
        DEFAULT => "DEFAULT",
        TEXT => "TEXT",
        REPLY => "REPLY",
        END => "END",
        QUIT => "QUIT",
        FLUSH => "FLUSH",
        STRING => "STRING",
        BINARY => "BINARY",
        _ => return format!("type {kind}"),
    };
    format!("{name} ({kind})")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_length_is_big_endian_and_counts_the_body_only() {
        assert_eq!(
            encode_header(REPLY, 4096),
            [2, 0, 0, 0, 0, 0, 0, 0x10, 0x00]
        );
        assert_eq!(encode_header(END, 0), [4, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            encode_header(BINARY, 0x0102_0304_0506_0708),
            [128, 1, 2, 3, 4, 5, 6, 7, 8]
        );
    }

    #[test]
    fn headers_round_trip() {
        for (kind, len) in [(0, 0), (2, 1), (4, 0), (255, u64::MAX), (16, 1 << 40)] {
            assert_eq!(decode_header(&encode_header(kind, len)), (kind, len));
        }
    }

    #[test]
    fn types_are_named() {
        assert_eq!(describe_type(REPLY), "REPLY (2)");
        assert_eq!(describe_type(QUIT), "QUIT (8)");
        assert_eq!(describe_type(99), "type 99");
    }
}
