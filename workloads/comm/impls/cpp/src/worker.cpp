#include "worker.hpp"

#include <sys/epoll.h>
#include <sys/eventfd.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <new>
#include <system_error>

namespace comm {

namespace {

std::system_error os_error(const char *what) {
    return {errno, std::generic_category(), what};
}

std::uint32_t events_for(Interest next) noexcept {
    switch (next) {
    case Interest::read:
        return EPOLLIN;
    case Interest::write:
        return EPOLLOUT;
    case Interest::read_write:
        return EPOLLIN | EPOLLOUT;
    case Interest::close:
        break;
    }
    return 0;
}

} // namespace

Worker::Worker(SessionLimits limits)
    : limits_(limits), epoll_(::epoll_create1(EPOLL_CLOEXEC)),
      wake_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
    if (!epoll_ || !wake_)
        throw os_error("worker: epoll_create1/eventfd");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.ptr = nullptr; // connections carry their Connection*; the eventfd carries null
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, wake_.get(), &ev) != 0)
        throw os_error("worker: epoll_ctl");
}

Worker::~Worker() {
    stop();
    if (thread_.joinable())
        thread_.join();
}

void Worker::start() {
    thread_ = std::thread([this] { run(); });
}

void Worker::adopt(Fd socket) {
    {
        std::lock_guard lock(mutex_);
        if (stopping_)
            return; // closes the socket
        handed_over_.push_back(std::move(socket));
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] auto _ = ::write(wake_.get(), &one, sizeof one);
}

void Worker::stop() {
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    const std::uint64_t one = 1;
    [[maybe_unused]] auto _ = ::write(wake_.get(), &one, sizeof one);
}

void Worker::run() {
    read_buffer_.reserve(limits_.buffer_size); // first touched by this thread
    std::array<epoll_event, 256> ready{};
    for (;;) {
        const int n = ::epoll_wait(epoll_.get(), ready.data(), static_cast<int>(ready.size()), -1);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            std::perror("comm-cpp-server: epoll_wait");
            return;
        }
        for (int i = 0; i < n; ++i) {
            const epoll_event &ev = ready[static_cast<std::size_t>(i)];
            if (ev.data.ptr == nullptr) {
                if (!take_handed_over())
                    return; // the destructor closes what is left
                continue;
            }
            // A connection is dropped only while its own event is handled, and each fd
            // appears once per epoll_wait, so the pointer is live here.
            serve(*static_cast<Connection *>(ev.data.ptr), ev.events);
        }
    }
}

bool Worker::take_handed_over() {
    std::uint64_t count;
    [[maybe_unused]] auto _ = ::read(wake_.get(), &count, sizeof count);
    std::vector<Fd> sockets;
    {
        std::lock_guard lock(mutex_);
        if (stopping_)
            return false;
        sockets.swap(handed_over_);
    }
    for (Fd &socket : sockets) {
        try {
            auto c = std::make_unique<Connection>(std::move(socket), limits_);
            c->slot = connections_.size();
            c->events = EPOLLIN;
            epoll_event ev{};
            ev.events = c->events;
            ev.data.ptr = c.get();
            if (::epoll_ctl(epoll_.get(), EPOLL_CTL_ADD, c->session.fd(), &ev) != 0)
                continue; // the socket closes with c
            connections_.push_back(std::move(c));
        } catch (const std::bad_alloc &) {
            std::fputs("comm-cpp-server: out of memory: connection refused\n", stderr);
        }
    }
    return true;
}

void Worker::serve(Connection &c, std::uint32_t ready) {
    // Errors and hang-ups are reported by the call that meets them (send or recv).
    constexpr std::uint32_t trouble = EPOLLERR | EPOLLHUP;
    Interest next = Interest::read;
    try {
        bool wrote = false;
        if (c.events & EPOLLOUT) {
            if (ready & (EPOLLOUT | trouble)) {
                next = c.session.on_writable();
                wrote = true;
            } else {
                next = c.events & EPOLLIN ? Interest::read_write : Interest::write;
            }
        }
        // After replies drain, read at once even if epoll was not watching for input: the
        // peer was held back, so its next frames are most likely waiting already.
        const bool input = (ready & (EPOLLIN | trouble)) || (wrote && !(c.events & EPOLLIN));
        if (input && (next == Interest::read || next == Interest::read_write))
            next = c.session.on_readable(read_buffer_);
    } catch (const std::bad_alloc &) {
        std::fputs("comm-cpp-server: out of memory: closing a connection\n", stderr);
        next = Interest::close;
    }
    wait_for(c, next);
}

void Worker::wait_for(Connection &c, Interest next) {
    if (next == Interest::close) {
        drop(c);
        return;
    }
    const std::uint32_t events = events_for(next);
    if (events == c.events)
        return; // level-triggered: nothing to change, no system call
    epoll_event ev{};
    ev.events = events;
    ev.data.ptr = &c;
    if (::epoll_ctl(epoll_.get(), EPOLL_CTL_MOD, c.session.fd(), &ev) != 0) {
        drop(c);
        return;
    }
    c.events = events;
}

void Worker::drop(Connection &c) {
    // Closing the socket also takes it out of the epoll set.
    const std::size_t slot = c.slot;
    if (slot + 1 != connections_.size()) {
        connections_[slot].swap(connections_.back());
        connections_[slot]->slot = slot;
    }
    connections_.pop_back();
}

} // namespace comm
