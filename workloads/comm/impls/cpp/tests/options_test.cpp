// Command-line numbers: digits only, within bounds.
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
