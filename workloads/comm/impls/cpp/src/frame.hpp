// The comm wire format (SPEC §1): a 1-byte message type, the body length as an unsigned 64-bit
// big-endian number, then the body. No magic, version or checksum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace comm {

// Message types. Any other byte is a valid type as well: the server echoes it like kDefault.
inline constexpr std::uint8_t kDefault = 0;
inline constexpr std::uint8_t kText = 1;
inline constexpr std::uint8_t kReply = 2;
inline constexpr std::uint8_t kEnd = 4;
inline constexpr std::uint8_t kQuit = 8;
inline constexpr std::uint8_t kFlush = 16;
inline constexpr std::uint8_t kString = 64;
inline constexpr std::uint8_t kBinary = 128;

inline constexpr std::size_t kHeaderSize = 9;
// The body-length cap both ends apply unless told otherwise (--max-body).
inline constexpr std::uint64_t kDefaultMaxBody = 64ull << 20;

struct Header {
    std::uint8_t type = kDefault;
    std::uint64_t length = 0; // of the body only

    bool operator==(const Header &) const = default;
};

// END and QUIT close the session after everything before them is answered.
constexpr bool ends_session(std::uint8_t type) noexcept {
    return type == kEnd || type == kQuit;
}

// Writes the kHeaderSize bytes of h at out.
void encode_header(Header h, std::uint8_t *out) noexcept;
// Reads a header from the kHeaderSize bytes at in.
Header decode_header(const std::uint8_t *in) noexcept;

// Where a run of received frames stops, as the client's receive side needs it.
struct FrameScan {
    enum class Stop {
        need_more,   // the bytes after `whole` are an incomplete frame (or nothing)
        session_end, // an END or QUIT frame starts at `whole`
        too_long,    // a frame announcing a body above the cap starts at `whole`
    };
    std::size_t whole = 0; // bytes of complete frames (neither END nor QUIT) at the start
    Stop stop = Stop::need_more;
    Header next; // the header at `whole`, when its 9 bytes are there
    bool has_next = false;
};

// Walks the complete frames at the start of `bytes`, stopping at an incomplete frame, a
// session-ending frame, or a length above max_body (checked on the header alone).
FrameScan scan_frames(std::span<const std::uint8_t> bytes, std::uint64_t max_body) noexcept;

} // namespace comm
