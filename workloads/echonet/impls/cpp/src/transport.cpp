#include "transport.hpp"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace echonet {

namespace {

// Room for bursts from many controllers (and floods) before the kernel drops; the kernel caps
// it at net.core.rmem_max, which is fine.
constexpr int kReceiveBuffer = 4 << 20;

template <typename T> bool set_option(int fd, int level, int name, const T &value) noexcept {
    return ::setsockopt(fd, level, name, &value, sizeof value) == 0;
}

sockaddr_in endpoint(in_addr addr, std::uint16_t port) noexcept {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_addr = addr;
    sa.sin_port = htons(port);
    return sa;
}

} // namespace

std::string SocketError::message() const {
    return step + ": " + std::strerror(error);
}

std::optional<UdpSocket> UdpSocket::open(const SocketConfig &config, SocketError &error,
                                         std::optional<SocketWarning> &warning) {
    const auto fail = [&](std::string step) -> std::optional<UdpSocket> {
        error = {std::move(step), errno};
        return std::nullopt;
    };
    Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
    if (!fd)
        return fail("socket");
    set_option(fd.get(), SOL_SOCKET, SO_RCVBUF, kReceiveBuffer); // best effort
    // Multicasts leave by --ifaddr's interface only, one hop, and come back to this host's
    // other sockets. Without the interface set they would follow the default route onto a
    // real network, so a failure here is fatal.
    if (config.ifaddr.s_addr != htonl(INADDR_ANY) &&
        !set_option(fd.get(), IPPROTO_IP, IP_MULTICAST_IF, config.ifaddr))
        return fail("IP_MULTICAST_IF " + to_string(config.ifaddr));
    if (!set_option(fd.get(), IPPROTO_IP, IP_MULTICAST_TTL, 1) ||
        !set_option(fd.get(), IPPROTO_IP, IP_MULTICAST_LOOP, 1))
        return fail("IP_MULTICAST_TTL/LOOP");
    // SPEC §2: a wildcard bind shares port 3610 with other stacks on the host (they must set
    // it too); a unicast bind does not, so a second program on the same address is refused.
    if (config.bind.s_addr == htonl(INADDR_ANY) &&
        !set_option(fd.get(), SOL_SOCKET, SO_REUSEADDR, 1))
        return fail("SO_REUSEADDR");
    const sockaddr_in local = endpoint(config.bind, config.port);
    if (::bind(fd.get(), reinterpret_cast<const sockaddr *>(&local), sizeof local) != 0)
        return fail("bind " + to_string(config.bind) + ":" + std::to_string(config.port));
    if (config.join_group && config.bind.s_addr == htonl(INADDR_ANY)) {
        ip_mreq join{};
        join.imr_multiaddr.s_addr = htonl(kMulticastGroup);
        join.imr_interface = config.ifaddr;
        if (!set_option(fd.get(), IPPROTO_IP, IP_ADD_MEMBERSHIP, join))
            warning = SocketWarning{"cannot join 224.0.23.0 on " + to_string(config.ifaddr) + ": " +
                                    std::strerror(errno) + " (unicast only)"};
    }
    // The port bound (port 0 asks for any): requests go to this port of their nodes.
    sockaddr_in bound{};
    socklen_t len = sizeof bound;
    if (::getsockname(fd.get(), reinterpret_cast<sockaddr *>(&bound), &len) != 0)
        return fail("getsockname");
    return UdpSocket(std::move(fd), ntohs(bound.sin_port));
}

ssize_t UdpSocket::receive(std::span<std::uint8_t> buf, sockaddr_in &from) noexcept {
    socklen_t len = sizeof from;
    // MSG_TRUNC: the datagram's real size, so a truncated read can be told apart.
    return ::recvfrom(fd_.get(), buf.data(), buf.size(), MSG_TRUNC,
                      reinterpret_cast<sockaddr *>(&from), &len);
}

bool UdpSocket::send_to(Bytes datagram, const sockaddr_in &to) noexcept {
    for (;;) {
        const ssize_t n = ::sendto(fd_.get(), datagram.data(), datagram.size(), 0,
                                   reinterpret_cast<const sockaddr *>(&to), sizeof to);
        if (n >= 0)
            return true;
        if (errno != EINTR)
            return false;
    }
}

bool UdpSocket::send_to(Bytes datagram, in_addr host) noexcept {
    return send_to(datagram, endpoint(host, port_));
}

bool UdpSocket::send_multicast(Bytes datagram) noexcept {
    in_addr group{};
    group.s_addr = htonl(kMulticastGroup);
    return send_to(datagram, group);
}

