// Command-line numbers (digits only, within bounds) and addresses (IPv4 literals only).
#include "options.hpp"

#include <gtest/gtest.h>

namespace comm {
namespace {

TEST(Options, NumbersWithinBounds) {
    EXPECT_EQ(7850u, parse_number("7850", 1, 65535));
    EXPECT_EQ(1u, parse_number("1", 1, 65535));
    EXPECT_EQ(~0ull, parse_number("18446744073709551615", 0, ~0ull));
}

TEST(Options, RejectsAnythingElse) {
    for (const char *bad :
         {"", "-1", "+1", " 1", "1 ", "1x", "0x10", "70000", "0", "18446744073709551616"})
        EXPECT_FALSE(parse_number(bad, 1, 65535).has_value()) << '"' << bad << '"';
}

TEST(Options, Ipv4Literals) {
    const auto other = parse_ipv4("127.0.0.2");
    ASSERT_TRUE(other.has_value());
    EXPECT_EQ(htonl(0x7f000002), other->s_addr);
    ASSERT_TRUE(parse_ipv4("0.0.0.0").has_value());
    EXPECT_EQ(0u, parse_ipv4("0.0.0.0")->s_addr);
    // "" must not slip through as "any address"; names and IPv6 are not IPv4 literals.
    for (const char *bad : {"", "nope", "300.1.1.1", "localhost", "::1", "1.2.3", "127.0.0.1 "})
        EXPECT_FALSE(parse_ipv4(bad).has_value()) << '"' << bad << '"';
    // A view that ends inside a longer string is read only up to its end.
    EXPECT_TRUE(parse_ipv4(std::string_view("10.0.0.1x").substr(0, 8)).has_value());
}

TEST(Options, ReaderNamesABadAddress) {
    char prog[] = "prog", host[] = "--host", value[] = "300.1.1.1";
    char *argv[] = {prog, host, value};
    OptionReader reader(3, argv);
    EXPECT_EQ("--host", reader.next());
    EXPECT_THROW(reader.ipv4(), UsageError);
}

TEST(Options, ReaderWalksPairsAndNamesTheFault) {
    char prog[] = "prog", port[] = "--port", value[] = "80", pool[] = "--pool";
    char *argv[] = {prog, port, value, pool};
    OptionReader reader(4, argv);
    EXPECT_EQ("--port", reader.next());
    EXPECT_EQ(80u, reader.number(1, 65535));
    EXPECT_THROW(reader.next(), UsageError); // --pool has no value
}

} // namespace
} // namespace comm
