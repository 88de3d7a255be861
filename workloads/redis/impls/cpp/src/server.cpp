#include "server.hpp"
#include "connection.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>
#include <new>
#include <system_error>

namespace redis {

namespace {

constexpr int kMaxEvents = 1024;
constexpr int kMaxAcceptsPerEvent = 1000;
constexpr std::int64_t kCronIntervalMs = 100;
// Active expiry: keys sampled per round, and the share of a cron interval it may use.
constexpr std::size_t kExpireSamples = 20;
constexpr std::int64_t kExpireBudgetUs = 25 * 1000;

[[noreturn]] void throw_errno(const char *what) {
    throw std::system_error(errno, std::generic_category(), what);
}

std::int64_t monotonic_us() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000 + ts.tv_nsec / 1000;
}

std::int64_t realtime_ms() {
    timespec ts{};
    clock_gettime(CLOCK_REALTIME, &ts);
    return static_cast<std::int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

} // namespace

UniqueFd &UniqueFd::operator=(UniqueFd &&other) noexcept {
    if (this != &other) {
        if (fd_ >= 0) {
            ::close(fd_);
        }
        fd_ = other.release();
    }
    return *this;
}

UniqueFd::~UniqueFd() {
    if (fd_ >= 0) {
        ::close(fd_);
    }
}

Server::Server(in_addr host, int port)
    : read_buf_(new char[kReadChunk]), rng_(std::random_device{}()) {
    listen_fd_ = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
    if (listen_fd_.get() < 0) {
        throw_errno("socket");
    }
    const int one = 1;
    if (setsockopt(listen_fd_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0) {
        throw_errno("setsockopt(SO_REUSEADDR)");
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    addr.sin_addr = host;
    if (bind(listen_fd_.get(), reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0) {
        const int error = errno;
        char where[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &host, where, sizeof where);
        throw std::system_error(error, std::generic_category(),
                                "bind " + std::string(where) + ":" + std::to_string(port));
    }
    if (listen(listen_fd_.get(), 4096) != 0) {
        throw_errno("listen");
    }

    epoll_fd_ = UniqueFd(epoll_create1(EPOLL_CLOEXEC));
    if (epoll_fd_.get() < 0) {
        throw_errno("epoll_create1");
    }
    // SIGTERM and SIGINT arrive as readable events, so shutdown happens between requests.
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    if (sigprocmask(SIG_BLOCK, &mask, nullptr) != 0) {
        throw_errno("sigprocmask");
    }
    signal_fd_ = UniqueFd(signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC));
    if (signal_fd_.get() < 0) {
        throw_errno("signalfd");
    }
    for (const int fd : {listen_fd_.get(), signal_fd_.get()}) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        if (epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
            throw_errno("epoll_ctl");
        }
    }
    stats_.port = port;
    refresh_clock();
    stats_.start_ms = now_ms_;
}

Server::~Server() = default;

void Server::refresh_clock() {
    now_ms_ = realtime_ms();
}

void Server::run() {
    epoll_event events[kMaxEvents];
    next_cron_ms_ = monotonic_us() / 1000 + kCronIntervalMs;
    while (!stopping_) {
        const std::int64_t wait = next_cron_ms_ - monotonic_us() / 1000;
        const int n =
            epoll_wait(epoll_fd_.get(), events, kMaxEvents, wait > 0 ? static_cast<int>(wait) : 0);
        if (n < 0 && errno != EINTR) {
            throw_errno("epoll_wait");
        }
        refresh_clock();
        for (int i = 0; i < n; ++i) {
            const int efd = events[i].data.fd;
            if (efd == listen_fd_.get()) {
                accept_clients();
                continue;
            }
            if (efd == signal_fd_.get()) {
                stopping_ = true;
                continue;
            }
            const auto fd = static_cast<std::size_t>(efd);
            // A client closed earlier in this batch may have had its fd reused by a client
            // accepted in this batch: a stale event then finds nothing to read, harmlessly.
            if (fd >= clients_.size() || !clients_[fd]) {
                continue;
            }
            const std::uint32_t what = events[i].events;
            if ((what & (EPOLLIN | EPOLLHUP | EPOLLERR)) != 0) {
                on_readable(*clients_[fd]);
            }
            if ((what & EPOLLOUT) != 0 && clients_[fd]) {
                on_writable(*clients_[fd]);
            }
        }
        if (monotonic_us() / 1000 >= next_cron_ms_) {
            cron();
            next_cron_ms_ = monotonic_us() / 1000 + kCronIntervalMs;
        }
    }
    for (auto &c : clients_) {
        c.reset(); // closes the socket
    }
}

void Server::accept_clients() {
    for (int i = 0; i < kMaxAcceptsPerEvent; ++i) {
        const int fd = accept4(listen_fd_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                ++stats_.rejected_connections;
            }
            return; // EAGAIN, or out of descriptors: try again on the next event
        }
        UniqueFd owned(fd);
        // Replies of a pipelined batch go out in one write; without TCP_NODELAY, Nagle's
        // algorithm would hold a small reply back until the previous one is acknowledged.
        const int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        if (epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, fd, &ev) != 0) {
            continue;
        }
        auto c = std::make_unique<Client>();
        c->fd = std::move(owned);
        c->session.id = next_client_id_++;
        if (static_cast<std::size_t>(fd) >= clients_.size()) {
            clients_.resize(static_cast<std::size_t>(fd) + 1);
        }
        clients_[static_cast<std::size_t>(fd)] = std::move(c);
        ++stats_.connected_clients;
        ++stats_.total_connections;
    }
}

void Server::cron() {
    refresh_clock();
    if (scratch_.capacity() > kKeepOutputCapacity) {
        std::string().swap(scratch_);
    }
    // Active expiry, as redis's activeExpireCycle: sample keys that have a TTL, delete the
    // expired ones, and go on while more than 10% of a sample had expired, within a budget.
    const std::int64_t start = monotonic_us();
    for (int i = 0; i < kDatabases; ++i) {
        Db &db = store_.db(i);
        while (db.volatile_count() != 0) {
            const auto [sampled, expired] = db.expire_sample(kExpireSamples, rng_, now_ms_);
            stats_.expired_keys += expired;
            if (expired * 10 <= sampled || monotonic_us() - start > kExpireBudgetUs) {
                break;
            }
        }
    }
}

} // namespace redis
