// The object model (SPEC §5): every property's exact value, the maps, and the Set rules.
#include "objects.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>

namespace echonet {
namespace {

using test::bytes;
using test::vec;

std::vector<std::uint8_t> value(const DeviceObject &o, std::uint8_t epc) {
    const auto v = o.get(epc);
    return v ? vec(*v) : std::vector<std::uint8_t>{0xDE, 0xAD}; // never a real value here
}

void expect_values(const DeviceObject &o, const std::map<int, std::string> &table) {
    for (int epc = 0; epc < 256; ++epc) {
        const auto it = table.find(epc);
        if (it == table.end())
            EXPECT_FALSE(o.get(static_cast<std::uint8_t>(epc)).has_value()) << std::hex << epc;
        else
            EXPECT_EQ(bytes(it->second), value(o, static_cast<std::uint8_t>(epc)))
                << std::hex << epc;
    }
}

TEST(Objects, NodeProfileValues) {
    Node node({10, 201, 0, 2});
    const DeviceObject &p = node.profile();
    EXPECT_EQ(kNodeProfile, p.eoj());
    expect_values(p, {
                         {0x80, "30"},
                         {0x82, "01 0E 01 00"},
                         {0x83, "FE FF FF FF 00 00 00 00 00 00 00 00 00 0A C9 00 02"},
                         {0x8A, "FF FF FF"},
                         {0x9D, "02 80 D5"},
                         {0x9E, "00"},
                         {0x9F, "0C 80 82 83 8A 9D 9E 9F D3 D4 D5 D6 D7"},
                         {0xD3, "00 00 01"},
                         {0xD4, "00 02"},
                         {0xD5, "01 01 30 01"},
                         {0xD6, "01 01 30 01"},
                         {0xD7, "01 01 30"},
                     });
}

TEST(Objects, AirConditionerValues) {
    Node node({127, 0, 0, 1});
    ASSERT_EQ(2u, node.objects().size());
    const DeviceObject &ac = node.objects()[1];
    EXPECT_EQ(kAirConditioner, ac.eoj());
    expect_values(ac, {
                          {0x80, "31"},
                          {0x81, "00"},
                          {0x82, "00 00 52 01"},
                          {0x88, "42"},
                          {0x8A, "FF FF FF"},
                          {0x8F, "42"},
                          {0x93, "42"},
                          {0x97, "0C 00"},
                          {0x98, "07 E6 01 01"},
                          {0x9D, "04 80 81 88 B0"},
                          {0x9E, "05 80 81 A0 B0 B3"},
                          {0x9F, "12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03"},
                          {0xA0, "41"},
                          {0xB0, "41"},
                          {0xB1, "41"},
                          {0xB3, "14"},
                          {0xBA, "32"},
                          {0xBB, "14"},
                      });
}

TEST(Objects, SetRulesOfTheAirConditioner) {
    const std::map<int, std::vector<int>> accepted = {
        {0x80, {0x30, 0x31}},
        {0x81, {}}, // any byte: checked below
        {0xA0, {0x31, 0x32, 0x33, 0x34, 0x35, 0x36, 0x37, 0x38, 0x41}},
        {0xB0, {0x40, 0x41, 0x42, 0x43, 0x44, 0x45}},
        {0xB3, {}},
    };
    for (int epc = 0; epc < 256; ++epc) {
        for (int v = 0; v < 256; ++v) {
            Node node({127, 0, 0, 1});
            DeviceObject &ac = node.objects()[1];
            const auto e = static_cast<std::uint8_t>(epc);
            const auto before = ac.get(e) ? vec(*ac.get(e)) : std::vector<std::uint8_t>{};
            const std::uint8_t b[] = {static_cast<std::uint8_t>(v)};
            bool want = false;
            if (const auto it = accepted.find(epc); it != accepted.end())
                want = epc == 0x81 ||
                       (epc == 0xB3 ? v <= 0x32 : std::ranges::count(it->second, v) > 0);
            ASSERT_EQ(want, ac.set(e, b)) << std::hex << epc << " " << v;
            EXPECT_EQ(want ? std::vector<std::uint8_t>{b[0]} : before,
                      ac.get(e) ? vec(*ac.get(e)) : std::vector<std::uint8_t>{});
        }
    }
}

TEST(Objects, SetNeedsExactlyOneByte) {
    Node node({127, 0, 0, 1});
    DeviceObject &ac = node.objects()[1];
    EXPECT_FALSE(ac.set(0x80, {}));
    EXPECT_FALSE(ac.set(0x80, bytes("30 30")));
    EXPECT_EQ(bytes("31"), value(ac, 0x80));
    EXPECT_TRUE(ac.set(0x80, bytes("30")));
    EXPECT_EQ(bytes("30"), value(ac, 0x80));
}

TEST(Objects, NothingOfTheNodeProfileIsSettable) {
    Node node({127, 0, 0, 1});
    DeviceObject &p = node.objects()[0];
    for (int epc = 0; epc < 256; ++epc)
        for (const auto v : {0x30, 0x31, 0x00})
            EXPECT_FALSE(p.set(static_cast<std::uint8_t>(epc), bytes(v == 0      ? "00"
                                                                     : v == 0x30 ? "30"
                                                                                 : "31")));
}

TEST(Objects, ValuesPersistPerNode) {
    Node a({127, 0, 0, 1}), b({127, 0, 0, 1});
    ASSERT_TRUE(a.objects()[1].set(0xB3, bytes("19")));
    EXPECT_EQ(bytes("19"), value(a.objects()[1], 0xB3));
    EXPECT_EQ(bytes("14"), value(b.objects()[1], 0xB3));
}

TEST(Objects, BadTablesAreRefused) {
    const PropertySpec twice[] = {{0x80, {0x30}, false, nullptr}, {0x80, {0x31}, false, nullptr}};
    EXPECT_THROW(DeviceObject(kAirConditioner, twice), std::invalid_argument);
    const PropertySpec map_too[] = {{0x9F, {0x00}, false, nullptr}};
    EXPECT_THROW(DeviceObject(kAirConditioner, map_too), std::invalid_argument);
    const PropertySpec too_long[] = {{0x80, std::vector<std::uint8_t>(18), false, nullptr}};
    EXPECT_THROW(DeviceObject(kAirConditioner, too_long), std::invalid_argument);
}

} // namespace
} // namespace echonet
