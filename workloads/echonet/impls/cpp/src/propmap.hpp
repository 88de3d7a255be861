// Property maps (SPEC §4): the announcement, set and get maps of an object (EPCs 0x9D-0x9F).
// Fewer than 16 properties: a count and the EPCs; from 16 on: a count and a 16-byte bitmap in
// which byte i bit j stands for EPC ((j + 8) << 4) | i.
#pragma once

#include "frame.hpp"

#include <array>
#include <bitset>
#include <cstdint>

namespace echonet {

// A set of EPCs, one bit per code.
using EpcSet = std::bitset<256>;

inline constexpr std::size_t kListFormLimit = 16; // from this many properties on: bitmap form
inline constexpr std::size_t kMaxPropertyMapSize = 17;

// An encoded map: at most 1 + 16 bytes either way.
struct PropertyMap {
    std::array<std::uint8_t, kMaxPropertyMapSize> bytes{};
    std::size_t size = 0;

    Bytes view() const noexcept {
        return {bytes.data(), size};
    }
};

// Exact encoding of the EPCs 0x80-0xFF in `epcs` (the property codes of ECHONET Lite; lower
// codes cannot appear in the bitmap form, so they are left out of both forms): the list form
// in ascending order below 16 properties, the bitmap form from 16.
PropertyMap encode_property_map(const EpcSet &epcs) noexcept;

// The EPCs a map holds. The count byte is not trusted (peers write 16 into bitmap maps of
// more properties, or mask codes away): the bitmap form returns the bits set in however much
// of the bitmap is present, the list form as many of its EPCs as are present.
EpcSet decode_property_map(Bytes map) noexcept;

} // namespace echonet
