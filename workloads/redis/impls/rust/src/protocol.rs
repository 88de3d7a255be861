//! RESP2, the Redis serialization protocol: parsing requests and encoding replies.
//!
//! - `request`: the incremental request parser (multibulk arrays and inline commands), with
//!   redis 7.0's limits and its exact protocol-error messages.
//! - `inline`: splitting an inline command line into arguments, quotes and escapes included.
//! - `reply`: appending replies (`+OK`, `:1`, `$3 foo`, `*2 …`) to a client's output buffer.

pub mod inline;
pub mod reply;
pub mod request;

#[cfg(test)]
mod tests {
    //! Parser and encoder tests: every request form, every protocol error, and requests split
    //! at every byte offset.

    use super::reply::{self, Out};
    use super::request::{Parsed, Parser, ProtocolError, BULK_MAX, INLINE_MAX};

    /// Parses everything in `buf`, returning each command's arguments (or the error).
    fn parse_all(buf: &[u8]) -> (Vec<Vec<Vec<u8>>>, Option<ProtocolError>, usize) {
        let mut p = Parser::default();
        let mut pos = 0;
        let mut cmds = Vec::new();
        loop {
            match p.parse(buf, &mut pos) {
                Ok(Parsed::Command) => {
                    let args = p.args(buf);
                    cmds.push(args.iter_from(0).map(<[u8]>::to_vec).collect());
                }
                Ok(Parsed::Nothing) => {}
                Ok(Parsed::Incomplete) => return (cmds, None, pos),
                Err(e) => return (cmds, Some(e), pos),
            }
        }
    }

    fn strs(v: &[&str]) -> Vec<Vec<u8>> {
        v.iter().map(|s| s.as_bytes().to_vec()).collect()
    }

    fn err(msg: &str) -> Option<ProtocolError> {
        Some(ProtocolError(format!("Protocol error: {msg}").into_bytes()))
    }

    #[test]
    fn multibulk() {
        let (cmds, e, pos) = parse_all(b"*2\r\n$3\r\nGET\r\n$1\r\na\r\n*1\r\n$4\r\nPING\r\n");
        assert_eq!(cmds, vec![strs(&["GET", "a"]), strs(&["PING"])]);
        assert!(e.is_none());
        assert_eq!(pos, 34);
    }

    #[test]
    fn binary_safe_arguments() {
        let (cmds, _, _) = parse_all(b"*2\r\n$4\r\nECHO\r\n$5\r\na\r\n\0b\r\n");
        assert_eq!(cmds, vec![vec![b"ECHO".to_vec(), b"a\r\n\0b".to_vec()]]);
    }

    #[test]
    fn empty_requests_produce_nothing() {
        let (cmds, e, pos) = parse_all(b"*0\r\n*-1\r\n*-7\r\n\r\n  \r\n\n");
        assert!(cmds.is_empty() && e.is_none());
        assert_eq!(pos, 21);
    }

    #[test]
    fn inline_commands() {
        let (cmds, _, _) = parse_all(b"PING\r\nset k \"a b\\x41\\n\" 'it\\'s'\nECHO a\"b c\"\r\n");
        assert_eq!(
            cmds,
            vec![
                strs(&["PING"]),
                vec![
                    b"set".to_vec(),
                    b"k".to_vec(),
                    b"a bA\n".to_vec(),
                    b"it's".to_vec()
                ],
                strs(&["ECHO", "ab c"]),
            ]
        );
    }

