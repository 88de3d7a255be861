#include "propmap.hpp"

#include <algorithm>

namespace echonet {

namespace {

constexpr std::size_t kFirstCode = 0x80;
constexpr std::size_t kBitmapSize = 16;

} // namespace

PropertyMap encode_property_map(const EpcSet &epcs) noexcept {
    PropertyMap map;
    std::size_t count = 0;
    for (std::size_t epc = kFirstCode; epc < epcs.size(); ++epc)
        count += epcs[epc] ? 1u : 0u;
    map.bytes[0] = static_cast<std::uint8_t>(count);
    if (count < kListFormLimit) {
        map.size = 1;
        for (std::size_t epc = kFirstCode; epc < epcs.size(); ++epc)
            if (epcs[epc])
                map.bytes[map.size++] = static_cast<std::uint8_t>(epc);
    } else {
        map.size = 1 + kBitmapSize;
        for (std::size_t epc = kFirstCode; epc < epcs.size(); ++epc)
            if (epcs[epc])
                map.bytes[1 + (epc & 0x0F)] |= static_cast<std::uint8_t>(1u << ((epc >> 4) - 8));
    }
    return map;
}

EpcSet decode_property_map(Bytes map) noexcept {
    EpcSet epcs;
    if (map.empty())
        return epcs;
    const std::size_t count = map[0];
    const Bytes rest = map.subspan(1);
    if (count < kListFormLimit) {
        for (std::uint8_t epc : rest.first(std::min(count, rest.size())))
            epcs.set(epc);
    } else {
        const Bytes bitmap = rest.first(std::min(kBitmapSize, rest.size()));
        for (std::size_t i = 0; i < bitmap.size(); ++i)
            for (std::size_t bit = 0; bit < 8; ++bit)
                if (bitmap[i] & (1u << bit))
                    epcs.set(((bit + 8) << 4) | i);
    }
    return epcs;
}

} // namespace echonet
