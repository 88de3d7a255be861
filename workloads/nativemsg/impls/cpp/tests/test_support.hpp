// Helpers shared by the unit tests.
#pragma once

#include "framing.hpp"

#include <cerrno>
#include <cstdint>
#include <deque>
#include <string>
#include <string_view>

namespace nativemsg::testing {

// A frame as a browser on a little-endian machine writes it: length in the low byte first. Built
// byte by byte (not with memcpy of a uint32_t) so the tests pin down the wire order.
inline std::string frame(std::string_view body) {
    const auto n = static_cast<std::uint32_t>(body.size());
    std::string out;
    out.push_back(static_cast<char>(n & 0xFF));
    out.push_back(static_cast<char>((n >> 8) & 0xFF));
    out.push_back(static_cast<char>((n >> 16) & 0xFF));
    out.push_back(static_cast<char>((n >> 24) & 0xFF));
    out.append(body);
    return out;
}

inline std::string header(std::uint32_t n) {
    std::string out = frame("");
    out[0] = static_cast<char>(n & 0xFF);
    out[1] = static_cast<char>((n >> 8) & 0xFF);
    out[2] = static_cast<char>((n >> 16) & 0xFF);
    out[3] = static_cast<char>((n >> 24) & 0xFF);
    return out;
}

// Hands out scripted chunks, one per read (a chunk larger than the caller's buffer is split),
// then EOF. A chunk equal to kInterrupt or kFailure makes that read fail with EINTR or EIO.
class ScriptedSource final : public ByteSource {
  public:
    static constexpr std::string_view kInterrupt = "<EINTR>";
    static constexpr std::string_view kFailure = "<EIO>";

    explicit ScriptedSource(std::deque<std::string> chunks) : chunks_(std::move(chunks)) {}

    ssize_t read_some(std::span<char> dest) override {
        ++reads;
        if (chunks_.empty()) {
            ++reads_at_eof;
            return 0;
        }
        std::string &chunk = chunks_.front();
        if (chunk == kInterrupt || chunk == kFailure) {
            errno = chunk == kInterrupt ? EINTR : EIO;
            chunks_.pop_front();
            return -1;
        }
        const std::size_t n = std::min(dest.size(), chunk.size());
        chunk.copy(dest.data(), n);
        chunk.erase(0, n);
        if (chunk.empty()) {
            chunks_.pop_front();
        }
        return static_cast<ssize_t>(n);
    }

    [[nodiscard]] std::size_t chunks_left() const {
        return chunks_.size();
    }

    int reads = 0;
    int reads_at_eof = 0;

  private:
    std::deque<std::string> chunks_;
};

// One chunk per byte: the worst split a pipe can produce.
inline std::deque<std::string> bytewise(std::string_view stream) {
    std::deque<std::string> chunks;
    for (char c : stream) {
        chunks.emplace_back(1, c);
    }
    return chunks;
}

} // namespace nativemsg::testing
