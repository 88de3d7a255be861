#include "stream.hpp"

#include <kj/debug.h>

#include <cstdlib>
#include <new>
#include <utility>

namespace capbench {

namespace {

constexpr std::size_t kPipeBuffer = 64 * 1024; // a Linux pipe's capacity

} // namespace

capnp::ReaderOptions reader_options() noexcept {
    capnp::ReaderOptions options;
    options.traversalLimitInWords = 8 * 1024 * 1024; // words, i.e. 64 MiB
    options.nestingLimit = 64;
    return options;
}

std::size_t message_words(kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) noexcept {
    std::size_t words = 0;
    for (const auto &segment : segments)
        words += segment.size();
    return words;
}

void require_within_cap(kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments) {
    const std::size_t words = message_words(segments);
    if (words > kMaxMessageWords)
        KJ_FAIL_REQUIRE("a message beyond the 8 Mi-word cap every reader enforces (SPEC §6), "
                        "not written",
                        words);
}

Scratch::Scratch() : words_(static_cast<capnp::word *>(std::calloc(kWords, sizeof(capnp::word)))) {
    if (!words_)
        throw std::bad_alloc();
}

void Scratch::Free::operator()(capnp::word *p) const noexcept {
    std::free(p);
}

std::size_t MessageIn::CountingInputStream::tryRead(void *buffer, std::size_t min_bytes,
                                                    std::size_t max_bytes) {
    const std::size_t n = inner.tryRead(buffer, min_bytes, max_bytes);
    count += n;
    return n;
}

void read_every_segment(capnp::MessageReader &reader) {
    // Segments 1, 2, ... until one does not exist (a null array). A segment of zero words is
    // still an array into the message's space, not null, so it does not stop the loop early.
    // A single-segment message costs one call.
    for (unsigned id = 1; reader.getSegment(id).begin() != nullptr; ++id) {
    }
}

MessageIn::MessageIn(int fd, bool packed, kj::ArrayPtr<capnp::word> scratch)
    : fd_(std::in_place, fd), source_(*fd_), buffer_(kj::heapArray<kj::byte>(kPipeBuffer)),
      buffered_(source_, buffer_), scratch_(scratch), packed_(packed) {}

MessageIn::MessageIn(kj::InputStream &source, bool packed, kj::ArrayPtr<capnp::word> scratch)
    : source_(source), buffer_(kj::heapArray<kj::byte>(kPipeBuffer)), buffered_(source_, buffer_),
      scratch_(scratch), packed_(packed) {}

void MessageOut::CountingOutputStream::write(const void *buffer, std::size_t size) {
    inner.write(buffer, size);
    count += size;
}

void MessageOut::CountingOutputStream::write(
    kj::ArrayPtr<const kj::ArrayPtr<const kj::byte>> pieces) {
    inner.write(pieces);
    for (const auto &piece : pieces)
        count += piece.size();
}

MessageOut::MessageOut(int fd, bool packed)
    : fd_(std::in_place, fd), sink_(*fd_), buffer_(kj::heapArray<kj::byte>(kPipeBuffer)),
      buffered_(sink_, buffer_), packed_(packed) {}

MessageOut::MessageOut(kj::OutputStream &sink, bool packed)
    : sink_(sink), buffer_(kj::heapArray<kj::byte>(kPipeBuffer)), buffered_(sink_, buffer_),
      packed_(packed) {}

void MessageOut::write(capnp::MessageBuilder &message) {
    // The segments once: measured, then handed to the library's writer as they are.
    const kj::ArrayPtr<const kj::ArrayPtr<const capnp::word>> segments =
        message.getSegmentsForOutput();
    require_within_cap(segments);
    if (packed_) {
        capnp::writePackedMessage(buffered_, segments);
        buffered_.flush();
    } else {
        capnp::writeMessage(sink_, segments);
    }
}

MessageBytes::MessageBytes(bool packed)
    : buffer_(kj::heapArray<capnp::word>(Scratch::kWords)), packed_(packed) {}

std::size_t MessageBytes::write(capnp::MessageBuilder &message) {
    // Packing can outgrow its input: a word with no zero byte costs a tag and a count besides
    // its eight bytes, so ten bytes per word is the bound.
    const std::size_t words = capnp::computeSerializedSizeInWords(message);
    const std::size_t needed = packed_ ? (words * 10 + 7) / 8 : words;
    if (buffer_.size() < needed)
        buffer_ = kj::heapArray<capnp::word>(needed);
    kj::ArrayOutputStream output(buffer_.asBytes());
    if (packed_)
        capnp::writePackedMessage(output, message);
    else
        capnp::writeMessage(output, message);
    size_ = output.getArray().size();
    return size_;
}

} // namespace capbench
