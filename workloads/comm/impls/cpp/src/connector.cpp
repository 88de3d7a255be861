#include "connector.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

namespace comm {

namespace {

std::string os_message(const char *what) {
    return std::string(what) + ": " + std::strerror(errno);
}

} // namespace

Connector::Connector(const std::string &host, std::uint16_t port, ConnectorOptions options)
    : options_(options), send_queue_(options.send_queue_bytes),
      receive_queue_(options.receive_queue_bytes) {
    const std::string where = host + ":" + std::to_string(port);
    in_addr ip{};
    if (::inet_pton(AF_INET, host == "localhost" ? "127.0.0.1" : host.c_str(), &ip) != 1)
        throw ConnectError("bad host '" + host + "' (an IPv4 address is expected)");
    socket_.reset(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!socket_)
        throw ConnectError(os_message("socket"));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(port);
    addr.sin_addr = ip;
    while (::connect(socket_.get(), reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0) {
        if (errno != EINTR)
            throw ConnectError(os_message(("connect " + where).c_str()));
    }
    // The send thread already batches frames: Nagle would only hold the last one back.
    const int one = 1;
    ::setsockopt(socket_.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    sender_ = std::thread([this] { send_loop(); });
    try {
        receiver_ = std::thread([this] { receive_loop(); });
    } catch (...) {
        abort();
        sender_.join();
        throw;
    }
}

Connector::~Connector() {
    if (!closed_)
        abort();
    if (sender_.joinable())
        sender_.join();
    receive_queue_.abort(); // replies nobody will take any more are dropped
    if (receiver_.joinable())
        receiver_.join();
}

bool Connector::post(std::uint8_t type, std::span<const std::uint8_t> body) {
    return send_queue_.push_frame(type, body);
}

std::optional<MessageView> Connector::get() {
    if (batch_pos_ == batch_.size()) {
        batch_pos_ = 0;
        if (!receive_queue_.take(batch_)) {
            batch_.clear();
            return std::nullopt;
        }
    }
    // The receive thread queues complete frames only.
    const std::uint8_t *frame = batch_.data() + batch_pos_;
    const Header h = decode_header(frame);
    const auto length = static_cast<std::size_t>(h.length);
    batch_pos_ += kHeaderSize + length;
    return MessageView{h.type, {frame + kHeaderSize, length}};
}

void Connector::close(SessionEnd how) {
    if (closed_)
        return;
    closed_ = true;
    end_ = how; // before the queue closes: the send thread looks once it is drained
    if (how != SessionEnd::eof)
        send_queue_.push_frame(how == SessionEnd::end ? kEnd : kQuit, {});
    send_queue_.close();
}

void Connector::abort() {
    ::shutdown(socket_.get(), SHUT_RDWR); // wakes a thread blocked in send or recv
    send_queue_.abort();
    receive_queue_.abort();
}

std::string Connector::error() const {
    std::lock_guard lock(error_mutex_);
    return error_;
}

void Connector::fail(const std::string &why) {
    {
        std::lock_guard lock(error_mutex_);
        if (error_.empty())
            error_ = why;
    }
    abort();
}

void Connector::send_loop() {
    ByteBuffer batch;
    while (send_queue_.take(batch)) {
        for (std::size_t sent = 0; sent < batch.size();) {
            const ssize_t n =
                ::send(socket_.get(), batch.data() + sent, batch.size() - sent, MSG_NOSIGNAL);
            if (n < 0) {
                if (errno == EINTR)
                    continue;
                fail(os_message("send"));
                return;
            }
            sent += static_cast<std::size_t>(n);
        }
    }
    // Closed and drained (or aborted, where this changes nothing).
    if (end_ == SessionEnd::eof)
        ::shutdown(socket_.get(), SHUT_WR);
}

void Connector::receive_loop() {
    ByteBuffer fill(options_.read_size);
    while (receive_some(fill)) {
    }
}

// One read, and the complete frames it finishes handed to the receive queue. false when the
// session is over (ended, failed or aborted).
bool Connector::receive_some(ByteBuffer &fill) {
    const ssize_t n = ::recv(socket_.get(), fill.tail(), fill.room(), 0);
    if (n < 0) {
        if (errno == EINTR)
            return true;
        fail(os_message("receive"));
        return false;
    }
    if (n == 0) {
        if (!fill.empty()) {
            fail("the server closed the connection inside a frame");
            return false;
        }
        receive_queue_.close(); // EOF between frames: the session is over
        return false;
    }
    fill.commit(static_cast<std::size_t>(n));
    const FrameScan scan = scan_frames(fill.bytes(), options_.max_body);
    if (!receive_queue_.push_prefix(fill, scan.whole))
        return false; // aborted
    switch (scan.stop) {
    case FrameScan::Stop::session_end:
        receive_queue_.close(); // the server's END: whatever follows it is not read
        return false;
    case FrameScan::Stop::too_long:
        fail("a reply announces a body of " + std::to_string(scan.next.length) +
             " bytes, above the cap of " + std::to_string(options_.max_body));
        return false;
    case FrameScan::Stop::need_more:
        break;
    }
    // The incomplete frame now starts the buffer: make sure it fits, and there is room to read.
    std::size_t needed = fill.size() + 1;
    if (scan.has_next)
        needed = std::max(needed, kHeaderSize + static_cast<std::size_t>(scan.next.length));
    fill.reserve(std::max(needed, options_.read_size));
    return true;
}

} // namespace comm
