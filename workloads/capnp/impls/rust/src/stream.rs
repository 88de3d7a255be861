//! Messages on a pipe (SPEC §4, §6): a buffered reader and a buffered writer of Cap'n Proto
//! messages in the standard stream framing (segment table, then segments), packed or not, each
//! counting the bytes it moved, and the reading limits every message from outside obeys.

use crate::Failure;
use capnp::message::{self, ReaderOptions};
use capnp::serialize::{self, OwnedSegments};
use capnp::serialize_packed;
use std::io::{self, BufRead, BufReader, BufWriter, Read, Write};

/// SPEC §6's cap on a message: 8 Mi words (64 MiB).
pub const MAX_MESSAGE_WORDS: usize = 8 * 1024 * 1024;

/// SPEC §6's cap applied to a message about to be written: its words, the sum of its segments'
/// allocated words (what a reader sums from the segment table; the crate's
/// `Builder::size_in_words`, a loop over the segments, nothing copied or allocated), at most
/// `MAX_MESSAGE_WORDS`. A response beyond it could be read by no client, so it is refused
/// (exit status 1) before a byte of it is written.
pub fn within_cap<A: message::Allocator>(message: &message::Builder<A>) -> Result<(), Failure> {
    let words = message.size_in_words();
    if words > MAX_MESSAGE_WORDS {
        return Err(Failure(format!(
            "a message of {words} words, beyond the {MAX_MESSAGE_WORDS}-word cap every reader \
             enforces (SPEC §6): not written"
        )));
    }
    Ok(())
}

/// The limits of SPEC §6, which are libcapnp's defaults, stated here rather than left to the
/// crate's defaults (which agree today): at most 8 Mi words traversed per message, which also
/// caps a message's size, summed from its segment table before anything is allocated (the
/// crate refuses a table whose total exceeds the traversal limit); and 64 levels of nesting,
/// which bounds eval's recursion. The segment count is capped by the crate itself at fewer
/// than 512 (`serialize::SEGMENTS_COUNT_LIMIT`, libcapnp's `segmentCount < 512`).
pub const READER_OPTIONS: ReaderOptions = ReaderOptions {
    traversal_limit_in_words: Some(MAX_MESSAGE_WORDS),
    nesting_limit: 64,
};

/// Size of the read and write buffers of a pipe: Linux's default pipe capacity, so one
/// read or write moves what the pipe can hold.
pub const PIPE_BUFFER: usize = 64 * 1024;

/// The stream's encoding (SPEC §5's COMPRESSION).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compression {
    /// Segment table and segments as they are.
    None,
    /// The same bytes through Cap'n Proto packing (the segment table too), by the crate.
    Packed,
}

impl Compression {
    pub fn as_str(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Packed => "packed",
        }
    }
}

/// A stream that counts the bytes that pass through it: read (consumed) or written.
#[derive(Debug)]
struct Metered<T> {
    inner: T,
    bytes: u64,
}

impl<T> Metered<T> {
    fn new(inner: T) -> Self {
        Metered { inner, bytes: 0 }
    }
}

impl<R: Read> Read for Metered<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    // Kept as the inner reader's own (BufReader reads a large body straight into `buf`).
    fn read_exact(&mut self, buf: &mut [u8]) -> io::Result<()> {
        self.inner.read_exact(buf)?;
        self.bytes += buf.len() as u64;
        Ok(())
    }
}

impl<R: BufRead> BufRead for Metered<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, amount: usize) {
        self.bytes += amount as u64;
        self.inner.consume(amount);
    }
}

impl<W: Write> Write for Metered<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.inner.write_all(buf)?;
        self.bytes += buf.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// Reads whole messages from a byte stream through one buffer.
#[derive(Debug)]
pub struct MessageReader<R> {
    input: Metered<BufReader<R>>,
    compression: Compression,
}

impl<R: Read> MessageReader<R> {
    pub fn new(input: R, compression: Compression) -> Self {
        MessageReader {
            input: Metered::new(BufReader::with_capacity(PIPE_BUFFER, input)),
            compression,
        }
    }

    /// The next message, or `None` when the input ends cleanly between two messages. An end
    /// inside a message, or any violation of the limits, is an error. The body goes into one
    /// allocation of the size its segment table declares (at most the 64 MiB cap), read
    /// straight from the stream; the reader then points into it without another copy.
    pub fn next_message(&mut self) -> Result<Option<message::Reader<OwnedSegments>>, Failure> {
        let message = match self.compression {
            Compression::None => serialize::try_read_message(&mut self.input, READER_OPTIONS)?,
            Compression::Packed => {
                serialize_packed::try_read_message(&mut self.input, READER_OPTIONS)?
            }
        };
        Ok(message)
    }

