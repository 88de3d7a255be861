// Helpers shared by the unit tests: hex literals and byte comparisons.
#pragma once

#include "frame.hpp"

#include <cctype>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace echonet::test {

// "10 81 00 02" -> bytes; spaces and newlines are ignored.
inline std::vector<std::uint8_t> bytes(std::string_view hex) {
    std::vector<std::uint8_t> out;
    int high = -1;
    for (const char c : hex) {
        if (std::isspace(static_cast<unsigned char>(c)))
            continue;
        const int v = std::isdigit(static_cast<unsigned char>(c))
                          ? c - '0'
                          : std::tolower(static_cast<unsigned char>(c)) - 'a' + 10;
        if (high < 0) {
            high = v;
        } else {
            out.push_back(static_cast<std::uint8_t>(high << 4 | v));
            high = -1;
        }
    }
    return out;
}

inline std::vector<std::uint8_t> vec(Bytes b) {
    return {b.begin(), b.end()};
}

// The 36-byte Get of SPEC §6 and its 94-byte reply from a node at 127.0.0.1.
inline const std::vector<std::uint8_t> kSeedGet =
    bytes("10 81 00 02 0E F0 01 0E F0 01 62 0C 80 00 82 00 83 00 8A 00 9D 00 9E 00 9F 00 D3 00 "
          "D4 00 D5 00 D6 00 D7 00");
inline const std::vector<std::uint8_t> kSeedReply = bytes(
    "10 81 00 02 0E F0 01 0E F0 01 72 0C 80 01 30 82 04 01 0E 01 00 83 11 FE FF FF FF 00 00 00 "
    "00 00 00 00 00 00 7F 00 00 01 8A 03 FF FF FF 9D 03 02 80 D5 9E 01 00 9F 0D 0C 80 82 83 8A "
    "9D 9E 9F D3 D4 D5 D6 D7 D3 03 00 00 01 D4 02 00 02 D5 04 01 01 30 01 D6 04 01 01 30 01 D7 "
    "03 01 01 30");

} // namespace echonet::test
