#include "numeric.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

namespace redis {
namespace {

TEST(ParseInt64, StrictDecimal) {
    std::int64_t v = 0;
    EXPECT_TRUE(parse_int64("0", v));
    EXPECT_EQ(v, 0);
    EXPECT_TRUE(parse_int64("-9223372036854775808", v));
    EXPECT_EQ(v, std::numeric_limits<std::int64_t>::min());
    EXPECT_TRUE(parse_int64("9223372036854775807", v));
    EXPECT_EQ(v, std::numeric_limits<std::int64_t>::max());
    for (const char *bad : {"", "-", "-0", "007", "+1", " 1", "1 ", "9223372036854775808",
                            "-9223372036854775809", "1.5", "abc", "99999999999999999999"}) {
        EXPECT_FALSE(parse_int64(bad, v)) << bad;
    }
}

TEST(ParseDouble, LikeStrtodWhole) {
    double v = 0;
    EXPECT_TRUE(parse_double("1.5", v));
    EXPECT_EQ(v, 1.5);
    EXPECT_TRUE(parse_double("-inf", v));
    EXPECT_TRUE(std::isinf(v) && v < 0);
    EXPECT_TRUE(parse_double("0x10", v));
    EXPECT_EQ(v, 16);
    for (const char *bad : {"", " 1", "1 ", "nan", "1e400", "1e-400", "abc"}) {
        EXPECT_FALSE(parse_double(bad, v)) << bad;
    }
    EXPECT_FALSE(parse_double(std::string_view("1\0", 2), v));
}

// redis 7.0's string2ld needs strtold to read all of the value: an embedded NUL makes it no
// number (found by difffuzz.py: INCRBYFLOAT of "\0\r\n\xff" was 4 here, an error in redis).
TEST(ParseLongDouble, RefusesEmbeddedNul) {
    long double v = 0;
    EXPECT_FALSE(parse_long_double(std::string_view("2\0x", 3), v));
    EXPECT_FALSE(parse_long_double(std::string_view("\0\r\n\xff", 4), v));
    EXPECT_FALSE(parse_long_double(std::string_view("1\0", 2), v));
    EXPECT_TRUE(parse_long_double("2", v));
    EXPECT_EQ(v, 2.0L);
    EXPECT_TRUE(parse_long_double("0x10", v));
    EXPECT_EQ(v, 16.0L);
    EXPECT_FALSE(parse_long_double(" 2", v));
}

std::string fd(double v) {
    char buf[kNumberChars];
    return std::string(format_double(v, buf));
}

TEST(FormatDouble, Percent17g) {
    EXPECT_EQ(fd(0.1), "0.10000000000000001");
    EXPECT_EQ(fd(3), "3");
    EXPECT_EQ(fd(-0.0), "-0");
    EXPECT_EQ(fd(1e100), "1e+100");
    EXPECT_EQ(fd(1.1), "1.1000000000000001");
    EXPECT_EQ(fd(std::numeric_limits<double>::infinity()), "inf");
    EXPECT_EQ(fd(-std::numeric_limits<double>::infinity()), "-inf");
}

std::string fld(long double v) {
    char buf[5 * 1024];
    std::size_t len = 0;
    EXPECT_TRUE(format_long_double(v, buf, sizeof buf, len));
    return std::string(buf, len);
}

TEST(FormatLongDouble, TrailingZerosTrimmed) {
    EXPECT_EQ(fld(1.5L), "1.5");
    EXPECT_EQ(fld(10.0L), "10");
    EXPECT_EQ(fld(-0.0L), "0");
    EXPECT_EQ(fld(10.1L), "10.1");
}

} // namespace
} // namespace redis