    /// Bytes consumed so far, as they came (packed when packed), framing included.
    pub fn bytes(&self) -> u64 {
        self.input.bytes
    }
}

/// Writes whole messages to a byte stream through one buffer, flushed once per message.
#[derive(Debug)]
pub struct MessageWriter<W: Write> {
    output: Metered<BufWriter<W>>,
    compression: Compression,
}

impl<W: Write> MessageWriter<W> {
    pub fn new(output: W, compression: Compression) -> Self {
        MessageWriter {
            output: Metered::new(BufWriter::with_capacity(PIPE_BUFFER, output)),
            compression,
        }
    }

    /// Writes one message and flushes it: the peer answers only once it has all of it. A
    /// message beyond the cap is an error, and nothing of it is written (`within_cap`).
    pub fn send<A: message::Allocator>(
        &mut self,
        message: &message::Builder<A>,
    ) -> Result<(), Failure> {
        within_cap(message)?;
        match self.compression {
            Compression::None => serialize::write_message(&mut self.output, message)?,
            Compression::Packed => serialize_packed::write_message(&mut self.output, message)?,
        }
        self.output.flush()?;
        Ok(())
    }

    /// Bytes written so far, as they went (packed when packed), framing included.
    pub fn bytes(&self) -> u64 {
        self.output.bytes
    }
}

/// Where a message starts in a FlatBuffer, in words. Large buffers are page-aligned mmaps, as
/// are the scratch spaces the messages are copied from: without this skew the copy's source
/// and destination sat 8 bytes apart modulo 4 KiB, and memcpy's `rep movsb` crawls on such
/// 4K-aliased copies (measured: memmove 25% of carsales bytes with reuse, 5% without).
const SKEW_WORDS: usize = 64;

/// A message serialised into memory for the `bytes` mode: one word-aligned buffer (the
/// crate reads segments in place only when they are 8-byte aligned), allocated once and
/// grown only if a message ever needs more.
#[derive(Debug)]
pub struct FlatBuffer {
    words: Vec<capnp::Word>,
    len: usize,
}

impl FlatBuffer {
    /// A buffer of `words` 8-byte words to start with.
    pub fn new(words: usize) -> Self {
        FlatBuffer {
            words: capnp::Word::allocate_zeroed_vec(SKEW_WORDS + words),
            len: 0,
        }
    }

    /// Serialises `message` into the buffer, replacing what it held; returns its length in
    /// bytes, framing included.
    pub fn write<A: message::Allocator>(
        &mut self,
        message: &message::Builder<A>,
        compression: Compression,
    ) -> Result<usize, Failure> {
        let words = serialize::compute_serialized_size_in_words(message);
        // Packing turns a word into at most 10 bytes (tag, 8 bytes, run count).
        let room = match compression {
            Compression::None => words,
            Compression::Packed => words + words / 4 + 1,
        };
        if self.words.len() < SKEW_WORDS + room {
            self.words = capnp::Word::allocate_zeroed_vec(SKEW_WORDS + room);
        }
        let buffer = capnp::Word::words_to_bytes_mut(&mut self.words[SKEW_WORDS..]);
        let capacity = buffer.len();
        let mut rest: &mut [u8] = buffer;
        match compression {
            Compression::None => serialize::write_message(&mut rest, message)?,
            Compression::Packed => serialize_packed::write_message(&mut rest, message)?,
        }
        self.len = capacity - rest.len();
        Ok(self.len)
    }

