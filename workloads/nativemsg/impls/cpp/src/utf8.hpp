// UTF-8 validation of request bodies, and the byte scan that covers for RapidJSON's SIMD scanners.
#pragma once

#include <cstddef>
#include <string_view>

namespace nativemsg {

// True when `text` is well-formed UTF-8 (Unicode 15, table 3-7): no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequences.
bool is_valid_utf8(std::string_view text) noexcept;

// What the host must know about each decoded request string, found in one pass over it (a 64 KiB
// echo spends more time in the host's own scans than in RapidJSON's parse when each is a pass).
struct StringCheck {
    bool utf8;             // is_valid_utf8(text)
    bool control_1a_to_1f; // text holds a byte 0x1A..0x1F (see find_control_1a_to_1f)
};
StringCheck check_string(std::string_view text) noexcept;

// Index of the first byte 0x1A..0x1F in `text`, or std::string_view::npos. RapidJSON 1.1.0's SIMD
// string scanners (reader and writer, SSE2 and SSE4.2 builds alike) take "below 0x1A" for "below
// 0x20", so they let these six control characters through unescaped: a raw one inside a request
// string was accepted, and one decoded from \u001A..\u001F was written back raw, making the reply
// invalid JSON (depending on the string's 16-byte alignment). Found by fuzzing.
std::size_t find_control_1a_to_1f(std::string_view text) noexcept;

} // namespace nativemsg
