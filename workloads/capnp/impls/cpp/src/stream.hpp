// Messages leaving and entering the process (SPEC §4-§6): on a pipe, framed by libcapnp's
// stream format (segment table then segments), packed or not; in bytes mode, through a buffer
// allocated once. Every reader is given the limits of SPEC §6.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <capnp/serialize.h>
#include <kj/io.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

namespace capbench {

// SPEC §6, set here rather than trusted to defaults: traversal limit 8 Mi words, nesting limit
// 64. Both equal libcapnp's defaults; the other two limits of §6 are libcapnp's own checks in
// InputStreamMessageReader, made from the segment table before the body is read: fewer than
// 512 segments, and at most traversalLimitInWords words in all (so at most 64 MiB is ever
// allocated for one message).
capnp::ReaderOptions reader_options() noexcept;

// SPEC §6's cap on a message, 8 Mi words (64 MiB), as every reader enforces it: the segments'
// words summed, the segment table not counted (libcapnp's "Message is too large" check).
constexpr std::size_t kMaxMessageWords = 8 * 1024 * 1024;

// The words of a message about to be written: the sum of its segments' sizes, what a reader
// will sum from its segment table. No copy, a loop over the (few) segments.
std::size_t message_words(kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) noexcept;

// Throws a kj::Exception (main's exit status 1) if `segments` make a message beyond the cap:
// a response no reader could read is refused rather than written (SPEC §6), and before a byte
// of it is written, so the peer never sees part of it.
void require_within_cap(kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments);

// Zeroed, word-aligned memory allocated once: the first segment of a MallocMessageBuilder
// (which requires it zeroed and zeroes what it used when destroyed) or a reader's space for a
// message's words. calloc, so untouched pages cost nothing.
class Scratch {
  public:
    static constexpr std::size_t kWords = 128 * 1024; // 1 MiB, as the C++ suite's

    Scratch();
    kj::ArrayPtr<capnp::word> words() noexcept {
        return {words_.get(), kWords};
    }

  private:
    struct Free {
        void operator()(capnp::word *p) const noexcept;
    };
    std::unique_ptr<capnp::word[], Free> words_;
};

// InputStreamMessageReader (and PackedMessageReader) read a message's first segment at once
// but the others lazily, when a pointer first reaches them; in libcapnp 0.9.2 an exception from
// that read (the input ending inside the message) cannot unwind through the pointer-following
// code, and the process aborts. So every reader over a stream has all its segments read by
// this, before any pointer is followed, and a truncated message is an ordinary kj::Exception.
void read_every_segment(capnp::MessageReader &reader);

// Reads messages from a file descriptor (a pipe, stdin), through a 64 KiB buffer: a message
// already in the buffer is copied out of it once; a larger remainder is read straight into the
// message's words.
class MessageIn {
  public:
    // `scratch` (may be empty) holds the message's words when it fits; otherwise the reader
    // allocates them per message, which is libcapnp's default.
    MessageIn(int fd, bool packed, kj::ArrayPtr<capnp::word> scratch);
    // The same over any stream (the fuzz target's bytes in memory).
    MessageIn(kj::InputStream &source, bool packed, kj::ArrayPtr<capnp::word> scratch);

    // True at the end of the input: no byte of a next message has come. Blocks until a byte or
    // the end arrives.
    bool at_end() {
        return buffered_.tryGetReadBuffer().size() == 0;
    }

    // Reads one message and hands its reader to `use`; the reader lives only for that call
    // (its segments may be the scratch space, reused by the next message).
    template <typename Use> void read(Use &&use) {
        if (packed_) {
            capnp::PackedMessageReader reader(buffered_, reader_options(), scratch_);
            read_every_segment(reader);
            use(static_cast<capnp::MessageReader &>(reader));
        } else {
            capnp::InputStreamMessageReader reader(buffered_, reader_options(), scratch_);
            read_every_segment(reader);
            use(static_cast<capnp::MessageReader &>(reader));
        }
    }

    // Bytes read from the descriptor so far. With one message in flight (the client waits for
    // each response) this is exactly the bytes of the messages read.
    std::uint64_t bytes_read() const noexcept {
        return source_.count;
    }

  private:
    struct CountingInputStream final : kj::InputStream {
        explicit CountingInputStream(kj::InputStream &source) noexcept : inner(source) {}
        std::size_t tryRead(void *buffer, std::size_t min_bytes, std::size_t max_bytes) override;
        kj::InputStream &inner;
        std::uint64_t count = 0;
    };

    std::optional<kj::FdInputStream> fd_; // when reading a descriptor
    CountingInputStream source_;
    kj::Array<kj::byte> buffer_;
    kj::BufferedInputStreamWrapper buffered_;
    kj::ArrayPtr<capnp::word> scratch_;
    bool packed_;
};

// Writes messages to a file descriptor, each one complete and flushed before write() returns
// (the peer is waiting for it). Unpacked, libcapnp hands the segment table and the segments
// to the descriptor as one gather list: one writev per message, nothing copied. Packed, the
// library packs into a 64 KiB buffer, flushed once per message. A message beyond the cap is
// refused (require_within_cap) before anything of it is written.
class MessageOut {
  public:
    MessageOut(int fd, bool packed);
    // The same into any stream (the fuzz target's memory).
    MessageOut(kj::OutputStream &sink, bool packed);

    void write(capnp::MessageBuilder &message);

    // Bytes written so far: the messages as written, framing included.
    std::uint64_t bytes_written() const noexcept {
        return sink_.count;
    }

  private:
    // Passes both kinds of write on as they are: an unpacked message stays one gather write.
    struct CountingOutputStream final : kj::OutputStream {
        explicit CountingOutputStream(kj::OutputStream &sink) noexcept : inner(sink) {}
        void write(const void *buffer, std::size_t size) override;
        void write(kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) override;
        kj::OutputStream &inner;
        std::uint64_t count = 0;
    };

    std::optional<kj::FdOutputStream> fd_; // when writing a descriptor
    CountingOutputStream sink_;
    kj::Array<kj::byte> buffer_;
    kj::BufferedOutputStreamWrapper buffered_;
    bool packed_;
};

// bytes mode: one message at a time serialised into a word-aligned buffer allocated once (and
// grown, should a message ever need more), then read back from it: unpacked with a
// FlatArrayMessageReader over the buffer's words (no copy), packed through an ArrayInputStream
// unpacked by the library.
class MessageBytes {
  public:
    explicit MessageBytes(bool packed);

    // Serialises `message`; returns its size in bytes.
    std::size_t write(capnp::MessageBuilder &message);

    // Reads the message last written and hands its reader to `use`. `scratch` as for
    // MessageIn (used only to unpack).
    template <typename Use> void read(kj::ArrayPtr<capnp::word> scratch, Use &&use) {
        if (packed_) {
            kj::ArrayInputStream input(buffer_.asBytes().slice(0, size_));
            capnp::PackedMessageReader reader(input, reader_options(), scratch);
            read_every_segment(reader);
            use(static_cast<capnp::MessageReader &>(reader));
        } else {
            capnp::FlatArrayMessageReader reader(buffer_.slice(0, size_ / sizeof(capnp::word)),
                                                 reader_options());
            use(static_cast<capnp::MessageReader &>(reader));
        }
    }

  private:
    kj::Array<capnp::word> buffer_;
    std::size_t size_ = 0; // bytes of the last message
    bool packed_;
};

} // namespace capbench
