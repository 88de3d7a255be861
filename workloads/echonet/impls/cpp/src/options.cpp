#include "options.hpp"

#include <arpa/inet.h>

#include <charconv>

namespace echonet {

namespace {

std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
}

int hex_digit(char c) noexcept {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

} // namespace

std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t lo,
                                          std::uint64_t hi) noexcept {
    if (text.empty() || text.front() < '0' || text.front() > '9')
        return std::nullopt; // from_chars would take a leading '-' for unsigned types
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc{} || end != text.data() + text.size() || v < lo || v > hi)
        return std::nullopt;
    return v;
}

std::optional<in_addr> parse_ipv4(std::string_view text) {
    in_addr addr{};
    // inet_pton takes exactly four decimal parts (no "127.1", no hex), unlike inet_aton.
    if (::inet_pton(AF_INET, std::string(text).c_str(), &addr) != 1)
        return std::nullopt;
    return addr;
}

std::optional<std::vector<std::uint8_t>> parse_hex(std::string_view text) {
    if (text.size() % 2 != 0)
        return std::nullopt;
    std::vector<std::uint8_t> out;
    out.reserve(text.size() / 2);
    for (std::size_t i = 0; i < text.size(); i += 2) {
        const int hi = hex_digit(text[i]), lo = hex_digit(text[i + 1]);
        if (hi < 0 || lo < 0)
            return std::nullopt;
        out.push_back(static_cast<std::uint8_t>(hi << 4 | lo));
    }
    return out;
}

std::optional<Eoj> parse_eoj(std::string_view text) {
    const auto bytes = text.size() == 6 ? parse_hex(text) : std::nullopt;
    if (!bytes)
        return std::nullopt;
    return Eoj{(*bytes)[0], (*bytes)[1], (*bytes)[2]};
}

bool NetworkOptions::take(std::string_view name, std::string_view value) {
    if (name == "--bind" || name == "--ifaddr") {
        const auto addr = parse_ipv4(value);
        if (!addr)
            throw UsageError("bad " + std::string(name) + " " + quoted(value) +
                             " (an IPv4 address)");
        (name == "--bind" ? bind : ifaddr.emplace()) = *addr;
        return true;
    }
    if (name == "--port") {
        port = static_cast<std::uint16_t>(number_option(name, value, 1, 65535));
        return true;
    }
    return false;
}

std::optional<ArgReader::Arg> ArgReader::next() {
    if (i_ >= argc_)
        return std::nullopt;
    const std::string_view arg = argv_[i_++];
    if (!arg.starts_with("--"))
        return Arg{{}, arg};
    if (arg == "--help")
        return Arg{arg, {}};
    if (i_ >= argc_)
        throw UsageError("missing value for " + std::string(arg));
    return Arg{arg, argv_[i_++]};
}

std::uint64_t number_option(std::string_view name, std::string_view value, std::uint64_t lo,
                            std::uint64_t hi) {
    if (auto v = parse_number(value, lo, hi))
        return *v;
    throw UsageError("bad " + std::string(name) + " " + quoted(value) + " (" + std::to_string(lo) +
                     ".." + std::to_string(hi) + ")");
}

} // namespace echonet
