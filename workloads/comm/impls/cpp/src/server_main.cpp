// comm-cpp-server: the echo server of SPEC §2.
//
//   comm-cpp-server --port PORT [--host ADDR] [--pool N] [--max-body BYTES]
//
// Listens on ADDR:PORT only (ADDR an IPv4 address literal, default 127.0.0.1).
// A listener on the main thread and --pool worker threads, each an epoll loop over the
// connections dealt to it. SIGTERM/SIGINT: stop accepting, close every connection, exit 0.
#include "listener.hpp"
#include "options.hpp"

#include <signal.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <exception>

namespace {

comm::ServerConfig parse_args(int argc, char **argv) {
    comm::ServerConfig config;
    bool have_port = false;
    comm::OptionReader options(argc, argv);
    while (auto name = options.next()) {
        if (*name == "--port") {
            config.port = static_cast<std::uint16_t>(options.number(1, 65535));
            have_port = true;
        } else if (*name == "--host") {
            config.host = options.ipv4();
        } else if (*name == "--pool") {
            config.pool = static_cast<unsigned>(options.number(1, 1024));
        } else if (*name == "--max-body") {
            config.limits.max_body = options.number(0, UINT64_MAX);
        } else {
            options.unknown();
        }
    }
    if (!have_port)
        throw comm::UsageError("--port is required");
    return config;
}

// 256 clients and more: take all the descriptors the hard limit allows.
void raise_descriptor_limit() {
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
        limit.rlim_cur = limit.rlim_max;
        ::setrlimit(RLIMIT_NOFILE, &limit);
    }
}

} // namespace

int main(int argc, char **argv) {
    comm::ServerConfig config;
    try {
        config = parse_args(argc, argv);
    } catch (const comm::UsageError &e) {
        std::fprintf(stderr,
                     "comm-cpp-server: %s (usage: comm-cpp-server --port PORT [--host ADDR] "
                     "[--pool N] [--max-body BYTES])\n",
                     e.what());
        return 2;
    }
    raise_descriptor_limit();
    // SIGTERM and SIGINT are blocked in every thread (the workers inherit this mask) and
    // read from a signalfd by the listener: no asynchronous handler anywhere.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, nullptr);
    std::signal(SIGPIPE, SIG_IGN); // a vanished peer is an error from send(2), not a signal
    try {
        comm::Listener listener(config);
        listener.stop_on(stop);
        listener.run();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "comm-cpp-server: %s\n", e.what());
        return 1;
    }
    return 0;
}
