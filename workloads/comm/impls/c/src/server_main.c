/*
 * comm-c-server: parses the command line, starts the listener and waits for SIGTERM/SIGINT.
 *
 *   comm-c-server --port PORT [--host ADDR] [--pool N] [--max-body BYTES]
 *
 * Listens on ADDR:PORT only (ADDR an IPv4 address literal, default 127.0.0.1).
 *
 * The stop signals are blocked in every thread (the mask is inherited) and taken here with
 * sigwait, so no async signal handler runs anywhere.
 */
#include "frame.h"
#include "listener.h"
#include "options.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>

static int usage(const char *why) {
    fprintf(stderr,
            "comm-c-server: %s (usage: comm-c-server --port PORT [--host ADDR] [--pool N] "
            "[--max-body BYTES])\n",
            why);
    return 2;
}

int main(int argc, char **argv) {
    uint64_t port = 0, pool = 8, max_body = FRAME_DEFAULT_MAX_BODY;
    struct in_addr host = {.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 1; i < argc; i += 2) {
        const char *opt = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;
        if (!val)
            return usage("missing value");
        if (strcmp(opt, "--port") == 0) {
            if (options_parse_u64(val, 1, 65535, &port))
                return usage("bad --port");
        } else if (strcmp(opt, "--host") == 0) {
            if (options_parse_ipv4(val, &host))
                return usage("bad --host (an IPv4 address is expected)");
        } else if (strcmp(opt, "--pool") == 0) {
            if (options_parse_u64(val, 1, 1024, &pool))
                return usage("bad --pool");
        } else if (strcmp(opt, "--max-body") == 0) {
            if (options_parse_u64(val, 0, UINT64_MAX, &max_body))
                return usage("bad --max-body");
        } else {
            return usage("unknown argument");
        }
    }
    if (port == 0)
        return usage("--port is required");

    /* 256 clients and more: one descriptor each. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);

    struct listener *l = listener_start(host, (uint16_t)port, (int)pool, max_body);
    if (!l)
        return 1;
    int sig;
    while (sigwait(&stop, &sig) != 0) {
    }
    listener_stop(l);
    return 0;
}
