//! Checking the replies of one connection as they stream in (SPEC §2–3).
//!
//! The server must answer message m (0-based) of the connection with a `REPLY` whose body is
//! the body that was sent, in order, and after the last reply either one header-only `END` or
//! end of file. [`Replies`] takes the received bytes in whatever chunks `read(2)` returns —
//! a header split over two reads, a 16 MiB body over hundreds — and compares every body byte
//! with the pattern in place (a window of the [`Tape`]), so no reply is buffered or
//! allocated. The first difference fails the trial, naming the client, the message and the
//! byte.

use crate::frame::{decode_header, describe_type, END, HEADER_LEN, REPLY};
use crate::pattern::Tape;
use driver_kit::error::{Failure, Result};

pub struct Replies<'a> {
    tape: &'a Tape,
    client: u64,
    /// Replies the connection must receive before the session end.
    expected: u64,
    /// Replies received and checked in full.
    received: u64,
    state: State,
}

enum State {
    /// Between frames, or inside a header: `have` of its bytes so far.
    Header {
        bytes: [u8; HEADER_LEN],
        have: usize,
    },
    /// Inside the body of reply `received`: `have` of its bytes checked so far.
    Body { have: usize },
    /// The server's END arrived.
    Ended,
}

impl<'a> Replies<'a> {
    pub fn new(tape: &'a Tape, client: u64, expected: u64) -> Self {
        Replies {
            tape,
            client,
            expected,
            received: 0,
            state: State::Header {
                bytes: [0; HEADER_LEN],
                have: 0,
            },
        }
    }

    pub fn client(&self) -> u64 {
        self.client
    }

    /// Replies received and checked so far.
    pub fn received(&self) -> u64 {
        self.received
    }

    /// Whether the server's END arrived.
    pub fn ended(&self) -> bool {
        matches!(self.state, State::Ended)
    }

    /// Checks the next bytes the connection delivered.
    pub fn feed(&mut self, mut data: &[u8]) -> Result<()> {
        while !data.is_empty() {
            match &mut self.state {
                State::Header { bytes, have } => {
                    let take = (HEADER_LEN - *have).min(data.len());
                    bytes[*have..*have + take].copy_from_slice(&data[..take]);
                    *have += take;
                    data = &data[take..];
                    if *have == HEADER_LEN {
                        let header = *bytes;
                        self.state = self.on_header(&header)?;
                    }
                }
                State::Body { have } => {
                    let body = self.tape.body(self.client, self.received);
                    let offset = *have;
                    let take = (body.len() - offset).min(data.len());
                    let want = &body[offset..offset + take];
                    if &data[..take] != want {
                        return Err(self.wrong_body(offset, &data[..take], want));
                    }
                    *have += take;
                    data = &data[take..];
                    if *have == body.len() {
                        self.complete_reply();
                    }
                }
                State::Ended => {
                    return Err(self.fail(format!(
                        "{} more bytes arrived after the server's END (it must close the \
                         connection after END)",
                        data.len()
                    )));
                }
            }
        }
        Ok(())
    }

    /// The connection reached end of file: fine after every reply (with or without an END),
    /// a failure anywhere else.
    pub fn eof(&self) -> Result<()> {
        match self.state {
            State::Ended => Ok(()),
            State::Header { have: 0, .. } if self.received == self.expected => Ok(()),
            State::Header { have: 0, .. } => Err(self.fail(format!(
                "the server closed the connection after {} of {} replies",
                self.received, self.expected
            ))),
            State::Header { have, .. } => Err(self.fail(format!(
                "the server closed the connection inside the header of reply {} ({have} of \
                 {HEADER_LEN} bytes)",
                self.received
            ))),
            State::Body { have } => Err(self.fail(format!(
                "the server closed the connection inside the body of the reply to message {} \
                 ({have} of {} bytes)",
                self.received,
                self.tape.size()
            ))),
        }
    }

