#include "controller.hpp"

#include <algorithm>
#include <cerrno>

namespace echonet {

namespace {

using std::chrono::microseconds;

constexpr std::uint8_t kSelfNodeInstanceList = 0xD6;

// SO_RCVTIMEO is changed only when it is this far from the time left, so a request answered
// in time costs no setsockopt at all; a wait may end this much after its deadline.
constexpr microseconds kTimeoutSlack{200};

bool same_address(const sockaddr_in &from, in_addr host) noexcept {
    return from.sin_addr.s_addr == host.s_addr;
}

} // namespace

std::vector<Eoj> instance_list(const PropertyList &properties) {
    std::vector<Eoj> out;
    for (const Property p : properties) {
        if (p.epc != kSelfNodeInstanceList || p.edt.empty())
            continue;
        // A count, then 3 bytes per instance: as many as the count says and the bytes hold.
        const std::size_t n = std::min<std::size_t>(p.edt[0], (p.edt.size() - 1) / 3);
        for (std::size_t i = 0; i < n; ++i)
            out.push_back({p.edt[1 + 3 * i], p.edt[2 + 3 * i], p.edt[3 + 3 * i]});
        break;
    }
    return out;
}

bool answers(Esv request, Esv reply) noexcept {
    switch (request) {
    case Esv::get:
        return reply == Esv::get_res || reply == Esv::get_sna;
    case Esv::setc:
        return reply == Esv::set_res || reply == Esv::setc_sna;
    case Esv::seti:
        return reply == Esv::seti_sna;
    case Esv::setget:
        return reply == Esv::setget_res || reply == Esv::setget_sna;
    case Esv::inf_req:
        return reply == Esv::inf || reply == Esv::inf_sna;
    case Esv::infc:
        return reply == Esv::infc_res;
    default:
        return false;
    }
}

std::size_t build_request(std::span<std::uint8_t> out, Eoj deoj, Esv esv,
                          std::span<const Property> properties,
                          std::span<const Property> get_part) noexcept {
    FrameWriter w(out);
    w.header(0, kController, deoj, esv);
    for (const Property &p : properties)
        w.property(p);
    if (has_two_parts(esv)) {
        w.second_part();
        for (const Property &p : get_part)
            w.property(p);
    }
    return w.ok() ? w.size() : 0;
}

Controller::Controller(UdpSocket socket, ControllerSettings settings)
    : socket_(std::move(socket)), settings_(settings), buf_(kMaxDatagram),
      receive_timeout_(settings.timeout) {
    socket_.set_receive_timeout(receive_timeout_);
}

std::uint16_t Controller::next_tid() noexcept {
    return tid_ = tid_after(tid_);
}

bool Controller::receive(Clock::time_point deadline, sockaddr_in &from, Frame &frame) {
    for (;;) {
        const auto left = std::chrono::duration_cast<microseconds>(deadline - Clock::now());
        if (left <= microseconds::zero())
            return false;
        if (receive_timeout_ > left + kTimeoutSlack || receive_timeout_ + kTimeoutSlack < left) {
            socket_.set_receive_timeout(left);
            receive_timeout_ = left;
        }
        const ssize_t n = socket_.receive(buf_, from);
        if (n < 0)
            continue; // EAGAIN (the time is up: checked above), EINTR, ICMP errors
        if (static_cast<std::size_t>(n) <= buf_.size() &&
            decode({buf_.data(), static_cast<std::size_t>(n)}, frame) == Decoded::ok)
            return true;
        ++ignored_; // malformed, truncated or format 2
    }
}

std::optional<Reply> Controller::exchange(in_addr host, std::span<std::uint8_t> request,
                                          unsigned attempts) {
    const std::uint16_t tid = next_tid();
    set_tid(request, tid);
    const auto esv = static_cast<Esv>(request[kEsvOffset]);
    Reply reply;
    reply.host = host;
    for (unsigned attempt = 1; attempt <= attempts; ++attempt) {
        if (attempt > 1)
            ++resent_;
        // A send that fails (no route) is an attempt that gets no answer.
        socket_.send_to(request, host);
        const auto deadline = Clock::now() + settings_.timeout;
        sockaddr_in from{};
        while (receive(deadline, from, reply.frame)) {
            if (reply.frame.tid == tid && same_address(from, host) &&
                answers(esv, reply.frame.esv)) {
                reply.attempts = attempt;
                return reply;
            }
            ++ignored_; // a late or duplicate reply, another TID, another sender
        }
    }
    return std::nullopt;
}

Discovery Controller::discover(std::size_t expect, std::chrono::milliseconds wait) {
    std::uint8_t request[kHeaderSize + 2];
    const Property instance_list_epc{kSelfNodeInstanceList, {}};
    const std::size_t size =
        build_request(request, kNodeProfile, Esv::get, {&instance_list_epc, 1});
    const std::uint16_t tid = next_tid();
    set_tid(request, tid);

    Discovery result;
    const auto start = Clock::now();
    auto last_node = start;
    const unsigned sends = expect > 0 ? 1 + settings_.retries : 1;
    const auto window = expect > 0 ? settings_.timeout : wait;
    for (unsigned attempt = 1; attempt <= sends; ++attempt) {
        if (attempt > 1)
            ++resent_;
        ++result.attempts;
        socket_.send_multicast({request, size});
        const auto deadline = Clock::now() + window;
        sockaddr_in from{};
        Frame frame;
        while (receive(deadline, from, frame)) {
            const bool known = std::ranges::any_of(
                result.nodes, [&](const DiscoveredNode &n) { return same_address(from, n.host); });
            if (frame.tid != tid || !answers(Esv::get, frame.esv) || known) {
                ++ignored_;
                continue;
            }
            result.nodes.push_back({from.sin_addr, frame.seoj, instance_list(frame.properties)});
            last_node = Clock::now();
            if (expect > 0 && result.nodes.size() >= expect)
                break;
        }
        if (expect > 0 && result.nodes.size() >= expect)
            break;
    }
    // With nobody answering, the whole wait is what it took to find that out.
    const auto end = result.nodes.empty() ? Clock::now() : last_node;
    result.elapsed_s = std::chrono::duration<double>(end - start).count();
    std::ranges::sort(result.nodes, {},
                      [](const DiscoveredNode &n) { return ntohl(n.host.s_addr); });
    return result;
}

} // namespace echonet
