// The real server (a Listener with its workers) on a free loopback port, in this process.
#pragma once

#include "listener.hpp"

#include <cstdint>
#include <thread>

namespace comm::test {

class Server {
  public:
    explicit Server(ServerConfig config = {})
        : listener_(config), thread_([this] { listener_.run(); }) {}
    ~Server() {
        listener_.request_stop();
        thread_.join();
    }
    std::uint16_t port() const {
        return listener_.port();
    }

  private:
    Listener listener_;
    std::thread thread_;
};

} // namespace comm::test
