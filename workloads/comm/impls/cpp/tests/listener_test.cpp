// The listener and its pool: every client served at once, a clean stop with sessions open.
#include "connector.hpp"
#include "options.hpp"
#include "server_fixture.hpp"
#include "test_support.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <vector>

namespace comm {
namespace {

using namespace comm::test;

TEST(Listener, ServesEveryClientAtOnceWithASmallPool) {
    ServerConfig config;
    config.pool = 2;
    Server server(config);
    // Twelve open sessions, each waiting for its reply before ending: a pool that bound a
    // thread to a session would answer two of them and stall.
    std::vector<std::unique_ptr<Connector>> clients;
    for (int i = 0; i < 12; ++i)
        clients.push_back(std::make_unique<Connector>("127.0.0.1", server.port()));
    for (std::size_t i = 0; i < clients.size(); ++i)
        ASSERT_TRUE(clients[i]->post(kDefault, body_of(10, static_cast<std::uint8_t>(i))));
    for (std::size_t i = 0; i < clients.size(); ++i) {
        const auto reply = clients[i]->get();
        ASSERT_TRUE(reply);
        EXPECT_EQ(body_of(10, static_cast<std::uint8_t>(i)),
                  Bytes(reply->body.begin(), reply->body.end()));
    }
}

TEST(Listener, ListensOnlyOnItsHost) {
    // All of 127/8 is loopback on Linux: a server on 127.0.0.2 answers there and nowhere else.
    ServerConfig config;
    config.host = *parse_ipv4("127.0.0.2");
    config.pool = 1;
    Server server(config);
    Connector there("127.0.0.2", server.port());
    ASSERT_TRUE(there.post(kDefault, body_of(10)));
    const auto reply = there.get();
    ASSERT_TRUE(reply);
    EXPECT_EQ(body_of(10), Bytes(reply->body.begin(), reply->body.end()));
    EXPECT_THROW(Connector("127.0.0.1", server.port()), ConnectError);
}

TEST(Listener, StopsWithSessionsOpen) {
    auto server = std::make_unique<Server>();
    Connector c("127.0.0.1", server->port());
    ASSERT_TRUE(c.post(kDefault, body_of(10)));
    ASSERT_TRUE(c.get());
    server.reset();        // request_stop + join: returns with the session still open
    EXPECT_FALSE(c.get()); // and the session sees the connection close
}

} // namespace
} // namespace comm
