// The Connector against the real server (a Listener on a free port in this process).
#include "connector.hpp"
#include "server_fixture.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

namespace comm {
namespace {

using namespace comm::test;

Bytes copy(std::span<const std::uint8_t> s) {
    return {s.begin(), s.end()};
}

TEST(Connector, StreamsAndGetsEveryReplyThenTheEnd) {
    Server server;
    for (const SessionEnd how : {SessionEnd::end, SessionEnd::quit, SessionEnd::eof}) {
        Connector c("127.0.0.1", server.port());
        for (std::size_t m = 0; m < 500; ++m)
            ASSERT_TRUE(c.post(kDefault, body_of(m * 7, static_cast<std::uint8_t>(m))));
        c.close(how);
        for (std::size_t m = 0; m < 500; ++m) {
            const auto reply = c.get();
            ASSERT_TRUE(reply) << c.error();
            EXPECT_EQ(kReply, reply->type);
            ASSERT_EQ(body_of(m * 7, static_cast<std::uint8_t>(m)), copy(reply->body)) << m;
        }
        EXPECT_FALSE(c.get());
        EXPECT_EQ("", c.error());
    }
}

TEST(Connector, RoundTripsOneAtATime) {
    Server server;
    Connector c("localhost", server.port());
    for (std::uint8_t m = 0; m < 50; ++m) {
        ASSERT_TRUE(c.post(kText, body_of(1024, m)));
        const auto reply = c.get();
        ASSERT_TRUE(reply);
        EXPECT_EQ(body_of(1024, m), copy(reply->body));
    }
}

TEST(Connector, LargeMessagesBothWays) {
    Server server;
    Connector c("127.0.0.1", server.port());
    const Bytes big = body_of(16 << 20, 3);
    ASSERT_TRUE(c.post(kBinary, big));
    c.close(SessionEnd::end);
    const auto reply = c.get();
    ASSERT_TRUE(reply) << c.error();
    EXPECT_TRUE(copy(reply->body) == big);
    EXPECT_FALSE(c.get());
}

TEST(Connector, ARefusedConnectionIsAConnectError) {
    std::uint16_t port;
    {
        Server server;
        port = server.port();
    } // stopped: nothing listens there now
    EXPECT_THROW(Connector("127.0.0.1", port), ConnectError);
    EXPECT_THROW(Connector("not-an-address", port), ConnectError);
}

TEST(Connector, ALengthAboveTheServersCapEndsTheSession) {
    ServerConfig config;
    config.limits.max_body = 100;
    Server server(config);
    Connector c("127.0.0.1", server.port());
    ASSERT_TRUE(c.post(kDefault, body_of(100)));
    ASSERT_TRUE(c.post(kDefault, body_of(101)));
    const auto reply = c.get();
    ASSERT_TRUE(reply);
    EXPECT_EQ(body_of(100), copy(reply->body));
    EXPECT_FALSE(c.get()); // the server closed the connection
}

} // namespace
} // namespace comm