    #[test]
    fn protocol_errors() {
        assert_eq!(parse_all(b"*abc\r\n").1, err("invalid multibulk length"));
        assert_eq!(parse_all(b"*+1\r\n").1, err("invalid multibulk length"));
        assert_eq!(
            parse_all(b"*2147483648\r\n").1,
            err("invalid multibulk length")
        );
        assert_eq!(
            parse_all(b"*1\r\n+PING\r\n").1,
            Some(ProtocolError(
                b"Protocol error: expected '$', got '+'".to_vec()
            ))
        );
        assert_eq!(
            parse_all(b"*2\r\n$4\r\nPING\r\n$-1\r\n").1,
            err("invalid bulk length")
        );
        let too_big = format!("*1\r\n${}\r\n", BULK_MAX + 1);
        assert_eq!(parse_all(too_big.as_bytes()).1, err("invalid bulk length"));
        assert_eq!(
            parse_all(b"\"unbalanced\r\n").1,
            err("unbalanced quotes in request")
        );
        assert_eq!(
            parse_all(b"SET \"a\"b c\r\n").1,
            err("unbalanced quotes in request")
        );
    }

    #[test]
    fn unusual_header_spellings_take_the_general_path() {
        // Empty bulks, a byte other than '\n' after '\r' (skipped unchecked, as redis).
        let (cmds, e, _) = parse_all(b"*2\r\n$4\r\nECHO\r\n$0\r\n\r\n*1\rx$4\rxPING\rx");
        assert_eq!(cmds, vec![strs(&["ECHO", ""]), strs(&["PING"])]);
        assert!(e.is_none());
        // Leading zeros and signs are errors, in counts and in lengths.
        assert_eq!(parse_all(b"*01\r\n").1, err("invalid multibulk length"));
        assert_eq!(
            parse_all(b"*1\r\n$04\r\nPING\r\n").1,
            err("invalid bulk length")
        );
        assert_eq!(
            parse_all(b"*1\r\n$+4\r\nPING\r\n").1,
            err("invalid bulk length")
        );
        // A count of 10 digits is read; 11 digits are too many for a C int.
        let (cmds, e, _) = parse_all(b"*1000000000\r\n$4\r\nPING\r\n");
        assert!(cmds.is_empty() && e.is_none());
        assert_eq!(
            parse_all(b"*10000000000\r\n").1,
            err("invalid multibulk length")
        );
    }

    #[test]
    fn limits_without_terminator() {
        let long_inline = vec![b'a'; INLINE_MAX + 1];
        assert_eq!(parse_all(&long_inline).1, err("too big inline request"));
        let fits = vec![b'a'; INLINE_MAX];
        assert!(parse_all(&fits).1.is_none());
        let mut long_count = b"*".to_vec();
        long_count.extend(vec![b'1'; INLINE_MAX + 1]);
        assert_eq!(parse_all(&long_count).1, err("too big mbulk count string"));
        let mut long_bulk = b"*1\r\n$".to_vec();
        long_bulk.extend(vec![b'1'; INLINE_MAX + 1]);
        assert_eq!(parse_all(&long_bulk).1, err("too big bulk count string"));
    }

    #[test]
    fn a_nul_before_the_line_end_means_no_line_yet() {
        let (cmds, e, pos) = parse_all(b"PI\0NG\r\n");
        assert!(cmds.is_empty() && e.is_none());
        assert_eq!(pos, 0);
    }

    #[test]
    fn maximal_bulk_is_not_allocated_up_front() {
        // A 512 MiB announcement with two bytes of payload is just incomplete.
        let (cmds, e, _) = parse_all(format!("*1\r\n${BULK_MAX}\r\nab").as_bytes());
        assert!(cmds.is_empty() && e.is_none());
    }

    /// Feeds `stream` to a parser in two pieces split at `at`, the way a connection does:
    /// keep the unparsed tail, shift the parser, append the rest.
    fn parse_split(stream: &[u8], at: usize) -> Vec<Vec<Vec<u8>>> {
        let mut p = Parser::default();
        let mut cmds = Vec::new();
        let mut buf: Vec<u8> = Vec::new();
        let mut pos = 0;
        for piece in [&stream[..at], &stream[at..]] {
            buf.extend_from_slice(piece);
            loop {
                match p.parse(&buf, &mut pos) {
                    Ok(Parsed::Command) => {
                        cmds.push(p.args(&buf).iter_from(0).map(<[u8]>::to_vec).collect());
                    }
                    Ok(Parsed::Nothing) => {}
                    Ok(Parsed::Incomplete) => break,
                    Err(e) => panic!("unexpected {e:?}"),
                }
            }
            let keep = p.keep_from(pos);
            buf.drain(..keep);
            p.shift(keep);
            pos -= keep;
        }
        cmds
    }

