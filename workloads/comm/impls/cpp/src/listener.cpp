#include "listener.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <system_error>

namespace comm {

namespace {

constexpr int kBacklog = 4096; // the kernel caps it at net.core.somaxconn
constexpr int kPauseMs = 100;  // how long accepting waits when descriptors run out
// epoll tags: the listener's own descriptors, told apart by data.u32.
constexpr std::uint32_t kListenTag = 1, kStopTag = 2, kSignalTag = 3;

std::system_error os_error(const char *what) {
    return {errno, std::generic_category(), what};
}

void watch(int epoll, int fd, std::uint32_t tag, std::uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.u32 = tag;
    if (::epoll_ctl(epoll, EPOLL_CTL_ADD, fd, &ev) != 0)
        throw os_error("listener: epoll_ctl");
}

} // namespace

Listener::Listener(const ServerConfig &config)
    : config_(config), listen_(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)),
      epoll_(::epoll_create1(EPOLL_CLOEXEC)), stop_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (!listen_ || !epoll_ || !stop_)
        throw os_error("listener: socket/epoll_create1/eventfd");
    const int one = 1;
    ::setsockopt(listen_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(config.port);
    addr.sin_addr = config.host;
    if (::bind(listen_.get(), reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0) {
        const int error = errno;
        std::array<char, INET_ADDRSTRLEN> where{};
        ::inet_ntop(AF_INET, &config.host, where.data(), static_cast<socklen_t>(where.size()));
        throw std::system_error(error, std::generic_category(),
                                "bind " + std::string(where.data()) + ":" +
                                    std::to_string(config.port));
    }
    if (::listen(listen_.get(), kBacklog) != 0)
        throw os_error("listen");
    socklen_t len = sizeof addr;
    ::getsockname(listen_.get(), reinterpret_cast<sockaddr *>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    watch(epoll_.get(), listen_.get(), kListenTag, EPOLLIN);
    watch(epoll_.get(), stop_.get(), kStopTag, EPOLLIN);
}

Listener::~Listener() = default; // each Worker stops and joins in its destructor

void Listener::stop_on(const sigset_t &signals) {
    signals_.reset(::signalfd(-1, &signals, SFD_NONBLOCK | SFD_CLOEXEC));
    if (!signals_)
        throw os_error("signalfd");
    watch(epoll_.get(), signals_.get(), kSignalTag, EPOLLIN);
}

void Listener::request_stop() {
    const std::uint64_t one = 1;
    [[maybe_unused]] auto _ = ::write(stop_.get(), &one, sizeof one);
}

void Listener::run() {
    // Workers start here, after the caller has set up the signal mask they inherit.
    workers_.reserve(config_.pool);
    for (unsigned i = 0; i < config_.pool; ++i) {
        workers_.push_back(std::make_unique<Worker>(config_.limits));
        workers_.back()->start();
    }
    std::array<epoll_event, 8> ready{};
    for (bool running = true; running;) {
        const int n = ::epoll_wait(epoll_.get(), ready.data(), static_cast<int>(ready.size()),
                                   paused_ ? kPauseMs : -1);
        if (n < 0 && errno != EINTR)
            throw os_error("listener: epoll_wait");
        if (n == 0 && paused_)
            arm_listener(true);
        for (int i = 0; i < n; ++i) {
            const std::uint32_t tag = ready[static_cast<std::size_t>(i)].data.u32;
            if (tag == kListenTag)
                accept_ready();
            else
                running = false; // SIGTERM/SIGINT or request_stop(): the reason does not matter
        }
    }
    // Stop accepting first, then end every worker (their destructors close the connections).
    listen_.reset();
    for (auto &w : workers_)
        w->stop();
    workers_.clear();
}

void Listener::accept_ready() {
    // A bounded batch per wake-up, so a connection storm cannot starve the stop signal.
    for (int i = 0; i < 256; ++i) {
        Fd socket(::accept4(listen_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
        if (!socket) {
            if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
                // The pending connection stays in the backlog; level-triggered epoll would
                // report it again at once, so stop watching for a moment instead of spinning.
                std::fprintf(stderr, "comm-cpp-server: accept: %s: pausing %d ms\n",
                             std::strerror(errno), kPauseMs);
                arm_listener(false);
            }
            return; // EAGAIN (all taken), or a connection aborted before it was accepted
        }
        // Replies are whole frames already: never hold one back waiting for an ACK (Nagle).
        const int one = 1;
        ::setsockopt(socket.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        workers_[next_worker_]->adopt(std::move(socket));
        next_worker_ = (next_worker_ + 1) % workers_.size();
    }
}

void Listener::arm_listener(bool on) {
    epoll_event ev{};
    ev.events = on ? static_cast<std::uint32_t>(EPOLLIN) : 0u;
    ev.data.u32 = kListenTag;
    ::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, listen_.get(), &ev);
    paused_ = !on;
}

} // namespace comm
