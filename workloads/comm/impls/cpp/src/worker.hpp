// One thread of the server's pool: an epoll loop over the connections the listener hands it.
// Every connection of every worker is served at once: a handler runs only while its socket
// is ready, never for a whole session. The worker's read buffer is lent to each handler in
// turn, so memory grows with the pool, not with the number of connections.
#pragma once

#include "byte_buffer.hpp"
#include "fd.hpp"
#include "handler.hpp"

#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace comm {

class Worker {
  public:
    explicit Worker(SessionLimits limits); // the epoll set and its wake-up eventfd
    ~Worker();                             // stops the loop, joins it, closes its connections
    Worker(const Worker &) = delete;
    Worker &operator=(const Worker &) = delete;

    void start();
    // Hands a connected, non-blocking socket to this worker (from any thread).
    void adopt(Fd socket);
    // Asks the loop to end (from any thread); the destructor waits for it.
    void stop();

  private:
    struct Connection {
        Connection(Fd socket, SessionLimits limits) : session(std::move(socket), limits) {}
        Session session;
        std::size_t slot = 0;     // index in connections_
        std::uint32_t events = 0; // what epoll waits for on it
    };

    void run();
    bool take_handed_over(); // false once asked to stop
    void serve(Connection &c, std::uint32_t ready);
    void wait_for(Connection &c, Interest next);
    void drop(Connection &c);

    SessionLimits limits_;
    Fd epoll_;
    Fd wake_; // eventfd: a connection was handed over, or stop
    std::mutex mutex_;
    std::vector<Fd> handed_over_; // guarded by mutex_
    bool stopping_ = false;       // guarded by mutex_
    // The loop's own: every live connection, removed by swapping with the last.
    std::vector<std::unique_ptr<Connection>> connections_;
    ByteBuffer read_buffer_; // lent to Session::on_readable
    std::thread thread_;
};

} // namespace comm
