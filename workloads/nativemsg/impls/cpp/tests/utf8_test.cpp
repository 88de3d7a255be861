#include "utf8.hpp"

#include <gtest/gtest.h>

#include <string>

namespace nativemsg {
namespace {

TEST(Utf8, AcceptsWellFormedText) {
    EXPECT_TRUE(is_valid_utf8(""));
    EXPECT_TRUE(is_valid_utf8("plain ASCII"));
    EXPECT_TRUE(is_valid_utf8("é € 😀 \u07FF \uFFFD \U0010FFFF \uD7FF \uE000"));
    EXPECT_TRUE(is_valid_utf8(std::string("nul \0 inside", 12)));
}

TEST(Utf8, RejectsMalformedSequences) {
    const char *bad[] = {
        "\x80",             // lone continuation byte
        "\xC3",             // truncated 2-byte sequence
        "\xC3(",            // bad continuation
        "\xC0\x80",         // overlong NUL
        "\xC1\xBF",         // overlong
        "\xE0\x80\xAF",     // overlong 3-byte
        "\xE2\x82",         // truncated 3-byte
        "\xED\xA0\x80",     // surrogate U+D800
        "\xED\xBF\xBF",     // surrogate U+DFFF
        "\xF0\x8F\xBF\xBF", // overlong 4-byte
        "\xF4\x90\x80\x80", // above U+10FFFF
        "\xF5\x80\x80\x80", // invalid lead byte
        "\xFF",             // invalid byte
        "\xF0\x9F\x98",     // truncated emoji
    };
    for (const char *b : bad) {
        EXPECT_FALSE(is_valid_utf8(b)) << testing::PrintToString(std::string(b));
    }
}

// Encodes a code point the way UTF-8 does, surrogates included (to check they are refused).
std::string encode(char32_t c) {
    std::string out;
    if (c < 0x80) {
        out += static_cast<char>(c);
    } else if (c < 0x800) {
        out += static_cast<char>(0xC0 | (c >> 6));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else if (c < 0x10000) {
        out += static_cast<char>(0xE0 | (c >> 12));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    } else {
        out += static_cast<char>(0xF0 | (c >> 18));
        out += static_cast<char>(0x80 | ((c >> 12) & 0x3F));
        out += static_cast<char>(0x80 | ((c >> 6) & 0x3F));
        out += static_cast<char>(0x80 | (c & 0x3F));
    }
    return out;
}

TEST(Utf8, EveryCodePoint) {
    for (char32_t c = 0; c <= 0x10FFFF; ++c) {
        const bool surrogate = c >= 0xD800 && c <= 0xDFFF;
        ASSERT_EQ(is_valid_utf8(encode(c)), !surrogate) << std::hex << static_cast<unsigned>(c);
    }
}

TEST(Utf8, EveryThreeByteString) {
    // Valid 3-byte strings: three ASCII bytes, ASCII + a 2-byte character either way round, or
    // one 3-byte character (U+0800..U+FFFF without the 2048 surrogates).
    constexpr long kAscii = 0x80;
    constexpr long kTwoByte = 0x800 - 0x80;
    constexpr long kThreeByte = 0x10000 - 0x800 - 0x800;
    long valid = 0;
    char text[3];
    for (int a = 0; a < 256; ++a) {
        for (int b = 0; b < 256; ++b) {
            for (int c = 0; c < 256; ++c) {
                text[0] = static_cast<char>(a);
                text[1] = static_cast<char>(b);
                text[2] = static_cast<char>(c);
                valid += is_valid_utf8({text, 3}) ? 1 : 0;
            }
        }
    }
    EXPECT_EQ(valid, kAscii * kAscii * kAscii + 2 * kAscii * kTwoByte + kThreeByte);
}

TEST(Utf8, EveryPositionOfTheFastPath) {
    // The 64-byte ASCII steps must neither skip a bad byte nor misjudge a good sequence at any
    // offset, including across the block boundaries and in the tail.
    for (std::size_t at = 0; at < 200; ++at) {
        std::string text(200, 'a');
        text.insert(at, "\xE2\x82\xAC"); // €
        EXPECT_TRUE(is_valid_utf8(text)) << at;
        text[at + 1] = 'x';
        EXPECT_FALSE(is_valid_utf8(text)) << at;
        std::string truncated(at, 'a');
        truncated += "\xF0\x9F\x98";
        EXPECT_FALSE(is_valid_utf8(truncated)) << at;
    }
}

TEST(Utf8, CheckStringReportsControlCharacters1AThrough1FAtEveryPosition) {
    // One pass does both checks: a control byte must be seen in a pure ASCII block, in a block
    // with multi-byte sequences before or after it, and in the tail; its neighbours must not count.
    for (const std::string_view around : {"a", "\xC3\xA9", "\xF0\x9F\x98\x80"}) {
        for (std::size_t before = 0; before < 200; before += around.size()) {
            std::string text(" ");
            while (text.size() <= before) {
                text += around;
            }
            const std::size_t at = text.size();
            text += '\x19';
            while (text.size() < 300) {
                text += around;
            }
            EXPECT_TRUE(check_string(text).utf8) << at;
            EXPECT_FALSE(check_string(text).control_1a_to_1f) << at;
            for (char c = 0x1A; c <= 0x1F; ++c) {
                text[at] = c;
                const StringCheck check = check_string(text);
                EXPECT_TRUE(check.utf8) << at;
                EXPECT_TRUE(check.control_1a_to_1f) << int{c} << " at " << at;
                EXPECT_TRUE(check_string(std::string_view(text).substr(0, at + 1)).control_1a_to_1f)
                    << int{c} << " at the end, " << at;
            }
        }
    }
    EXPECT_FALSE(check_string("\x1A \xFF").utf8);
}

TEST(Utf8, FindsControlCharacters1AThrough1FAtEveryPosition) {
    EXPECT_EQ(find_control_1a_to_1f(""), std::string_view::npos);
    // The neighbours of the range and every other control character are not reported.
    std::string others;
    for (int c = 0; c < 256; ++c) {
        if (c < 0x1A || c > 0x1F) {
            others.push_back(static_cast<char>(c));
        }
    }
    EXPECT_EQ(find_control_1a_to_1f(others + others), std::string_view::npos);
    for (char c = 0x1A; c <= 0x1F; ++c) {
        for (std::size_t at = 0; at < 200; ++at) {
            std::string text(200, 'a');
            text[at] = c;
            text[199 - (at % 7)] = c; // a later one must not be reported first
            EXPECT_EQ(find_control_1a_to_1f(text), std::min(at, 199 - (at % 7))) << at;
        }
    }
}

} // namespace
} // namespace nativemsg
