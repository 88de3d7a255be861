// The requesting side (SPEC §8): requests matched to their replies by TID, source address and
// ESV, bounded retries of the same datagram, and multicast discovery.
#pragma once

#include "frame.hpp"
#include "transport.hpp"

#include <netinet/in.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace echonet {

using Clock = std::chrono::steady_clock;

struct ControllerSettings {
    std::chrono::milliseconds timeout{500}; // one attempt's wait
    unsigned retries = 3;                   // attempts after the first
};

// The TID after `tid`: requests count from 1 and skip 0 when they wrap.
constexpr std::uint16_t tid_after(std::uint16_t tid) noexcept {
    return tid == 0xFFFF ? 1 : static_cast<std::uint16_t>(tid + 1);
}

// Whether `reply` is a reply to a request of service `request` (e.g. 0x72 or 0x52 to 0x62).
bool answers(Esv request, Esv reply) noexcept;

// The instances a reply's 0xD6 (self-node instance list: a count, then 3 bytes per EOJ) names,
// as many as the count says and the bytes hold; empty without one. Used by discover(); public
// for the fuzz target.
std::vector<Eoj> instance_list(const PropertyList &properties);

// Encodes a request from the controller object (SEOJ 0x05FF01) with TID 0 (exchange() sets
// it). `get_part` is used by SetGet only. Returns the frame's size, 0 if it does not fit.
std::size_t build_request(std::span<std::uint8_t> out, Eoj deoj, Esv esv,
                          std::span<const Property> properties,
                          std::span<const Property> get_part = {}) noexcept;

// A reply matched to its request. The frame views the controller's receive buffer: valid until
// the controller's next exchange or discovery.
struct Reply {
    Frame frame;
    in_addr host{};
    unsigned attempts = 0;
};

struct DiscoveredNode {
    in_addr host{};
    Eoj eoj;                    // the answering node profile
    std::vector<Eoj> instances; // from its 0xD6 self-node instance list
};

struct Discovery {
    std::vector<DiscoveredNode> nodes; // sorted by address
    double elapsed_s = 0;              // first send to the last node needed
    unsigned attempts = 0;             // multicasts sent
};

class Controller {
  public:
    Controller(UdpSocket socket, ControllerSettings settings);

    // Stamps `request` (a whole frame from build_request) with the next TID and sends it to
    // `host` up to `attempts` times, each time waiting one timeout for the matching reply.
    std::optional<Reply> exchange(in_addr host, std::span<std::uint8_t> request, unsigned attempts);
    std::optional<Reply> exchange(in_addr host, std::span<std::uint8_t> request) {
        return exchange(host, request, 1 + settings_.retries);
    }

    // Multicasts a Get of 0xD6 to the node profile and collects the unicast answers, one per
    // node address. expect > 0: until that many answered, resending every timeout up to
    // `retries` times; expect == 0: for `wait`, from one multicast.
    Discovery discover(std::size_t expect, std::chrono::milliseconds wait);

    // The TID of the last request sent.
    std::uint16_t last_tid() const noexcept {
        return tid_;
    }
    std::uint64_t ignored() const noexcept {
        return ignored_;
    }
    std::uint64_t resent() const noexcept {
        return resent_;
    }

  private:
    std::uint16_t next_tid() noexcept;
    // The next well-formed datagram before `deadline`; malformed ones are counted in ignored_.
    bool receive(Clock::time_point deadline, sockaddr_in &from, Frame &frame);

    UdpSocket socket_;
    ControllerSettings settings_;
    std::vector<std::uint8_t> buf_;
    std::chrono::microseconds receive_timeout_; // the socket's SO_RCVTIMEO now
    std::uint16_t tid_ = 0;
    std::uint64_t ignored_ = 0;
    std::uint64_t resent_ = 0;
};

} // namespace echonet
