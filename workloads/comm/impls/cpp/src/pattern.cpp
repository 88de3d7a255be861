#include "pattern.hpp"

namespace comm {

namespace {
constexpr std::uint64_t kModulus = 251;
}

PatternTable::PatternTable(std::size_t size) : size_(size), table_(size + kModulus) {
    for (std::size_t k = 0; k < table_.size(); ++k)
        table_[k] = static_cast<std::uint8_t>(k % kModulus);
}

std::span<const std::uint8_t> PatternTable::body(std::uint64_t client,
                                                 std::uint64_t message) const noexcept {
    // Reduced first, so huge client or message numbers cannot overflow.
    const std::uint64_t start = ((client % kModulus) * 7 + (message % kModulus) * 13) % kModulus;
    return {table_.data() + start, size_};
}

} // namespace comm
