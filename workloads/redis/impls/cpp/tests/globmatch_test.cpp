#include "globmatch.hpp"

#include <gtest/gtest.h>

#include <string>

namespace redis {
namespace {

TEST(Glob, RedisPatterns) {
    EXPECT_TRUE(glob_match("*", "anything"));
    EXPECT_TRUE(glob_match("h?llo", "hello"));
    EXPECT_TRUE(glob_match("h*llo", "heeeello"));
    EXPECT_TRUE(glob_match("h[ae]llo", "hallo"));
    EXPECT_FALSE(glob_match("h[ae]llo", "hillo"));
    EXPECT_TRUE(glob_match("h[^e]llo", "hallo"));
    EXPECT_FALSE(glob_match("h[^e]llo", "hello"));
    EXPECT_TRUE(glob_match("h[a-b]llo", "hbllo"));
    EXPECT_TRUE(glob_match("h[b-a]llo", "hallo")); // reversed ranges work
    EXPECT_TRUE(glob_match("h\\*llo", "h*llo"));
    EXPECT_FALSE(glob_match("h\\*llo", "hello"));
    EXPECT_TRUE(glob_match("a*", "a"));
    EXPECT_FALSE(glob_match("a?", "a"));
    EXPECT_TRUE(glob_match("[", "x") == false);
    EXPECT_TRUE(glob_match("CONFIG", "config", true));
    // Exponential patterns finish quickly.
    EXPECT_FALSE(glob_match("a*a*a*a*a*a*a*a*a*a*a*a*b", std::string(60, 'a')));
}

} // namespace
} // namespace redis
