// The UDP socket: binding (and its errors), sending and receiving, the receive timeout and the
// start INF's bytes. Loopback, ephemeral ports.
#include "test_support.hpp"
#include "transport.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <optional>

namespace echonet {
namespace {

in_addr ip(const char *text) {
    in_addr a{};
    inet_pton(AF_INET, text, &a);
    return a;
}

std::optional<UdpSocket> open_on(const char *addr, std::uint16_t port, SocketError &error) {
    std::optional<SocketWarning> warning;
    SocketConfig c;
    c.bind = ip(addr);
    c.ifaddr = ip(addr);
    c.port = port;
    auto s = UdpSocket::open(c, error, warning);
    EXPECT_FALSE(warning.has_value()); // bound to a unicast address: no group to join
    return s;
}

std::uint16_t local_port(const UdpSocket &s) {
    sockaddr_in sa{};
    socklen_t len = sizeof sa;
    getsockname(s.fd(), reinterpret_cast<sockaddr *>(&sa), &len);
    return ntohs(sa.sin_port);
}

TEST(Transport, SendsAndReceivesWhole) {
    SocketError error;
    auto a = open_on("127.0.0.1", 0, error);
    ASSERT_TRUE(a) << error.message();
    auto b = open_on("127.0.0.1", 0, error);
    ASSERT_TRUE(b) << error.message();
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr = ip("127.0.0.1");
    to.sin_port = htons(local_port(*b));
    ASSERT_TRUE(a->send_to(test::kSeedGet, to));
    std::vector<std::uint8_t> buf(kMaxDatagram);
    sockaddr_in from{};
    ASSERT_EQ(static_cast<ssize_t>(test::kSeedGet.size()), b->receive(buf, from));
    EXPECT_EQ(test::kSeedGet, std::vector<std::uint8_t>(buf.begin(), buf.begin() + 36));
    EXPECT_EQ(local_port(*a), ntohs(from.sin_port));

    // A datagram larger than the buffer reports its real size.
    ASSERT_TRUE(a->send_to(test::kSeedGet, to));
    EXPECT_EQ(36, b->receive(std::span(buf).first(10), from));
}

TEST(Transport, AnAddressInUseIsAnError) {
    SocketError error;
    auto a = open_on("127.0.0.1", 0, error);
    ASSERT_TRUE(a);
    auto b = open_on("127.0.0.1", local_port(*a), error);
    EXPECT_FALSE(b);
    EXPECT_EQ(EADDRINUSE, error.error);
    EXPECT_NE(std::string::npos, error.message().find("bind 127.0.0.1:"));
}

TEST(Transport, AnAddressNotOfThisHostIsAnError) {
    SocketError error;
    EXPECT_FALSE(open_on("192.0.2.1", 0, error)); // TEST-NET-1
    EXPECT_NE(0, error.error);
}

TEST(Transport, ReceiveTimesOut) {
    SocketError error;
    auto a = open_on("127.0.0.1", 0, error);
    ASSERT_TRUE(a);
    ASSERT_TRUE(a->set_receive_timeout(std::chrono::milliseconds(20)));
    std::vector<std::uint8_t> buf(64);
    sockaddr_in from{};
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(-1, a->receive(buf, from));
    EXPECT_TRUE(errno == EAGAIN || errno == EWOULDBLOCK);
    EXPECT_GE(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(15));
}

TEST(Transport, StartInfBytes) {
    std::uint8_t buf[64];
    const std::uint8_t instances[] = {0x01, 0x01, 0x30, 0x01};
    const std::size_t n = encode_start_inf(buf, instances, 0x0001);
    EXPECT_EQ(test::bytes("10 81 00 01 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01"),
              std::vector<std::uint8_t>(buf, buf + n));
}

TEST(DatagramBatch, ReadsWhatIsQueuedAndRepliesToEachSender) {
    SocketError error;
    auto node = open_on("127.0.0.1", 0, error);
    auto a = open_on("127.0.0.1", 0, error);
    auto b = open_on("127.0.0.1", 0, error);
    ASSERT_TRUE(node && a && b);
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_addr = ip("127.0.0.1");
    to.sin_port = htons(local_port(*node));
    const std::vector<std::uint8_t> largest(65507, 0xAB); // the largest UDP payload on IPv4
    ASSERT_TRUE(a->send_to(test::kSeedGet, to));
    ASSERT_TRUE(b->send_to(largest, to));
    ASSERT_TRUE(a->send_to({}, to));

    DatagramBatch batch(1024);
    ASSERT_EQ(3, batch.receive(*node));
    EXPECT_EQ(test::kSeedGet, test::vec(*batch.datagram(0)));
    EXPECT_EQ(largest, test::vec(*batch.datagram(1))); // whole, not truncated
    EXPECT_TRUE(batch.datagram(2)->empty());

    EXPECT_TRUE(batch.queue_reply(1, test::bytes("01 02")));
    EXPECT_TRUE(batch.queue_reply(0, test::bytes("03")));
    EXPECT_FALSE(batch.queue_reply(0, std::vector<std::uint8_t>(1025))); // above max_reply
    const auto sent = batch.flush(*node);
    EXPECT_EQ(2u, sent.sent);
    EXPECT_EQ(0u, sent.failed);

    std::vector<std::uint8_t> buf(16);
    sockaddr_in from{};
    ASSERT_EQ(2, b->receive(buf, from));
    EXPECT_EQ(test::bytes("01 02"), std::vector<std::uint8_t>(buf.begin(), buf.begin() + 2));
    ASSERT_EQ(1, a->receive(buf, from));
    EXPECT_EQ(0x03, buf[0]);
}

TEST(Transport, AddressHelpers) {
    EXPECT_EQ("10.201.0.2", to_string(ip("10.201.0.2")));
    EXPECT_EQ((std::array<std::uint8_t, 4>{127, 0, 0, 1}), address_bytes(ip("127.0.0.1")));
}

} // namespace
} // namespace echonet
