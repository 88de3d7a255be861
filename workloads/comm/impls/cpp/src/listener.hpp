// The server's listener: accepts connections on host:port and deals them round-robin to a pool
// of workers (one epoll loop each), until asked to stop by a signal or request_stop().
#pragma once

#include "fd.hpp"
#include "handler.hpp"
#include "worker.hpp"

#include <netinet/in.h>
#include <signal.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace comm {

struct ServerConfig {
    in_addr host{htonl(INADDR_LOOPBACK)}; // the one address it listens on
    std::uint16_t port = 0;               // 0: any free port (tests), see Listener::port()
    unsigned pool = 8;                    // worker threads
    SessionLimits limits;
};

class Listener {
  public:
    // Binds and listens (throws std::system_error); the workers start in run().
    explicit Listener(const ServerConfig &config);
    Listener(const Listener &) = delete;
    Listener &operator=(const Listener &) = delete;
    ~Listener();

    std::uint16_t port() const noexcept {
        return port_;
    }
    // Also stop on these signals, which the caller has blocked in every thread.
    void stop_on(const sigset_t &signals);
    // Ends run() (from any thread, or before run()).
    void request_stop();
    // Accepts until stopped, then stops the workers and closes every connection.
    void run();

  private:
    void accept_ready();
    void arm_listener(bool on);

    ServerConfig config_;
    Fd listen_;
    Fd epoll_;
    Fd stop_;    // eventfd for request_stop()
    Fd signals_; // signalfd, if stop_on() was called
    std::uint16_t port_ = 0;
    std::vector<std::unique_ptr<Worker>> workers_;
    std::size_t next_worker_ = 0;
    bool paused_ = false; // out of descriptors: accepting waits a moment
};

} // namespace comm