    #[test]
    fn every_split_offset_gives_the_same_commands() {
        let stream: &[u8] =
        b"*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nvalue\r\nPING\r\n*0\r\nECHO \"x y\"\r\n*1\r\n$4\r\nPING\r\n";
        let whole = parse_all(stream).0;
        assert_eq!(whole.len(), 4);
        for at in 0..=stream.len() {
            assert_eq!(parse_split(stream, at), whole, "split at {at}");
        }
    }

    #[test]
    fn reply_encoding() {
        let mut out = Out::default();
        reply::bulk(&mut out, b"hello");
        reply::int(&mut out, -42);
        reply::array(&mut out, 120);
        reply::null(&mut out);
        reply::double(&mut out, 0.1);
        reply::double(&mut out, f64::NEG_INFINITY);
        reply::error(&mut out, "syntax error");
        reply::error(&mut out, reply::WRONGTYPE);
        assert_eq!(
        out.as_slice(),
        &b"$5\r\nhello\r\n:-42\r\n*120\r\n$-1\r\n$19\r\n0.10000000000000001\r\n$4\r\n-inf\r\n\
           -ERR syntax error\r\n-WRONGTYPE Operation against a key holding the wrong kind of value\r\n"[..]
    );
        let mut out3 = Out {
            resp3: true,
            ..Out::default()
        };
        reply::null(&mut out3);
        reply::double(&mut out3, 1.5);
        reply::map(&mut out3, 2);
        assert_eq!(out3.as_slice(), b"_\r\n,1.5\r\n%2\r\n");
    }

    #[test]
    fn bulk_replies_of_every_short_length() {
        // Lengths around the short path's copy sizes (1-3, 4-7, 8-16) and past it.
        let payload: Vec<u8> = (b'a'..=b'z').collect();
        let mut out = Out::default();
        let mut expected = Vec::new();
        for n in 0..=payload.len() {
            reply::bulk(&mut out, &payload[..n]);
            expected.extend_from_slice(format!("${n}\r\n").as_bytes());
            expected.extend_from_slice(&payload[..n]);
            expected.extend_from_slice(b"\r\n");
        }
        assert_eq!(out.as_slice(), expected);
    }

    #[test]
    fn bulk_arrays_match_single_bulks() {
        use crate::store::small_bytes::SmallBytes;
        let long = vec![b'y'; 300];
        let strings: Vec<&[u8]> = vec![
            b"",
            b"abc",
            b"0123456789",
            b"0123456789abcdef",
            b"0123456789abcdefg",
            b"0123456789abcdefghijkl",
            &long,
        ];
        // Enough elements to cross a growth chunk.
        let items: Vec<SmallBytes> = strings
            .iter()
            .cycle()
            .take(1000)
            .map(|s| SmallBytes::new(s))
            .collect();
        let mut one_by_one = Out::default();
        reply::array(&mut one_by_one, items.len());
        for s in &items {
            reply::bulk(&mut one_by_one, s);
        }
        let mut out = Out::default();
        reply::raw(&mut out, b"+before\r\n");
        reply::bulk_array(&mut out, items.iter());
        assert_eq!(&out[..9], b"+before\r\n");
        assert_eq!(&out[9..], one_by_one.as_slice());
    }

    #[test]
    fn long_bulk_replies() {
        let mut out = Out::default();
        let big = vec![b'x'; 1000];
        reply::bulk(&mut out, &big);
        assert!(out.starts_with(b"$1000\r\nxxx"));
        assert_eq!(out.len(), 1000 + 9);
    }
}
