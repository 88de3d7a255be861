// redis-cpp: a Redis-protocol (RESP2) server. Usage: redis-cpp --port PORT [--host ADDR]
// Listens on ADDR:PORT only (ADDR an IPv4 address literal, default 127.0.0.1).
#include "hash.hpp"
#include "server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/random.h>
#include <sys/resource.h>

#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>

namespace {

int usage(const char *message) {
    std::fprintf(stderr, "redis-cpp: %s (usage: redis-cpp --port PORT [--host ADDR])\n", message);
    return 2;
}

bool parse_port(std::string_view s, int &port) {
    if (s.empty() || s.size() > 5) {
        return false;
    }
    int v = 0;
    for (const char c : s) {
        if (c < '0' || c > '9') {
            return false;
        }
        v = v * 10 + (c - '0');
    }
    if (v < 1 || v > 65535) {
        return false;
    }
    port = v;
    return true;
}

// An IPv4 address literal only (inet_pton): host names, parts above 255 and the empty string
// (which many socket APIs read as "any address") are refused.
bool parse_host(std::string_view s, in_addr &host) {
    return inet_pton(AF_INET, std::string(s).c_str(), &host) == 1;
}

// 1,000+ clients need 1,000+ descriptors: take the hard limit.
void raise_fd_limit() {
    rlimit rl{};
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
}

} // namespace

int main(int argc, char **argv) {
    int port = 0;
    in_addr host{htonl(INADDR_LOOPBACK)};
    for (int i = 1; i < argc; ++i) {
        const std::string_view arg = argv[i];
        if (arg == "--port" && i + 1 < argc) {
            if (!parse_port(argv[++i], port)) {
                return usage("bad port");
            }
        } else if (arg.starts_with("--port=")) {
            if (!parse_port(arg.substr(7), port)) {
                return usage("bad port");
            }
        } else if (arg == "--host" && i + 1 < argc) {
            if (!parse_host(argv[++i], host)) {
                return usage("bad host (an IPv4 address is expected)");
            }
        } else if (arg.starts_with("--host=")) {
            if (!parse_host(arg.substr(7), host)) {
                return usage("bad host (an IPv4 address is expected)");
            }
        } else {
            return usage("unknown argument");
        }
    }
    if (port == 0) {
        return usage("missing --port");
    }
    // A client that goes away makes write() fail with EPIPE instead of killing the server.
    std::signal(SIGPIPE, SIG_IGN);
    raise_fd_limit();
    // Per-process hash seed, so that colliding keys cannot be precomputed.
    std::uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, 0) == sizeof seed) {
        redis::g_hash_seed = seed;
    }
    try {
        redis::Server server(host, port);
        server.run();
    } catch (const std::exception &e) {
        std::fprintf(stderr, "redis-cpp: %s\n", e.what());
        return 1;
    }
    return 0;
}
