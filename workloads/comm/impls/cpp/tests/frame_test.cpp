// The wire format: header layout, and where a run of received frames stops.
#include "frame.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace comm {
namespace {

std::vector<std::uint8_t> frame(std::uint8_t type, const std::vector<std::uint8_t> &body) {
    std::vector<std::uint8_t> out(kHeaderSize + body.size());
    encode_header({type, body.size()}, out.data());
    std::copy(body.begin(), body.end(), out.begin() + kHeaderSize);
    return out;
}

TEST(Frame, HeaderIsTypeThenBigEndianLength) {
    std::uint8_t out[kHeaderSize];
    encode_header({kText, 0x0102030405060708ull}, out);
    const std::uint8_t expected[kHeaderSize] = {1, 1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_EQ(0, std::memcmp(out, expected, kHeaderSize));
}

TEST(Frame, HeadersRoundTripAtTheExtremes) {
    for (const std::uint64_t length : {0ull, 1ull, 255ull, 256ull, 1ull << 32, ~0ull}) {
        std::uint8_t out[kHeaderSize];
        encode_header({kBinary, length}, out);
        EXPECT_EQ((Header{kBinary, length}), decode_header(out));
    }
}

TEST(Frame, OnlyEndAndQuitEndASession) {
    for (int t = 0; t < 256; ++t)
        EXPECT_EQ(t == kEnd || t == kQuit, ends_session(static_cast<std::uint8_t>(t))) << t;
}

TEST(FrameScan, EmptyAndPartialHeadersNeedMore) {
    const auto f = frame(kDefault, {1, 2, 3});
    for (std::size_t n = 0; n < kHeaderSize; ++n) {
        const FrameScan s = scan_frames({f.data(), n}, kDefaultMaxBody);
        EXPECT_EQ(0u, s.whole);
        EXPECT_EQ(FrameScan::Stop::need_more, s.stop);
        EXPECT_FALSE(s.has_next);
    }
}

TEST(FrameScan, StopsAfterTheLastCompleteFrame) {
    auto bytes = frame(kDefault, {1, 2, 3});
    const auto second = frame(kReply, {});
    bytes.insert(bytes.end(), second.begin(), second.end());
    const auto third = frame(kText, std::vector<std::uint8_t>(100, 7));
    bytes.insert(bytes.end(), third.begin(), third.end() - 1); // one byte short
    const FrameScan s = scan_frames(bytes, kDefaultMaxBody);
    EXPECT_EQ(kHeaderSize * 2 + 3, s.whole);
    EXPECT_EQ(FrameScan::Stop::need_more, s.stop);
    ASSERT_TRUE(s.has_next);
    EXPECT_EQ((Header{kText, 100}), s.next);
}

TEST(FrameScan, StopsAtEndOrQuit) {
    for (const std::uint8_t closer : {kEnd, kQuit}) {
        auto bytes = frame(kDefault, {9});
        const auto end = frame(closer, {});
        bytes.insert(bytes.end(), end.begin(), end.end());
        const FrameScan s = scan_frames(bytes, kDefaultMaxBody);
        EXPECT_EQ(kHeaderSize + 1, s.whole);
        EXPECT_EQ(FrameScan::Stop::session_end, s.stop);
    }
}

TEST(FrameScan, RefusesALengthAboveTheCapOnTheHeaderAlone) {
    for (const std::uint64_t length : {1001ull, 1ull << 40, ~0ull}) {
        std::uint8_t header[kHeaderSize];
        encode_header({kDefault, length}, header);
        const FrameScan s = scan_frames(header, 1000);
        EXPECT_EQ(0u, s.whole);
        EXPECT_EQ(FrameScan::Stop::too_long, s.stop);
        EXPECT_EQ(length, s.next.length);
    }
    const auto at_cap = frame(kDefault, std::vector<std::uint8_t>(1000));
    EXPECT_EQ(at_cap.size(), scan_frames(at_cap, 1000).whole);
}

} // namespace
} // namespace comm
