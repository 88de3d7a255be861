// The UDP socket of a node or a controller (SPEC §2): bound to one address and port 3610,
// multicasting on the interface of --ifaddr with TTL 1, joined to 224.0.23.0 when bound to
// 0.0.0.0; the node's INF at start; single datagrams for the controller, batches for the node.
#pragma once

#include "fd.hpp"
#include "frame.hpp"

#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace echonet {

inline constexpr std::uint16_t kDefaultPort = 3610;
inline constexpr in_addr_t kMulticastGroup = 0xE0001700; // 224.0.23.0, host order

struct SocketConfig {
    in_addr bind{};   // INADDR_ANY: unicast and the multicast group
    in_addr ifaddr{}; // multicast interface and group join; INADDR_ANY: the kernel's choice
    std::uint16_t port = kDefaultPort;
    bool join_group = false; // a node bound to 0.0.0.0 joins 224.0.23.0; a controller does not
};

// Why a socket could not be opened: the step and the errno, e.g. "bind 127.0.0.1:3610".
struct SocketError {
    std::string step;
    int error = 0;
    std::string message() const;
};

// A warning that does not stop a node: the multicast group could not be joined.
struct SocketWarning {
    std::string text;
};

class UdpSocket {
  public:
    // Creates, configures and binds the socket, joined to the group when the config says so
    // and the socket is bound to 0.0.0.0 (only then can it receive multicast). A failed join
    // is not fatal (unicast still works); it is reported in `warning`.
    static std::optional<UdpSocket> open(const SocketConfig &config, SocketError &error,
                                         std::optional<SocketWarning> &warning);

    int fd() const noexcept {
        return fd_.get();
    }
    std::uint16_t port() const noexcept {
        return port_;
    }

    // Reads one datagram into `buf`. Returns its full size (greater than buf.size() when it
    // was truncated), or -1 with errno set.
    ssize_t receive(std::span<std::uint8_t> buf, sockaddr_in &from) noexcept;
    bool send_to(Bytes datagram, const sockaddr_in &to) noexcept;
    bool send_to(Bytes datagram, in_addr host) noexcept; // on this socket's port
    bool send_multicast(Bytes datagram) noexcept;        // to 224.0.23.0 on this socket's port
    // How long a blocking receive waits before failing with EAGAIN (SO_RCVTIMEO); zero or
    // less: a microsecond, as the kernel reads a zero timeout as "forever".
    bool set_receive_timeout(std::chrono::microseconds timeout) noexcept;

  private:
    UdpSocket(Fd fd, std::uint16_t port) noexcept : fd_(std::move(fd)), port_(port) {}
    Fd fd_;
    std::uint16_t port_;
};

// A node's receive side in batches: recvmmsg waits for one datagram and takes up to
// kCapacity - 1 more that are already queued (MSG_WAITFORONE); replies are queued as they are
// made and leave together by sendmmsg. Under load that is two system calls per batch instead
// of two per request; with one request in flight it is the same two calls as recvfrom/sendto.
class DatagramBatch {
  public:
    static constexpr std::size_t kCapacity = 32;

    // `max_reply`: the largest reply queue_reply() may be given.
    explicit DatagramBatch(std::size_t max_reply);

    // Reads the next batch (dropping the one before). Returns how many datagrams it holds, or
    // -1 with errno set (EINTR, or the socket shut).
    int receive(const UdpSocket &socket) noexcept;
    // Datagram i whole; nullopt when it was larger than the buffer (truncated).
    std::optional<Bytes> datagram(std::size_t i) const noexcept;
    // Queues a copy of `reply` to the sender of datagram i. False when the queue is full: flush
    // it, then queue again.
    bool queue_reply(std::size_t i, Bytes reply) noexcept;

    struct Sent {
        std::uint64_t sent = 0;
        std::uint64_t failed = 0;
    };
    // Sends every queued reply; one the kernel refuses is counted as failed and skipped.
    Sent flush(const UdpSocket &socket) noexcept;

  private:
    std::size_t max_reply_;
    std::unique_ptr<std::uint8_t[]> in_;  // kCapacity buffers of kMaxDatagram bytes
    std::unique_ptr<std::uint8_t[]> out_; // replies back to back
    std::size_t out_capacity_;
    std::size_t out_used_ = 0;
    std::array<sockaddr_in, kCapacity> sources_{};
    std::array<iovec, kCapacity> in_iov_{};
    std::array<mmsghdr, kCapacity> in_msgs_{};
    std::array<iovec, kCapacity> out_iov_{};
    std::array<mmsghdr, kCapacity> out_msgs_{};
    std::size_t queued_ = 0;
};

// The node's announcement at start (SPEC §6): INF of 0xD5 (the instance list) from and to the
// node profile. Encodes it into `out` and returns its size (0 if it does not fit).
std::size_t encode_start_inf(std::span<std::uint8_t> out, Bytes instance_list,
                             std::uint16_t tid) noexcept;
// Multicasts it; false when it could not be sent (no multicast route, for instance).
bool send_start_inf(UdpSocket &socket, Bytes instance_list, std::uint16_t tid) noexcept;

// Dotted-quad form of an address, for messages and JSON.
std::string to_string(in_addr addr);
// The address's four bytes in wire order.
std::array<std::uint8_t, 4> address_bytes(in_addr addr) noexcept;

} // namespace echonet