bool UdpSocket::set_receive_timeout(std::chrono::microseconds timeout) noexcept {
    const auto us = std::max<std::int64_t>(timeout.count(), 1);
    timeval tv{};
    tv.tv_sec = static_cast<time_t>(us / 1000000);
    tv.tv_usec = static_cast<suseconds_t>(us % 1000000);
    return set_option(fd_.get(), SOL_SOCKET, SO_RCVTIMEO, tv);
}

DatagramBatch::DatagramBatch(std::size_t max_reply)
    : max_reply_(max_reply),
      // Not zeroed: pages are touched only as datagrams and replies land in them, so the
      // resident size follows the traffic, not the capacity.
      in_(std::make_unique_for_overwrite<std::uint8_t[]>(kCapacity * kMaxDatagram)),
      out_(std::make_unique_for_overwrite<std::uint8_t[]>(2 * max_reply)),
      out_capacity_(2 * max_reply) {
    for (std::size_t i = 0; i < kCapacity; ++i) {
        in_iov_[i] = {in_.get() + i * kMaxDatagram, kMaxDatagram};
        in_msgs_[i].msg_hdr.msg_iov = &in_iov_[i];
        in_msgs_[i].msg_hdr.msg_iovlen = 1;
        out_msgs_[i].msg_hdr.msg_iov = &out_iov_[i];
        out_msgs_[i].msg_hdr.msg_iovlen = 1;
        out_msgs_[i].msg_hdr.msg_namelen = sizeof(sockaddr_in);
    }
}

int DatagramBatch::receive(const UdpSocket &socket) noexcept {
    for (std::size_t i = 0; i < kCapacity; ++i) {
        in_msgs_[i].msg_hdr.msg_name = &sources_[i];
        in_msgs_[i].msg_hdr.msg_namelen = sizeof sources_[i];
        in_msgs_[i].msg_hdr.msg_flags = 0;
    }
    return ::recvmmsg(socket.fd(), in_msgs_.data(), kCapacity, MSG_WAITFORONE, nullptr);
}

std::optional<Bytes> DatagramBatch::datagram(std::size_t i) const noexcept {
    const msghdr &h = in_msgs_[i].msg_hdr;
    if (h.msg_flags & MSG_TRUNC)
        return std::nullopt;
    return Bytes(static_cast<const std::uint8_t *>(in_iov_[i].iov_base), in_msgs_[i].msg_len);
}

bool DatagramBatch::queue_reply(std::size_t i, Bytes reply) noexcept {
    if (queued_ == kCapacity || reply.size() > max_reply_ ||
        out_capacity_ - out_used_ < reply.size())
        return false;
    std::uint8_t *at = out_.get() + out_used_;
    std::memcpy(at, reply.data(), reply.size());
    out_used_ += reply.size();
    out_iov_[queued_] = {at, reply.size()};
    out_msgs_[queued_].msg_hdr.msg_name = &sources_[i];
    ++queued_;
    return true;
}

DatagramBatch::Sent DatagramBatch::flush(const UdpSocket &socket) noexcept {
    Sent result;
    std::size_t done = 0;
    while (done < queued_) {
        const int n = ::sendmmsg(socket.fd(), out_msgs_.data() + done,
                                 static_cast<unsigned>(queued_ - done), 0);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            result.sent += static_cast<std::uint64_t>(n);
        } else if (n == 0 || errno != EINTR) {
            ++done; // sendmmsg stops at the first message the kernel refuses: skip it
            ++result.failed;
        }
    }
    queued_ = 0;
    out_used_ = 0;
    return result;
}

std::size_t encode_start_inf(std::span<std::uint8_t> out, Bytes instance_list,
                             std::uint16_t tid) noexcept {
    FrameWriter w(out);
    w.header(tid, kNodeProfile, kNodeProfile, Esv::inf);
    w.property(0xD5, instance_list);
    return w.ok() ? w.size() : 0;
}

bool send_start_inf(UdpSocket &socket, Bytes instance_list, std::uint16_t tid) noexcept {
    std::uint8_t buf[kHeaderSize + 2 + 255];
    const std::size_t size = encode_start_inf(buf, instance_list, tid);
    return size > 0 && socket.send_multicast({buf, size});
}

std::string to_string(in_addr addr) {
    char text[INET_ADDRSTRLEN];
    return ::inet_ntop(AF_INET, &addr, text, sizeof text) ? text : "?";
}

std::array<std::uint8_t, 4> address_bytes(in_addr addr) noexcept {
    std::array<std::uint8_t, 4> out;
    std::memcpy(out.data(), &addr.s_addr, 4); // s_addr is in network order already
    return out;
}

} // namespace echonet
