// Property maps (SPEC §4): exact encoding in both forms, and a decoder that does not trust N.
#include "propmap.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

namespace echonet {
namespace {

using test::bytes;
using test::vec;

EpcSet set_of(std::initializer_list<int> epcs) {
    EpcSet s;
    for (int e : epcs)
        s.set(static_cast<std::size_t>(e));
    return s;
}

// The air conditioner's 18 readable properties (SPEC §5).
const EpcSet kAirConditionerGet = set_of({0x80, 0x81, 0x82, 0x88, 0x8A, 0x8F, 0x93, 0x97, 0x98,
                                          0x9D, 0x9E, 0x9F, 0xA0, 0xB0, 0xB1, 0xB3, 0xBA, 0xBB});

TEST(PropertyMap, ListFormInAscendingOrder) {
    EXPECT_EQ(bytes("00"), vec(encode_property_map({}).view()));
    EXPECT_EQ(bytes("02 80 D5"), vec(encode_property_map(set_of({0xD5, 0x80})).view()));
    EXPECT_EQ(bytes("05 80 81 A0 B0 B3"),
              vec(encode_property_map(set_of({0xB3, 0xA0, 0x81, 0xB0, 0x80})).view()));
}

TEST(PropertyMap, FifteenIsListSixteenIsBitmap) {
    EpcSet s;
    for (int e = 0x80; e < 0x8F; ++e)
        s.set(static_cast<std::size_t>(e));
    const PropertyMap list = encode_property_map(s);
    EXPECT_EQ(16u, list.size);
    EXPECT_EQ(15, list.bytes[0]);
    s.set(0x8F);
    const PropertyMap bitmap = encode_property_map(s);
    EXPECT_EQ(bytes("10 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01 01"), vec(bitmap.view()));
}

TEST(PropertyMap, BitmapFormOfTheAirConditioner) {
    EXPECT_EQ(bytes("12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03"),
              vec(encode_property_map(kAirConditionerGet).view()));
}

TEST(PropertyMap, BitPositions) {
    EpcSet s = kAirConditionerGet;
    s.set(0xD6).set(0xFF);
    const PropertyMap m = encode_property_map(s);
    EXPECT_EQ(20, m.bytes[0]);
    EXPECT_TRUE(m.bytes[1 + 0x0] & 0x01); // 0x80: byte 0 bit 0
    EXPECT_TRUE(m.bytes[1 + 0x6] & 0x20); // 0xD6: byte 6 bit 5
    EXPECT_TRUE(m.bytes[1 + 0xF] & 0x80); // 0xFF: byte 15 bit 7
}

TEST(PropertyMap, CodesBelow0x80AreNotEncoded) {
    EXPECT_EQ(bytes("01 80"), vec(encode_property_map(set_of({0x00, 0x7F, 0x80})).view()));
}

TEST(PropertyMap, RoundTrips) {
    for (const EpcSet &s :
         {EpcSet{}, set_of({0x80}), set_of({0x9D, 0x9E, 0x9F}), kAirConditionerGet})
        EXPECT_EQ(s, decode_property_map(encode_property_map(s).view()));
    EpcSet all;
    for (int e = 0x80; e < 0x100; ++e)
        all.set(static_cast<std::size_t>(e));
    const PropertyMap m = encode_property_map(all);
    EXPECT_EQ(128, m.bytes[0]);
    EXPECT_EQ(all, decode_property_map(m.view()));
}

TEST(PropertyMap, DecoderDoesNotTrustTheCount) {
    auto map = bytes("12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03");
    map[0] = 16; // a peer writing 16 whatever the count
    EXPECT_EQ(kAirConditionerGet, decode_property_map(map));
    map[0] = 0xFF;
    EXPECT_EQ(kAirConditionerGet, decode_property_map(map));
    // A bitmap cut short: the bits that are there.
    EXPECT_EQ(set_of({0x80, 0xA0, 0xB0}), decode_property_map(bytes("12 0D")));
    EXPECT_EQ(EpcSet{}, decode_property_map(bytes("12")));
    EXPECT_EQ(EpcSet{}, decode_property_map({}));
}

TEST(PropertyMap, ListFormTakesTheEpcsPresent) {
    EXPECT_EQ(set_of({0x80, 0x81}), decode_property_map(bytes("05 80 81")));
    EXPECT_EQ(set_of({0x80}), decode_property_map(bytes("01 80 81"))); // N says one
    EXPECT_EQ(set_of({0x01, 0x80}), decode_property_map(bytes("02 01 80")));
}

} // namespace
} // namespace echonet
