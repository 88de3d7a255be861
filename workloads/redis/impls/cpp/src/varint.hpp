// Little-endian base-128 lengths: one byte for lengths below 128 (almost every key and small
// value), so a key's length costs one byte instead of a size_t's eight.
#pragma once

#include <cstddef>

namespace redis::varint {

inline std::size_t size(std::size_t v) {
    std::size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        ++n;
    }
    return n;
}

inline unsigned char *put(unsigned char *p, std::size_t v) {
    while (v >= 0x80) {
        *p++ = static_cast<unsigned char>((v & 0x7F) | 0x80);
        v >>= 7;
    }
    *p++ = static_cast<unsigned char>(v);
    return p;
}

inline const unsigned char *get(const unsigned char *p, std::size_t &v) {
    if (*p < 0x80) {
        v = *p;
        return p + 1;
    }
    std::size_t result = 0;
    unsigned shift = 0;
    while (*p >= 0x80) {
        result |= static_cast<std::size_t>(*p++ & 0x7F) << shift;
        shift += 7;
    }
    v = result | (static_cast<std::size_t>(*p++) << shift);
    return p;
}

} // namespace redis::varint
