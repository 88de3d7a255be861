#include "server.hpp"

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

constexpr std::size_t kReadChunk = 16 * 1024;
// A client's own input buffer may read this much at once when a large argument is pending.
constexpr std::size_t kMaxReadChunk = 1024 * 1024;
// A client input buffer bigger than this is freed once empty (a one-off large request).
constexpr std::size_t kKeepInputCapacity = 64 * 1024;
// The loop-wide reply buffer shrinks back after a turn that needed more than this.
constexpr std::size_t kKeepOutputCapacity = 1024 * 1024;
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

Server::Server(int port) : read_buf_(new char[kReadChunk]), rng_(std::random_device{}()) {
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
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(listen_fd_.get(), reinterpret_cast<const sockaddr *>(&addr), sizeof addr) != 0) {
        throw_errno("bind");
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

void Server::on_readable(Client &c) {
    if (c.closing) {
        return; // no more requests from a client that is being closed
    }
    // Replies go to the loop-wide buffer unless earlier replies are still waiting: then they
    // queue behind them in the client's own buffer.
    ByteBuffer &staged = c.out.empty() ? shared_out_ : c.out;
    Reply reply(staged, c.session.protocol);
    if (c.in.empty()) {
        const ssize_t n = ::read(c.fd.get(), read_buf_.get(), kReadChunk);
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                close_client(c);
            }
            return;
        }
        const std::string_view data(read_buf_.get(), static_cast<std::size_t>(n));
        const std::size_t used = process(c, data, reply);
        if (used < data.size() && !c.closing) {
            c.in.append(data.substr(used)); // a partial request waits in the client's buffer
        }
    } else {
        // Read more of a partial request; a large pending argument is read in larger chunks.
        std::size_t want = kReadChunk;
        const std::size_t needed = c.parser.bytes_needed();
        if (needed > c.in.size() + want) {
            want = std::min(needed - c.in.size(), kMaxReadChunk);
        }
        char *dst = c.in.reserve(want);
        const ssize_t n = ::read(c.fd.get(), dst, want);
        if (n <= 0) {
            if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                close_client(c);
            }
            return;
        }
        c.in.commit(static_cast<std::size_t>(n));
        const std::size_t used = process(c, c.in.view(), reply);
        c.in.consume(used);
        if (c.in.empty() && c.in.capacity() > kKeepInputCapacity) {
            c.in.release();
        }
    }
    flush(c, staged);
}

std::size_t Server::process(Client &c, std::string_view data, Reply &reply) {
    Context ctx{store_, c.session, reply, stats_, rng_, now_ms_, scratch_};
    std::size_t pos = 0;
    while (pos < data.size()) {
        const auto status = c.parser.parse(data.substr(pos));
        if (status == RequestParser::Status::incomplete) {
            break;
        }
        if (status == RequestParser::Status::error) {
            reply.error(c.parser.error());
            c.closing = true;
            c.parser.reset();
            return data.size();
        }
        const auto args = c.parser.args();
        if (!args.empty()) {
            try {
                execute(ctx, args);
            } catch (const std::bad_alloc &) {
                reply.error("ERR out of memory");
                c.closing = true;
            }
        }
        pos += c.parser.consumed();
        c.parser.reset();
        if (c.session.close_after_reply) {
            c.closing = true;
        }
        if (reply.full()) {
            // Over the output limit while running the batch (redis checks on every reply it
            // adds): the client is dropped with its replies, as redis does.
            c.overflow = true;
            return data.size();
        }
        if (c.closing) {
            break;
        }
    }
    // The scratch string held a large value (APPEND, SETRANGE): give the memory back.
    if (scratch_.capacity() > kKeepOutputCapacity) {
        std::string().swap(scratch_);
    }
    return c.closing ? data.size() : pos;
}

void Server::flush(Client &c, ByteBuffer &staged) {
    if (c.overflow) {
        staged.clear();
        if (staged.capacity() > kKeepOutputCapacity) {
            staged.release();
        }
        close_client(c);
        return;
    }
    if (&staged == &shared_out_) {
        if (!shared_out_.empty()) {
            const ssize_t n = ::write(c.fd.get(), shared_out_.data(), shared_out_.size());
            if (n < 0 && errno != EAGAIN && errno != EINTR) {
                shared_out_.clear();
                close_client(c);
                return;
            }
            const std::size_t sent = n > 0 ? static_cast<std::size_t>(n) : 0;
            if (sent < shared_out_.size()) {
                c.out.append(shared_out_.data() + sent, shared_out_.size() - sent);
            }
            shared_out_.clear();
            if (shared_out_.capacity() > kKeepOutputCapacity) {
                shared_out_.release();
            }
        }
    } else if (!c.want_write && !c.out.empty()) {
        on_writable(c);
        return;
    }
    if (c.out.size() > kMaxOutputBytes) {
        close_client(c); // a client that does not read its replies is dropped
        return;
    }
    if (!c.out.empty()) {
        set_want_write(c, true);
    } else if (c.closing) {
        close_client(c);
    }
}

void Server::on_writable(Client &c) {
    while (!c.out.empty()) {
        const ssize_t n = ::write(c.fd.get(), c.out.data(), c.out.size());
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR) {
                break;
            }
            close_client(c);
            return;
        }
        c.out.consume(static_cast<std::size_t>(n));
    }
    if (c.out.size() > kMaxOutputBytes) {
        close_client(c);
        return;
    }
    if (c.out.empty()) {
        c.out.release();
        set_want_write(c, false);
        if (c.closing) {
            close_client(c);
        }
    } else {
        set_want_write(c, true);
    }
}

void Server::set_want_write(Client &c, bool on) {
    if (c.want_write == on) {
        return;
    }
    epoll_event ev{};
    ev.events = on ? (EPOLLIN | EPOLLOUT) : EPOLLIN;
    ev.data.fd = c.fd.get();
    epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, c.fd.get(), &ev);
    c.want_write = on;
}

void Server::close_client(Client &c) {
    const auto fd = static_cast<std::size_t>(c.fd.get());
    --stats_.connected_clients;
    clients_[fd].reset(); // closing the descriptor also removes it from the epoll set
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
