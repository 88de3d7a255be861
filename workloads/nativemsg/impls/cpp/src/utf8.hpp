// UTF-8 validation of request bodies.
#pragma once

#include <string_view>

namespace nativemsg {

// True when `text` is well-formed UTF-8 (Unicode 15, table 3-7): no overlong forms, no
// surrogates (U+D800..U+DFFF), nothing above U+10FFFF, no truncated sequences.
bool is_valid_utf8(std::string_view text) noexcept;

} // namespace nativemsg
