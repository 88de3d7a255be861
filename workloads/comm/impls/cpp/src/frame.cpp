#include "frame.hpp"

namespace comm {

void encode_header(Header h, std::uint8_t *out) noexcept {
    out[0] = h.type;
    for (std::size_t i = 0; i < 8; ++i)
        out[8 - i] = static_cast<std::uint8_t>(h.length >> (8 * i));
}

Header decode_header(const std::uint8_t *in) noexcept {
    std::uint64_t length = 0;
    for (std::size_t i = 1; i < kHeaderSize; ++i)
        length = length << 8 | in[i];
    return {in[0], length};
}

FrameScan scan_frames(std::span<const std::uint8_t> bytes, std::uint64_t max_body) noexcept {
    FrameScan scan;
    while (bytes.size() - scan.whole >= kHeaderSize) {
        scan.next = decode_header(bytes.data() + scan.whole);
        scan.has_next = true;
        if (ends_session(scan.next.type)) {
            scan.stop = FrameScan::Stop::session_end;
            return scan;
        }
        if (scan.next.length > max_body) {
            scan.stop = FrameScan::Stop::too_long;
            return scan;
        }
        // Compared as lengths, never as offsets: a length near 2^64 cannot wrap around.
        if (scan.next.length > bytes.size() - scan.whole - kHeaderSize)
            return scan;
        scan.whole += kHeaderSize + static_cast<std::size_t>(scan.next.length);
        scan.has_next = false;
    }
    return scan;
}

} // namespace comm
