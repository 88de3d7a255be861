// Helpers shared by the unit tests: golden.json's values, hand-made messages (raw words,
// pointers, the stream framing, packing), and descriptors holding bytes.
#pragma once

#include <capnp/message.h>
#include <capnp/serialize-packed.h>
#include <capnp/serialize.h>
#include <kj/io.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace capbench::test {

using Bytes = std::vector<std::uint8_t>;
using Words = std::vector<std::uint64_t>;

// --- golden.json (SPEC §3.5) --------------------------------------------------------------

inline std::string golden_text() {
    std::ifstream file(CAPNP_GOLDEN_JSON);
    if (!file)
        throw std::runtime_error("cannot open " CAPNP_GOLDEN_JSON);
    std::stringstream text;
    text << file.rdbuf();
    return text.str();
}

// The numbers of the array `key` after `"section": {` ("" for the top level); hex strings
// ("0x40ccd553") and plain numbers alike. Enough JSON for golden.json's flat arrays.
inline std::vector<std::int64_t> golden(std::string_view section, std::string_view key) {
    const std::string text = golden_text();
    std::size_t at = 0;
    if (!section.empty())
        at = text.find("\"" + std::string(section) + "\": {");
    at = text.find("\"" + std::string(key) + "\":", at);
    if (at == std::string::npos)
        throw std::runtime_error("golden.json has no " + std::string(key));
    const std::size_t open = text.find('[', at), close = text.find(']', open);
    std::vector<std::int64_t> values;
    std::stringstream items(text.substr(open + 1, close - open - 1));
    for (std::string item; std::getline(items, item, ',');) {
        std::erase_if(item, [](char c) { return c == '"' || c == ' ' || c == '\n'; });
        values.push_back(std::stoll(item, nullptr, 0));
    }
    return values;
}

// --- messages as bytes ----------------------------------------------------------------------

inline Bytes serialize(capnp::MessageBuilder &message) {
    const kj::Array<capnp::word> words = capnp::messageToFlatArray(message);
    const auto bytes = words.asBytes();
    return {bytes.begin(), bytes.end()};
}

inline Bytes serialize_packed(capnp::MessageBuilder &message) {
    kj::VectorOutputStream out;
    capnp::writePackedMessage(out, message);
    const auto bytes = out.getArray();
    return {bytes.begin(), bytes.end()};
}

// Raw words as little-endian bytes (the lab runs on x86-64).
inline Bytes bytes_of(const Words &words) {
    Bytes out(words.size() * 8);
    std::memcpy(out.data(), words.data(), out.size());
    return out;
}

// Cap'n Proto packing of whole words, by the library's own packer.
inline Bytes pack(const Bytes &unpacked) {
    kj::VectorOutputStream out;
    {
        capnp::_::PackedOutputStream packer(out);
        packer.write(unpacked.data(), unpacked.size());
    }
    const auto bytes = out.getArray();
    return {bytes.begin(), bytes.end()};
}

// A single-segment stream message around `segment`.
inline Words framed(const Words &segment) {
    Words out{std::uint64_t{segment.size()} << 32};
    out.insert(out.end(), segment.begin(), segment.end());
    return out;
}

// Pointers (the encoding spec): offsets are in words from the end of the pointer.
inline std::uint64_t struct_pointer(std::int32_t offset, std::uint16_t data_words,
                                    std::uint16_t pointers) {
    return std::uint64_t{static_cast<std::uint32_t>(offset) << 2} |
           std::uint64_t{data_words} << 32 | std::uint64_t{pointers} << 48;
}
inline std::uint64_t list_pointer(std::int32_t offset, unsigned element_size, std::uint32_t count) {
    return std::uint64_t{static_cast<std::uint32_t>(offset) << 2 | 1} |
           std::uint64_t{count << 3 | element_size} << 32;
}
constexpr unsigned kBytes = 2, kInlineComposite = 7;

// --- descriptors ----------------------------------------------------------------------------

// An anonymous file holding `bytes`, positioned at its start: what a server reads as stdin.
class MemFile {
  public:
    explicit MemFile(const Bytes &bytes = {}) : fd_(::memfd_create("capnp-cpp-test", 0)) {
        if (fd_ < 0)
            throw std::runtime_error("memfd_create failed");
        kj::FdOutputStream(fd_).write(bytes.data(), bytes.size());
        rewind();
    }
    ~MemFile() {
        ::close(fd_);
    }
    MemFile(const MemFile &) = delete;
    MemFile &operator=(const MemFile &) = delete;

    int fd() const noexcept {
        return fd_;
    }
    void rewind() const {
        ::lseek(fd_, 0, SEEK_SET);
    }
    Bytes contents() const {
        rewind();
        Bytes out;
        std::uint8_t chunk[65536];
        for (ssize_t n; (n = ::read(fd_, chunk, sizeof chunk)) > 0;)
            out.insert(out.end(), chunk, chunk + n);
        return out;
    }

  private:
    int fd_;
};

} // namespace capbench::test
