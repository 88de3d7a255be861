// The server: one thread, one epoll loop, every client served from it.
//
// Why this design: the harness pins the server to one CPU, where threads would only add
// context switches and locking, and redis itself is the same shape (ae on epoll). Standalone
// Asio would add a scheduler, handler allocations and a completion-handler indirection per
// read and write on top of the same epoll_wait/read/write calls, for no gain on one core.
//
// Per event loop turn, each readable client gets one read of at most 16 KiB (as redis's
// PROTO_IOBUF_LEN), every complete request in it is executed, and the replies go out in one
// write. That bounds the work a client can get per turn, so one client pipelining 10,000
// requests does not starve the others; the rest of its requests wait in the kernel's socket
// buffer for the next turn.
//
// Buffers: reads land in one loop-wide buffer and replies are built in one loop-wide buffer.
// A client gets its own input buffer only while it has a partial request, and its own output
// buffer only while the socket does not take a whole batch of replies, so an idle connection
// costs a few hundred bytes and 1,000 connections cost no more memory than 50.
#pragma once

#include "byte_buffer.hpp"
#include "commands.hpp"
#include "protocol.hpp"
#include "store.hpp"

#include <netinet/in.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace redis {

// An owned file descriptor.
class UniqueFd {
  public:
    UniqueFd() = default;
    explicit UniqueFd(int fd) : fd_(fd) {}
    UniqueFd(const UniqueFd &) = delete;
    UniqueFd &operator=(const UniqueFd &) = delete;
    UniqueFd(UniqueFd &&other) noexcept : fd_(other.release()) {}
    UniqueFd &operator=(UniqueFd &&other) noexcept;
    ~UniqueFd();

    [[nodiscard]] int get() const {
        return fd_;
    }
    int release() {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }

  private:
    int fd_ = -1;
};

class Server {
  public:
    // Listens on host:port. Throws std::system_error.
    Server(in_addr host, int port);
    Server(const Server &) = delete;
    Server &operator=(const Server &) = delete;
    ~Server();

    // Serves until SIGTERM or SIGINT; then closes every connection and returns.
    void run();

  private:
    struct Client;

    void accept_clients();
    void on_readable(Client &c);
    void on_writable(Client &c);
    // Runs the complete requests at the start of `data`; returns how many bytes they used.
    std::size_t process(Client &c, std::string_view data, Reply &reply);
    // Sends what `reply` collected (and whatever the client still had pending).
    void flush(Client &c, ByteBuffer &staged);
    void set_want_write(Client &c, bool on);
    void close_client(Client &c);
    void cron();
    void refresh_clock();

    UniqueFd listen_fd_;
    UniqueFd epoll_fd_;
    UniqueFd signal_fd_;
    std::vector<std::unique_ptr<Client>> clients_; // by fd
    std::unique_ptr<char[]> read_buf_;
    ByteBuffer shared_out_;
    std::string scratch_;
    Store store_;
    ServerStats stats_;
    Rng rng_;
    std::uint64_t next_client_id_ = 1;
    std::int64_t now_ms_ = 0;       // wall clock, Unix ms (expire times are absolute)
    std::int64_t next_cron_ms_ = 0; // monotonic
    bool stopping_ = false;
};

} // namespace redis
