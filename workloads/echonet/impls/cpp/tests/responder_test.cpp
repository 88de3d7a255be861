// How a node answers (SPEC §6), byte for byte.
#include "responder.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace echonet {
namespace {

using test::bytes;

struct Outcome {
    Verdict verdict;
    std::vector<std::vector<std::uint8_t>> replies;
};

class ResponderTest : public ::testing::Test {
  protected:
    Outcome send(const std::vector<std::uint8_t> &datagram) {
        Outcome o{};
        o.verdict = responder_.handle(datagram,
                                      [&](Bytes reply) { o.replies.push_back(test::vec(reply)); });
        return o;
    }
    // One request, exactly one reply expected.
    std::vector<std::uint8_t> reply(std::string_view request) {
        const Outcome o = send(bytes(request));
        EXPECT_EQ(Verdict::request, o.verdict);
        EXPECT_EQ(1u, o.replies.size());
        return o.replies.empty() ? std::vector<std::uint8_t>{} : o.replies[0];
    }

    Node node_{{127, 0, 0, 1}};
    Responder responder_{node_};
};

TEST_F(ResponderTest, TheSeedGetGetsThe94ByteReply) {
    const Outcome o = send(test::kSeedGet);
    EXPECT_EQ(Verdict::request, o.verdict);
    ASSERT_EQ(1u, o.replies.size());
    EXPECT_EQ(94u, o.replies[0].size());
    EXPECT_EQ(test::kSeedReply, o.replies[0]);
}

TEST_F(ResponderTest, GetWithAnUnreadablePropertyIsGetSna) {
    // Readable EPCs keep their EDT, the unknown one has PDC 0; same OPC, request order.
    EXPECT_EQ(bytes("10 81 00 07 01 30 01 05 FF 01 52 03 B3 01 14 99 00 80 01 31"),
              reply("10 81 00 07 05 FF 01 01 30 01 62 03 B3 00 99 00 80 00"));
}

TEST_F(ResponderTest, GetIgnoresTheRequestsEdtAndAnswersDuplicates) {
    EXPECT_EQ(bytes("10 81 00 08 01 30 01 05 FF 01 72 02 80 01 31 80 01 31"),
              reply("10 81 00 08 05 FF 01 01 30 01 62 02 80 02 AA BB 80 00"));
}

TEST_F(ResponderTest, SetCAppliesAndAcknowledges) {
    EXPECT_EQ(bytes("10 81 00 09 01 30 01 05 FF 01 71 02 80 00 B3 00"),
              reply("10 81 00 09 05 FF 01 01 30 01 61 02 80 01 30 B3 01 19"));
    EXPECT_EQ(bytes("10 81 00 0A 01 30 01 05 FF 01 72 02 80 01 30 B3 01 19"),
              reply("10 81 00 0A 05 FF 01 01 30 01 62 02 80 00 B3 00"));
}

TEST_F(ResponderTest, SetCRefusalKeepsTheAcceptedOnes) {
    // 0x80 accepted (PDC 0), 0xB3 out of range and 0x82 not settable echoed as sent.
    EXPECT_EQ(bytes("10 81 00 0B 01 30 01 05 FF 01 51 03 80 00 B3 01 33 82 02 01 02"),
              reply("10 81 00 0B 05 FF 01 01 30 01 61 03 80 01 30 B3 01 33 82 02 01 02"));
    EXPECT_EQ(bytes("10 81 00 0C 01 30 01 05 FF 01 72 02 80 01 30 B3 01 14"),
              reply("10 81 00 0C 05 FF 01 01 30 01 62 02 80 00 B3 00"));
}

TEST_F(ResponderTest, SetIIsSilentOnSuccess) {
    const Outcome o = send(bytes("10 81 00 0D 05 FF 01 01 30 01 60 01 B0 01 42"));
    EXPECT_EQ(Verdict::request, o.verdict);
    EXPECT_TRUE(o.replies.empty());
    EXPECT_EQ(bytes("10 81 00 0E 01 30 01 05 FF 01 72 01 B0 01 42"),
              reply("10 81 00 0E 05 FF 01 01 30 01 62 01 B0 00"));
}

TEST_F(ResponderTest, SetIRefusalIsSetISna) {
    EXPECT_EQ(bytes("10 81 00 0F 01 30 01 05 FF 01 50 02 81 00 80 00"),
              reply("10 81 00 0F 05 FF 01 01 30 01 60 02 81 01 05 80 00"));
}

TEST_F(ResponderTest, SetGetSetsThenGets) {
    EXPECT_EQ(bytes("10 81 00 10 01 30 01 05 FF 01 7E 01 B3 00 02 B3 01 19 80 01 31"),
              reply("10 81 00 10 05 FF 01 01 30 01 6E 01 B3 01 19 02 B3 00 80 00"));
    // A refusal in either part makes it SetGet_SNA, both parts as for Set and Get.
    EXPECT_EQ(bytes("10 81 00 11 01 30 01 05 FF 01 5E 01 B3 01 40 01 80 01 31"),
              reply("10 81 00 11 05 FF 01 01 30 01 6E 01 B3 01 40 01 80 00"));
    EXPECT_EQ(bytes("10 81 00 12 01 30 01 05 FF 01 5E 00 02 80 01 31 F0 00"),
              reply("10 81 00 12 05 FF 01 01 30 01 6E 00 02 80 00 F0 00"));
}

TEST_F(ResponderTest, InfReqIsAnsweredWithInf) {
    EXPECT_EQ(bytes("10 81 00 13 0E F0 01 05 FF 01 73 01 D5 04 01 01 30 01"),
              reply("10 81 00 13 05 FF 01 0E F0 01 63 01 D5 00"));
    EXPECT_EQ(bytes("10 81 00 14 0E F0 01 05 FF 01 53 02 D5 04 01 01 30 01 B0 00"),
              reply("10 81 00 14 05 FF 01 0E F0 01 63 02 D5 00 B0 00"));
}

TEST_F(ResponderTest, InfcIsAcknowledged) {
    EXPECT_EQ(bytes("10 81 00 15 01 30 01 05 FF 01 7A 02 80 00 B0 00"),
              reply("10 81 00 15 05 FF 01 01 30 01 74 02 80 01 30 B0 01 42"));
}

TEST_F(ResponderTest, InstanceZeroIsAnsweredByTheObjectWithItsOwnEoj) {
    EXPECT_EQ(bytes("10 81 00 16 0E F0 01 05 FF 01 72 01 D6 04 01 01 30 01"),
              reply("10 81 00 16 05 FF 01 0E F0 00 62 01 D6 00"));
    EXPECT_EQ(bytes("10 81 00 17 01 30 01 05 FF 01 72 01 80 01 31"),
              reply("10 81 00 17 05 FF 01 01 30 00 62 01 80 00"));
}

TEST_F(ResponderTest, TidIsCopiedVerbatim) {
    EXPECT_EQ(bytes("10 81 FF 00 01 30 01 0E F0 01 72 01 80 01 31"),
              reply("10 81 FF 00 0E F0 01 01 30 01 62 01 80 00"));
}

TEST_F(ResponderTest, IgnoredDatagrams) {
    for (const char *d : {
             "10 81 00 01 05 FF 01 01 30 02 62 01 80 00", // another instance
             "10 81 00 01 05 FF 01 02 90 01 62 01 80 00", // a class the node lacks
             "10 81 00 01 05 FF 01 0E F0 02 62 01 80 00",
             "10 81 00 01 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01", // INF (its own, looped)
             "10 81 00 01 0E F0 01 05 FF 01 72 01 80 01 30",          // a reply
             "10 81 00 01 0E F0 01 05 FF 01 52 01 80 00",
             "10 81 00 01 05 FF 01 0E F0 01 7A 01 80 00",
             "10 81 00 01 05 FF 01 0E F0 01 00 01 80 00", // an unknown ESV
             "10 81 00 01 05 FF 01 0E F0 01 64 01 80 00",
         }) {
        const Outcome o = send(bytes(d));
        EXPECT_EQ(Verdict::ignored, o.verdict) << d;
        EXPECT_TRUE(o.replies.empty()) << d;
    }
}

TEST_F(ResponderTest, MalformedAndFormat2AreDroppedSilently) {
    auto truncated = test::kSeedGet;
    truncated.pop_back();
    Outcome o = send(truncated);
    EXPECT_EQ(Verdict::malformed, o.verdict);
    EXPECT_TRUE(o.replies.empty());
    auto format2 = test::kSeedGet;
    format2[1] = 0x82;
    o = send(format2);
    EXPECT_EQ(Verdict::format2, o.verdict);
    EXPECT_TRUE(o.replies.empty());
}

TEST_F(ResponderTest, LargestRepliesFit) {
    // 255 gets of the longest value: the reply grows by 17 bytes a property.
    std::vector<std::uint8_t> get = bytes("10 81 00 01 05 FF 01 0E F0 01 62 FF");
    for (int i = 0; i < 255; ++i)
        get.insert(get.end(), {0x83, 0x00});
    Outcome o = send(get);
    ASSERT_EQ(1u, o.replies.size());
    EXPECT_EQ(12u + 255u * 19u, o.replies[0].size());
    // 255 refused sets of 255 bytes each: echoed whole (65,547 bytes).
    std::vector<std::uint8_t> set = bytes("10 81 00 01 05 FF 01 01 30 01 61 FF");
    for (int i = 0; i < 255; ++i) {
        set.insert(set.end(), {0x82, 0xFF});
        set.insert(set.end(), 255, 0x00);
    }
    o = send(set);
    ASSERT_EQ(1u, o.replies.size());
    EXPECT_EQ(set.size(), o.replies[0].size());
    EXPECT_EQ(0x51, o.replies[0][10]);
}

} // namespace
} // namespace echonet