    /// The message last written, as bytes (8-byte aligned).
    pub fn bytes(&self) -> &[u8] {
        let all = capnp::Word::words_to_bytes(self.words.get(SKEW_WORDS..).unwrap_or_default());
        all.get(..self.len).unwrap_or(all)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capnp::message::Builder;

    fn message(words: u32) -> Builder<message::HeapAllocator> {
        let mut m = Builder::new_default();
        let mut root: capnp::any_pointer::Builder<'_> = m.init_root();
        root.reborrow()
            .initn_as::<capnp::primitive_list::Builder<'_, u64>>(words)
            .set(0, 0x0102_0304_0506_0708);
        m
    }

    #[test]
    fn limits_are_libcapnps_defaults() {
        assert_eq!(
            READER_OPTIONS.traversal_limit_in_words,
            Some(8 * 1024 * 1024)
        );
        assert_eq!(READER_OPTIONS.nesting_limit, 64);
        assert_eq!(MAX_MESSAGE_WORDS * 8, 64 << 20);
    }

    #[test]
    fn messages_round_trip_through_a_stream_counting_bytes() {
        for compression in [Compression::None, Compression::Packed] {
            let mut out = MessageWriter::new(Vec::new(), compression);
            out.send(&message(100)).unwrap();
            out.send(&message(3)).unwrap();
            let written = out.bytes();
            let bytes = out.output.inner.into_inner().unwrap();
            assert_eq!(written, bytes.len() as u64);

            let mut input = MessageReader::new(bytes.as_slice(), compression);
            for words in [100, 3] {
                let m = input.next_message().unwrap().unwrap();
                let list: capnp::primitive_list::Reader<'_, u64> = m.get_root().unwrap();
                assert_eq!((list.len(), list.get(0)), (words, 0x0102_0304_0506_0708));
            }
            assert!(input.next_message().unwrap().is_none(), "clean end");
            assert_eq!(input.bytes(), written);
        }
    }

    /// A message of `words` words in one segment: the root pointer and a list of `words - 1`.
    fn message_of(words: u32) -> Builder<message::HeapAllocator> {
        let mut m = Builder::new(message::HeapAllocator::new().first_segment_words(words));
        let root: capnp::any_pointer::Builder<'_> = m.init_root();
        root.initn_as::<capnp::primitive_list::Builder<'_, u64>>(words - 1);
        assert_eq!(m.get_segments_for_output().len(), 1);
        m
    }

    #[test]
    fn message_words_are_the_segments_summed() {
        let m = message(2000);
        let segments = m.get_segments_for_output();
        assert!(segments.len() > 1, "the list goes in a second segment");
        let table = segments.len() / 2 + 1;
        assert_eq!(
            m.size_in_words(),
            serialize::compute_serialized_size_in_words(&m) - table
        );
    }

    #[test]
    fn a_message_beyond_the_cap_is_refused_with_nothing_written() {
        let cap = MAX_MESSAGE_WORDS as u32;
        let over = message_of(cap + 1);
        assert_eq!(over.size_in_words(), MAX_MESSAGE_WORDS + 1);
        for compression in [Compression::None, Compression::Packed] {
            let mut out = MessageWriter::new(Vec::new(), compression);
            let e = out.send(&over).unwrap_err();
            assert!(e.0.contains("beyond the 8388608-word cap"), "{e}");
            assert_eq!(out.bytes(), 0);
            assert!(out.output.inner.into_inner().unwrap().is_empty());
        }
        drop(over);
        // At the cap exactly it is written, and a reader accepts its size.
        let mut out = MessageWriter::new(Vec::new(), Compression::None);
        out.send(&message_of(cap)).unwrap();
        assert_eq!(out.bytes(), 8 * (MAX_MESSAGE_WORDS as u64 + 1));
        let bytes = out.output.inner.into_inner().unwrap();
        let mut input = MessageReader::new(bytes.as_slice(), Compression::None);
        assert!(input.next_message().unwrap().is_some());
    }

    #[test]
    fn an_end_inside_a_message_is_an_error() {
        for compression in [Compression::None, Compression::Packed] {
            let mut out = MessageWriter::new(Vec::new(), compression);
            out.send(&message(100)).unwrap();
            let bytes = out.output.inner.into_inner().unwrap();
            let mut input = MessageReader::new(&bytes[..bytes.len() - 1], compression);
            assert!(input.next_message().is_err(), "{compression:?}");
        }
    }

    #[test]
    fn flat_buffer_holds_an_aligned_message_and_grows() {
        let mut flat = FlatBuffer::new(4);
        for compression in [Compression::None, Compression::Packed] {
            let len = flat.write(&message(1000), compression).unwrap();
            let bytes = flat.bytes();
            assert_eq!(bytes.len(), len);
            assert_eq!(bytes.as_ptr() as usize % 8, 0);
            let mut rest = bytes;
            let words = match compression {
                Compression::None => {
                    serialize::read_message_from_flat_slice(&mut rest, READER_OPTIONS)
                        .unwrap()
                        .size_in_words()
                }
                Compression::Packed => serialize_packed::read_message(&mut rest, READER_OPTIONS)
                    .unwrap()
                    .size_in_words(),
            };
            assert!(words > 1000 && rest.is_empty(), "{compression:?}");
        }
    }
}
