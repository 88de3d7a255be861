// Command-line helpers shared by the server and client programs: `--name value` pairs, whole
// decimal numbers within bounds, IPv4 addresses, and the usage error both programs exit with
// (status 2).
#pragma once

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace comm {

class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A decimal number in [lo, hi], digits only (no sign, no spaces); nullopt otherwise.
std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t lo,
                                          std::uint64_t hi) noexcept;

// An IPv4 address literal (dotted decimal, as inet_pton takes it); nullopt for anything else:
// host names, the empty string (which some socket APIs read as "any address"), a part > 255.
std::optional<in_addr> parse_ipv4(std::string_view text);

// Walks argv as `--name value` pairs.
class OptionReader {
  public:
    OptionReader(int argc, char **argv) noexcept : argc_(argc), argv_(argv) {}
    // The next option's name, or nullopt at the end; throws UsageError if it has no value.
    std::optional<std::string_view> next();
    std::string_view value() const noexcept {
        return value_;
    }
    // The value as a number in [lo, hi]; throws UsageError naming the option otherwise.
    std::uint64_t number(std::uint64_t lo, std::uint64_t hi) const;
    // The value as an IPv4 address literal; throws UsageError naming the option otherwise.
    in_addr ipv4() const;
    [[noreturn]] void unknown() const;

  private:
    int argc_;
    char **argv_;
    int i_ = 1;
    std::string_view name_, value_;
};

} // namespace comm