    fn on_header(&mut self, header: &[u8; HEADER_LEN]) -> Result<State> {
        let (kind, len) = decode_header(header);
        if self.received == self.expected {
            if kind == END && len == 0 {
                return Ok(State::Ended);
            }
            return Err(self.fail(format!(
                "after all {} replies a header of {} with a {len}-byte body arrived; expected \
                 a header-only END (4) or end of file",
                self.expected,
                describe_type(kind)
            )));
        }
        let at = format!("the reply to message {}", self.received);
        if kind == END {
            return Err(self.fail(format!(
                "END arrived in place of {at}, after {} of {} replies",
                self.received, self.expected
            )));
        }
        if kind != REPLY {
            return Err(self.fail(format!(
                "{at} has {}, expected REPLY (2)",
                describe_type(kind)
            )));
        }
        if len != self.tape.size() as u64 {
            return Err(self.fail(format!(
                "{at} announces a {len}-byte body, expected {}",
                self.tape.size()
            )));
        }
        if len == 0 {
            self.complete_reply();
            return Ok(self.next_header());
        }
        Ok(State::Body { have: 0 })
    }

    fn complete_reply(&mut self) {
        self.received += 1;
        self.state = self.next_header();
    }

    fn next_header(&self) -> State {
        State::Header {
            bytes: [0; HEADER_LEN],
            have: 0,
        }
    }

    /// Describes the first differing byte of a chunk of the body that starts at `offset`.
    fn wrong_body(&self, offset: usize, got: &[u8], want: &[u8]) -> Failure {
        let (i, (g, w)) = got
            .iter()
            .zip(want)
            .enumerate()
            .find(|(_, (g, w))| g != w)
            .unwrap_or((0, (&0, &0)));
        self.fail(format!(
            "the reply to message {} differs from the message at body byte {} of {}: got \
             {g:#04x}, expected {w:#04x}",
            self.received,
            offset + i,
            self.tape.size()
        ))
    }

    fn fail(&self, what: String) -> Failure {
        Failure::new(what).context(format!("client {}", self.client))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::{encode_header, DEFAULT};

    /// The replies a correct server sends to `count` messages of `client`, then `end`.
    fn stream(tape: &Tape, client: u64, count: u64, end: bool) -> Vec<u8> {
        let mut out = Vec::new();
        for m in 0..count {
            out.extend_from_slice(&encode_header(REPLY, tape.size() as u64));
            out.extend_from_slice(tape.body(client, m));
        }
        if end {
            out.extend_from_slice(&encode_header(END, 0));
        }
        out
    }

    fn feed_in_chunks(replies: &mut Replies, data: &[u8], chunk: usize) -> Result<()> {
        data.chunks(chunk).try_for_each(|c| replies.feed(c))
    }

    #[test]
    fn accepts_correct_replies_in_any_chunking() {
        for size in [0, 1, 9, 100, 4096] {
            let tape = Tape::new(size);
            for end in [true, false] {
                let data = stream(&tape, 3, 20, end);
                for chunk in [1, 2, 8, 9, 10, 4105, data.len().max(1)] {
                    let mut replies = Replies::new(&tape, 3, 20);
                    feed_in_chunks(&mut replies, &data, chunk).unwrap();
                    assert_eq!(replies.received(), 20);
                    assert_eq!(replies.ended(), end);
                    replies.eof().unwrap();
                }
            }
        }
    }

    #[test]
    fn counts_replies_as_they_complete() {
        let tape = Tape::new(100);
        let data = stream(&tape, 0, 3, false);
        let mut replies = Replies::new(&tape, 0, 3);
        replies.feed(&data[..109]).unwrap();
        assert_eq!(replies.received(), 1);
        replies.feed(&data[109..150]).unwrap();
        assert_eq!(replies.received(), 1);
        replies.feed(&data[150..]).unwrap();
        assert_eq!(replies.received(), 3);
    }

    fn error(tape: &Tape, client: u64, expected: u64, data: &[u8]) -> String {
        let mut replies = Replies::new(tape, client, expected);
        match replies.feed(data) {
            Err(e) => e.to_string(),
            Ok(()) => replies.eof().unwrap_err().to_string(),
        }
    }

    #[test]
    fn names_the_client_message_and_byte_of_a_wrong_body() {
        let tape = Tape::new(4096);
        let mut data = stream(&tape, 5, 4, true);
        // Message 2, body byte 1000.
        data[2 * (HEADER_LEN + 4096) + HEADER_LEN + 1000] ^= 0xff;
        let e = error(&tape, 5, 4, &data);
        assert!(
            e.starts_with("client 5: the reply to message 2 differs from the message at body byte 1000 of 4096"),
            "{e}"
        );
        // The same, found across chunk boundaries.
        let mut replies = Replies::new(&tape, 5, 4);
        let e = feed_in_chunks(&mut replies, &data, 7)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("message 2 differs") && e.contains("byte 1000"),
            "{e}"
        );
    }

