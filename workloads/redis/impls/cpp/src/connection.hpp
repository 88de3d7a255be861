// One client of the server: its socket, session, parser, and the buffers it holds only while a
// request is partial or the socket is full. Shared by server.cpp (accept, cron) and
// connection.cpp (read, run, reply); nothing else sees it.
#pragma once

#include "server.hpp"

#include <cstddef>

namespace redis {

inline constexpr std::size_t kReadChunk = 16 * 1024;
// A client's own input buffer may read this much at once when a large argument is pending.
inline constexpr std::size_t kMaxReadChunk = 1024 * 1024;
// A client input buffer bigger than this is freed once empty (a one-off large request).
inline constexpr std::size_t kKeepInputCapacity = 64 * 1024;
// The loop-wide reply buffer shrinks back after a turn that needed more than this.
inline constexpr std::size_t kKeepOutputCapacity = 1024 * 1024;

struct Server::Client {
    UniqueFd fd;
    Session session;
    RequestParser parser;
    ByteBuffer in;  // only while a request is partial (or input waits for the next turn)
    ByteBuffer out; // only while the socket did not take everything
    bool want_write = false;
    bool closing = false;  // reply what is pending, then close (QUIT, protocol error)
    bool overflow = false; // replies passed the output limit: close without replying
};

} // namespace redis
