// Helpers for the tests: frames as byte vectors, and a socket pair to drive a Session through.
#pragma once

#include "byte_buffer.hpp"
#include "fd.hpp"
#include "frame.hpp"
#include "handler.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace comm::test {

using Bytes = std::vector<std::uint8_t>;

inline Bytes frame(std::uint8_t type, const Bytes &body = {}) {
    Bytes out(kHeaderSize + body.size());
    encode_header({type, body.size()}, out.data());
    std::copy(body.begin(), body.end(), out.begin() + kHeaderSize);
    return out;
}

inline Bytes header(std::uint8_t type, std::uint64_t length) {
    Bytes out(kHeaderSize);
    encode_header({type, length}, out.data());
    return out;
}

inline Bytes operator+(Bytes a, const Bytes &b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

inline Bytes body_of(std::size_t n, std::uint8_t seed = 0) {
    Bytes b(n);
    for (std::size_t i = 0; i < n; ++i)
        b[i] = static_cast<std::uint8_t>((seed + i) % 251);
    return b;
}

// A connected AF_UNIX stream pair: the server end (non-blocking) goes to a Session, the test
// plays the client on the other end.
class Wire {
  public:
    Wire() {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
            throw std::runtime_error("socketpair");
        server_.reset(sv[0]);
        peer_.reset(sv[1]);
        ::fcntl(server_.get(), F_SETFL, ::fcntl(server_.get(), F_GETFL) | O_NONBLOCK);
    }
    Fd take_server() {
        return std::move(server_);
    }

    // Blocking: everything goes.
    void send(const Bytes &bytes) const {
        for (std::size_t off = 0; off < bytes.size();) {
            const ssize_t n =
                ::send(peer_.get(), bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
            if (n < 0)
                throw std::runtime_error("send");
            off += static_cast<std::size_t>(n);
        }
    }
    void shut_write() const {
        ::shutdown(peer_.get(), SHUT_WR);
    }

    // Whatever has arrived, without waiting; `eof` turns true once the server end has closed
    // or half-closed.
    Bytes receive() {
        Bytes out;
        std::uint8_t buf[65536];
        for (;;) {
            const ssize_t n = ::recv(peer_.get(), buf, sizeof buf, MSG_DONTWAIT);
            if (n == 0)
                eof = true;
            if (n <= 0)
                return out;
            out.insert(out.end(), buf, buf + n);
        }
    }

    bool eof = false;

  private:
    Fd server_, peer_;
};

// One turn of an event loop: if the socket is ready for what the session waits for, call the
// session once (lending it `scratch` as the worker lends its read buffer). false when nothing
// was ready (or the session is over).
inline bool step(Session &s, Interest &want, ByteBuffer &scratch) {
    if (want == Interest::close)
        return false;
    const bool in = want == Interest::read || want == Interest::read_write;
    const bool out = want == Interest::write || want == Interest::read_write;
    pollfd p{s.fd(), static_cast<short>((in ? POLLIN : 0) | (out ? POLLOUT : 0)), 0};
    if (::poll(&p, 1, 0) <= 0)
        return false;
    if (out && (p.revents & (POLLOUT | POLLERR | POLLHUP)))
        want = s.on_writable();
    else
        want = s.on_readable(scratch);
    return true;
}

// Runs the session until nothing it waits for is ready.
inline Interest run(Session &s, ByteBuffer &scratch, Interest want = Interest::read) {
    while (step(s, want, scratch)) {
    }
    return want;
}

} // namespace comm::test
