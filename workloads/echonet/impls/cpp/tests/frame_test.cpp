// The wire format (SPEC §3): what decodes, what is malformed or format 2, and exact encoding.
#include "frame.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace echonet {
namespace {

using test::bytes;
using test::vec;

Decoded decode_bytes(const std::vector<std::uint8_t> &d) {
    Frame f;
    return decode(d, f);
}

TEST(Frame, DecodesTheSeedGet) {
    Frame f;
    ASSERT_EQ(Decoded::ok, decode(test::kSeedGet, f));
    EXPECT_EQ(0x0002, f.tid);
    EXPECT_EQ(kNodeProfile, f.seoj);
    EXPECT_EQ(kNodeProfile, f.deoj);
    EXPECT_EQ(Esv::get, f.esv);
    ASSERT_EQ(12u, f.properties.size());
    std::vector<std::uint8_t> epcs;
    for (const Property p : f.properties) {
        epcs.push_back(p.epc);
        EXPECT_TRUE(p.edt.empty());
    }
    EXPECT_EQ(bytes("80 82 83 8A 9D 9E 9F D3 D4 D5 D6 D7"), epcs);
    EXPECT_TRUE(f.get_part.empty());
}

TEST(Frame, PropertiesViewTheirEdt) {
    const auto d = bytes("10 81 AB CD 05 FF 01 01 30 01 61 02 80 01 30 B3 00");
    Frame f;
    ASSERT_EQ(Decoded::ok, decode(d, f));
    EXPECT_EQ(0xABCD, f.tid);
    auto it = f.properties.begin();
    EXPECT_EQ(0x80, (*it).epc);
    EXPECT_EQ(bytes("30"), vec((*it).edt));
    ++it;
    EXPECT_EQ(0xB3, (*it).epc);
    EXPECT_TRUE((*it).edt.empty());
    EXPECT_EQ(f.properties.end(), ++it);
}

TEST(Frame, DecodesBothPartsOfASetGet) {
    const auto d = bytes("10 81 00 01 05 FF 01 01 30 01 6E 01 B3 01 19 02 80 00 B3 00");
    Frame f;
    ASSERT_EQ(Decoded::ok, decode(d, f));
    EXPECT_EQ(1u, f.properties.size());
    EXPECT_EQ(2u, f.get_part.size());
    // Either part may be empty, not both.
    EXPECT_EQ(Decoded::ok, decode_bytes(bytes("10 81 00 01 05 FF 01 01 30 01 6E 00 01 80 00")));
    EXPECT_EQ(Decoded::ok, decode_bytes(bytes("10 81 00 01 05 FF 01 01 30 01 6E 01 80 01 30 00")));
    EXPECT_EQ(Decoded::ok, decode_bytes(bytes("10 81 00 01 01 30 01 05 FF 01 7E 00 01 80 01 30")));
}

TEST(Frame, MalformedDatagrams) {
    const auto get = test::kSeedGet;
    auto cut = [&](std::size_t n) {
        return std::vector<std::uint8_t>(get.begin(), get.begin() + static_cast<std::ptrdiff_t>(n));
    };
    auto with = [&](std::size_t at, std::uint8_t b) {
        auto d = get;
        d[at] = b;
        return d;
    };
    auto longer = get;
    longer.push_back(0);
    const std::vector<std::vector<std::uint8_t>> malformed = {
        {},            // empty
        cut(11),       // no OPC
        with(0, 0x11), // EHD1
        with(1, 0x80),
        with(1, 0x83),                                         // EHD2
        bytes("10 81 00 01 05 FF 01 0E F0 01 62 00"),          // OPC 0
        bytes("10 81 00 01 05 FF 01 0E F0 01 62 01 80 02 30"), // PDC past the end
        bytes("10 81 00 01 05 FF 01 0E F0 01 62 01 80"),       // no PDC
        with(11, 13),                                          // OPC above the properties
        with(11, 255),
        cut(35),                                                  // last property cut
        longer,                                                   // bytes left over
        with(11, 11),                                             // ... as a smaller OPC leaves
        bytes("10 81 00 01 05 FF 01 01 30 01 6E 00 00"),          // OPCSet + OPCGet = 0
        bytes("10 81 00 01 05 FF 01 01 30 01 6E 01 80 01 30"),    // no OPCGet
        bytes("10 81 00 01 05 FF 01 01 30 01 6E 00 02 80 00"),    // OPCGet above its run
        bytes("10 81 00 01 05 FF 01 01 30 01 5E 00 01 80 00 00"), // left over after a SetGet
    };
    for (std::size_t i = 0; i < malformed.size(); ++i)
        EXPECT_EQ(Decoded::malformed, decode_bytes(malformed[i])) << "case " << i;
    for (std::size_t n = 0; n < get.size(); ++n)
        EXPECT_EQ(Decoded::malformed, decode_bytes(cut(n))) << n << " bytes";
}

TEST(Frame, FormatTwoIsWellFormedButUnsupported) {
    auto get = test::kSeedGet;
    get[1] = kFormat2;
    EXPECT_EQ(Decoded::format2, decode_bytes(get));
    EXPECT_EQ(Decoded::format2, decode_bytes(bytes("10 82 00 01 FF FF FF FF FF FF FF FF")));
    // Shorter than the 12 bytes every frame has: malformed, whatever EHD2 says.
    EXPECT_EQ(Decoded::malformed, decode_bytes(bytes("10 82 00 01 AA")));
}

TEST(Frame, AnyEsvDecodesButOnlySixAreRequests) {
    for (int esv = 0; esv < 256; ++esv) {
        auto d = test::kSeedGet;
        d[kEsvOffset] = static_cast<std::uint8_t>(esv);
        if (has_two_parts(static_cast<Esv>(esv)))
            continue;
        Frame f;
        ASSERT_EQ(Decoded::ok, decode(d, f)) << esv;
        const bool request =
            esv == 0x60 || esv == 0x61 || esv == 0x62 || esv == 0x63 || esv == 0x6E || esv == 0x74;
        EXPECT_EQ(request, is_request(f.esv)) << esv;
    }
}

TEST(Frame, EojAddressing) {
    EXPECT_TRUE(kAirConditioner.addresses(kAirConditioner));
    EXPECT_TRUE((Eoj{0x01, 0x30, 0x00}).addresses(kAirConditioner));
    EXPECT_FALSE((Eoj{0x01, 0x30, 0x02}).addresses(kAirConditioner));
    EXPECT_FALSE((Eoj{0x01, 0x31, 0x01}).addresses(kAirConditioner));
    EXPECT_TRUE((Eoj{0x0E, 0xF0, 0x00}).addresses(kNodeProfile));
}

TEST(FrameWriter, WritesExactBytes) {
    std::uint8_t buf[64];
    FrameWriter w(buf);
    w.header(0x1234, kController, kAirConditioner, Esv::setget);
    w.property(0xB3, bytes("19"));
    w.second_part();
    w.property(0x80, {});
    w.property(0xB3, {});
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(bytes("10 81 12 34 05 FF 01 01 30 01 6E 01 B3 01 19 02 80 00 B3 00"), vec(w.bytes()));
    set_tid(buf, 0xFFFE);
    EXPECT_EQ(bytes("FF FE"), vec(w.bytes().subspan(2, 2)));
}

TEST(FrameWriter, FailsRatherThanOverflow) {
    std::uint8_t buf[16];
    FrameWriter w(buf);
    w.header(1, kController, kNodeProfile, Esv::get);
    w.property(0x80, bytes("01 02"));
    EXPECT_TRUE(w.ok());
    w.property(0x81, {}); // 18 bytes > 16
    EXPECT_FALSE(w.ok());
    EXPECT_TRUE(w.bytes().empty());
    w.property(0x82, {}); // stays failed
    EXPECT_FALSE(w.ok());

    FrameWriter tiny(std::span<std::uint8_t>(buf, 11));
    tiny.header(1, kController, kNodeProfile, Esv::get);
    EXPECT_FALSE(tiny.ok());
}

TEST(FrameWriter, AtMost255PropertiesARun) {
    std::vector<std::uint8_t> buf(1024);
    FrameWriter w(buf);
    w.header(1, kController, kNodeProfile, Esv::get);
    for (int i = 0; i < 255; ++i)
        w.property(0x80, {});
    EXPECT_TRUE(w.ok());
    EXPECT_EQ(255, buf[11]);
    w.property(0x80, {});
    EXPECT_FALSE(w.ok());
}

} // namespace
} // namespace echonet