    #[test]
    fn detects_replies_of_another_client_or_out_of_order() {
        let tape = Tape::new(64);
        let theirs = stream(&tape, 1, 2, true);
        assert!(error(&tape, 0, 2, &theirs).contains("message 0 differs"));
        let mut swapped = Vec::new();
        for m in [1, 0] {
            swapped.extend_from_slice(&encode_header(REPLY, 64));
            swapped.extend_from_slice(tape.body(0, m));
        }
        let e = error(&tape, 0, 2, &swapped);
        assert!(
            e.contains("message 0 differs") && e.contains("byte 0 "),
            "{e}"
        );
    }

    #[test]
    fn checks_type_and_length() {
        let tape = Tape::new(10);
        let mut wrong_type = stream(&tape, 0, 1, true);
        wrong_type[0] = DEFAULT;
        assert!(error(&tape, 0, 1, &wrong_type)
            .contains("the reply to message 0 has DEFAULT (0), expected REPLY (2)"));
        let mut long = encode_header(REPLY, 11).to_vec();
        long.extend_from_slice(&[0; 11]);
        assert!(error(&tape, 0, 1, &long).contains("announces a 11-byte body, expected 10"));
        let huge = encode_header(REPLY, u64::MAX);
        assert!(error(&tape, 0, 1, &huge).contains("18446744073709551615-byte body"));
    }

    #[test]
    fn early_end_and_early_close_are_failures() {
        let tape = Tape::new(10);
        let data = stream(&tape, 0, 2, false);
        let mut early_end = data[..HEADER_LEN + 10].to_vec();
        early_end.extend_from_slice(&encode_header(END, 0));
        assert!(error(&tape, 0, 2, &early_end)
            .contains("END arrived in place of the reply to message 1, after 1 of 2"));
        assert!(error(&tape, 0, 2, &data[..HEADER_LEN + 10])
            .contains("closed the connection after 1 of 2 replies"));
        assert!(error(&tape, 0, 2, &data[..HEADER_LEN + 14])
            .contains("inside the header of reply 1 (4 of 9 bytes)"));
        assert!(error(&tape, 0, 2, &data[..HEADER_LEN + 13 + HEADER_LEN])
            .contains("inside the body of the reply to message 1 (3 of 10 bytes)"));
        assert!(error(&tape, 0, 2, &[]).contains("after 0 of 2 replies"));
    }

    #[test]
    fn only_a_header_only_end_or_eof_may_follow_the_last_reply() {
        let tape = Tape::new(10);
        let mut extra = stream(&tape, 0, 1, false);
        extra.extend_from_slice(&encode_header(REPLY, 10));
        assert!(error(&tape, 0, 1, &extra).contains("after all 1 replies a header of REPLY (2)"));
        let mut end_with_body = stream(&tape, 0, 1, false);
        end_with_body.extend_from_slice(&encode_header(END, 3));
        assert!(error(&tape, 0, 1, &end_with_body).contains("END (4) with a 3-byte body"));
        let mut after_end = stream(&tape, 0, 1, true);
        after_end.push(0);
        assert!(
            error(&tape, 0, 1, &after_end).contains("1 more bytes arrived after the server's END")
        );
    }
}
