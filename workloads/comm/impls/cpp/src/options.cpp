#include "options.hpp"

#include <arpa/inet.h>

#include <charconv>

namespace comm {

std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t lo,
                                          std::uint64_t hi) noexcept {
    if (text.empty() || text.front() < '0' || text.front() > '9')
        return std::nullopt; // from_chars would also take a leading '-' for unsigned types
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || v < lo || v > hi)
        return std::nullopt;
    return v;
}

std::optional<in_addr> parse_ipv4(std::string_view text) {
    in_addr address{};
    // A copy: inet_pton reads up to a NUL, and a view need not end in one.
    if (::inet_pton(AF_INET, std::string(text).c_str(), &address) != 1)
        return std::nullopt;
    return address;
}

std::optional<std::string_view> OptionReader::next() {
    if (i_ >= argc_)
        return std::nullopt;
    name_ = argv_[i_];
    if (i_ + 1 >= argc_)
        throw UsageError("missing value for " + std::string(name_));
    value_ = argv_[i_ + 1];
    i_ += 2;
    return name_;
}

std::uint64_t OptionReader::number(std::uint64_t lo, std::uint64_t hi) const {
    if (auto v = parse_number(value_, lo, hi))
        return *v;
    throw UsageError("bad " + std::string(name_) + " '" + std::string(value_) + "' (" +
                     std::to_string(lo) + ".." + std::to_string(hi) + ")");
}

in_addr OptionReader::ipv4() const {
    if (auto address = parse_ipv4(value_))
        return *address;
    throw UsageError("bad " + std::string(name_) + " '" + std::string(value_) +
                     "' (an IPv4 address is expected)");
}

void OptionReader::unknown() const {
    throw UsageError("unknown option " + std::string(name_));
}

} // namespace comm
