// Command-line pieces shared by the node and the controller (SPEC §7, §8): addresses, numbers,
// hex, and the --bind/--ifaddr/--port options both programs take. A bad value is a
// UsageError naming it; the programs turn that into a message on stderr and exit status 2.
#pragma once

#include "frame.hpp"
#include "transport.hpp"

#include <netinet/in.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace echonet {

class UsageError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A decimal number in [lo, hi], digits only (no sign, no spaces).
std::optional<std::uint64_t> parse_number(std::string_view text, std::uint64_t lo,
                                          std::uint64_t hi) noexcept;
// A dotted-quad IPv4 address.
std::optional<in_addr> parse_ipv4(std::string_view text);
// Hex digits in pairs, either case; an empty string is no bytes.
std::optional<std::vector<std::uint8_t>> parse_hex(std::string_view text);
// Six hex digits: class group, class, instance.
std::optional<Eoj> parse_eoj(std::string_view text);

// --bind, --ifaddr and --port as given; --ifaddr defaults to the --bind address.
struct NetworkOptions {
    in_addr bind{};
    std::optional<in_addr> ifaddr;
    std::uint16_t port = kDefaultPort;

    // Takes `name` if it is one of the three (throwing UsageError on a bad value).
    bool take(std::string_view name, std::string_view value);
    SocketConfig socket_config() const noexcept {
        return {bind, ifaddr.value_or(bind), port};
    }
};

// Walks argv: options are `--name value` pairs (or a lone --help); anything else is an
// operand, handed back in order.
class ArgReader {
  public:
    ArgReader(int argc, char **argv) noexcept : argc_(argc), argv_(argv) {}
    struct Arg {
        std::string_view name;  // empty for an operand
        std::string_view value; // the option's value, or the operand
    };
    // The next argument; throws UsageError for an option without a value.
    std::optional<Arg> next();

  private:
    int argc_;
    char **argv_;
    int i_ = 1;
};

// The value of a numeric option, in [lo, hi], or a UsageError naming the option.
std::uint64_t number_option(std::string_view name, std::string_view value, std::uint64_t lo,
                            std::uint64_t hi);

} // namespace echonet
