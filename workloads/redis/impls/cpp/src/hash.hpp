// The keyed hash every table uses. A server that hashes attacker-chosen keys with a fixed
// function can be flooded with collisions (redis uses SipHash with a random key for the same
// reason); this one mixes a per-process random seed into every hash.
//
// The construction is the multiply-fold family (as in wyhash): 64x64->128-bit multiplies whose
// halves are XORed together. A 16-byte key, the common case, costs two multiplies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace redis {

namespace hash_detail {

inline constexpr std::uint64_t kP0 = 0xa0761d6478bd642fULL;
inline constexpr std::uint64_t kP1 = 0xe7037ed1a0b428dbULL;
inline constexpr std::uint64_t kP2 = 0x8ebc6af09c88c6e3ULL;

// A GCC/Clang extension (x86-64 multiplies 64x64->128 in one instruction).
__extension__ typedef unsigned __int128 u128;

inline std::uint64_t fold_mul(std::uint64_t a, std::uint64_t b) {
    const u128 r = static_cast<u128>(a) * b;
    return static_cast<std::uint64_t>(r) ^ static_cast<std::uint64_t>(r >> 64);
}

inline std::uint64_t load64(const char *p) {
    std::uint64_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline std::uint64_t load32(const char *p) {
    std::uint32_t v;
    std::memcpy(&v, p, sizeof v);
    return v;
}

inline std::uint64_t byte(const char *p) {
    return static_cast<unsigned char>(*p);
}

} // namespace hash_detail

// Set once at start-up (main reads it from getrandom); tests may leave the default.
inline std::uint64_t g_hash_seed = 0x2d358dccaa6c78a5ULL;

inline std::uint64_t hash_bytes(std::string_view s, std::uint64_t seed = g_hash_seed) {
    using namespace hash_detail;
    const char *p = s.data();
    std::size_t n = s.size();
    std::uint64_t h = seed ^ kP0;
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    if (n <= 16) {
        if (n >= 8) {
            a = load64(p);
            b = load64(p + n - 8);
        } else if (n >= 4) {
            a = load32(p);
            b = load32(p + n - 4);
        } else if (n > 0) {
            a = (byte(p) << 16) | (byte(p + n / 2) << 8) | byte(p + n - 1);
        }
    } else {
        std::size_t left = n;
        while (left > 16) {
            h = fold_mul(load64(p) ^ kP1, load64(p + 8) ^ h);
            p += 16;
            left -= 16;
        }
        // The last 16 bytes, overlapping what the loop took when the length is not a multiple.
        a = load64(p + left - 16);
        b = load64(p + left - 8);
    }
    return fold_mul(kP1 ^ n, fold_mul(a ^ kP2, b ^ h));
}

// Key equality for the tables' probes: a tag match is almost always the key, and keys are
// mostly 16 bytes or less, which compare with two overlapping loads per side instead of a call
// to the library's memcmp (~30 instructions per lookup).
inline bool same_bytes(std::string_view a, std::string_view b) {
    using namespace hash_detail;
    const std::size_t n = a.size();
    if (n != b.size()) {
        return false;
    }
    const char *p = a.data();
    const char *q = b.data();
    if (n >= 8 && n <= 16) {
        return ((load64(p) ^ load64(q)) | (load64(p + n - 8) ^ load64(q + n - 8))) == 0;
    }
    if (n >= 4 && n < 8) {
        return ((load32(p) ^ load32(q)) | (load32(p + n - 4) ^ load32(q + n - 4))) == 0;
    }
    return n == 0 || std::memcmp(p, q, n) == 0;
}

} // namespace redis
