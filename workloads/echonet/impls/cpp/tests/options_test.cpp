// Command-line values (SPEC §7, §8): numbers, addresses, hex, EOJs and the network options.
#include "options.hpp"

#include <arpa/inet.h>

#include <gtest/gtest.h>

namespace echonet {
namespace {

TEST(Options, NumbersWithinBounds) {
    EXPECT_EQ(3610u, parse_number("3610", 1, 65535));
    EXPECT_EQ(65535u, parse_number("65535", 1, 65535));
    for (const char *bad : {"", "0", "65536", "-1", "+1", " 1", "1 ", "0x10", "1e3"})
        EXPECT_FALSE(parse_number(bad, 1, 65535).has_value()) << '"' << bad << '"';
}

TEST(Options, Ipv4DottedQuadsOnly) {
    EXPECT_EQ(htonl(0x7F000001), parse_ipv4("127.0.0.1")->s_addr);
    EXPECT_EQ(0u, parse_ipv4("0.0.0.0")->s_addr);
    for (const char *bad : {"", "127.1", "256.0.0.1", "1.2.3.4.5", "::1", "localhost", "1.2.3.4 "})
        EXPECT_FALSE(parse_ipv4(bad).has_value()) << '"' << bad << '"';
}

TEST(Options, HexInEitherCase) {
    EXPECT_EQ((std::vector<std::uint8_t>{0x0E, 0xF0, 0xab}), parse_hex("0ef0AB"));
    EXPECT_EQ(std::vector<std::uint8_t>{}, parse_hex(""));
    EXPECT_FALSE(parse_hex("0").has_value());
    EXPECT_FALSE(parse_hex("0g").has_value());
}

TEST(Options, Eojs) {
    EXPECT_EQ(kNodeProfile, parse_eoj("0ef001"));
    EXPECT_EQ(kAirConditioner, parse_eoj("013001"));
    EXPECT_EQ((Eoj{0x0E, 0xF0, 0x00}), parse_eoj("0EF000"));
    for (const char *bad : {"", "0ef0", "0ef0011", "0ef00x"})
        EXPECT_FALSE(parse_eoj(bad).has_value()) << bad;
}

TEST(Options, NetworkOptionsDefaultsAndIfaddr) {
    NetworkOptions net;
    SocketConfig c = net.socket_config();
    EXPECT_EQ(0u, c.bind.s_addr);
    EXPECT_EQ(0u, c.ifaddr.s_addr);
    EXPECT_EQ(3610, c.port);
    EXPECT_TRUE(net.take("--bind", "127.0.20.1"));
    EXPECT_EQ(htonl(0x7F001401), net.socket_config().ifaddr.s_addr); // --ifaddr follows --bind
    EXPECT_TRUE(net.take("--ifaddr", "10.0.0.1"));
    EXPECT_TRUE(net.take("--port", "4000"));
    c = net.socket_config();
    EXPECT_EQ(htonl(0x7F001401), c.bind.s_addr);
    EXPECT_EQ(htonl(0x0A000001), c.ifaddr.s_addr);
    EXPECT_EQ(4000, c.port);
    EXPECT_FALSE(net.take("--retries", "3"));
    EXPECT_THROW(net.take("--port", "0"), UsageError);
    EXPECT_THROW(net.take("--port", "65536"), UsageError);
    EXPECT_THROW(net.take("--bind", "example.org"), UsageError);
}

TEST(Options, ArgReaderSplitsOptionsAndOperands) {
    char p[] = "prog", b[] = "--bind", v[] = "1.2.3.4", g[] = "get", h[] = "--help", t[] = "--port";
    char *argv[] = {p, b, v, g, h, t};
    ArgReader r(6, argv);
    auto a = r.next();
    EXPECT_EQ("--bind", a->name);
    EXPECT_EQ("1.2.3.4", a->value);
    a = r.next();
    EXPECT_TRUE(a->name.empty());
    EXPECT_EQ("get", a->value);
    EXPECT_EQ("--help", r.next()->name);
    EXPECT_THROW(r.next(), UsageError); // --port without a value
}

} // namespace
} // namespace echonet
