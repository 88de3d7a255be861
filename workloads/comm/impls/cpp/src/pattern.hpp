// The body pattern of SPEC §3: byte i of message m of client c is (c * 7 + m * 13 + i) mod 251,
// so a reply that belongs to another message or client is caught. Every body of a given size
// is a window of one table, so making or checking a body is a memcpy or a memcmp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace comm {

class PatternTable {
  public:
    explicit PatternTable(std::size_t size);
    std::span<const std::uint8_t> body(std::uint64_t client, std::uint64_t message) const noexcept;

  private:
    std::size_t size_;
    std::vector<std::uint8_t> table_; // size_ + 251 bytes, byte k = k mod 251
};

} // namespace comm
