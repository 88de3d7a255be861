/*
 * redis-c: a Redis-protocol (RESP2) server in C17.
 *
 *     redis-c --port PORT [--host ADDR]
 *
 * Listens on ADDR:PORT only (ADDR an IPv4 address literal, default 127.0.0.1); SIGTERM or
 * SIGINT closes every connection and exits 0. Nothing is written to stdout or to disk.
 */
#include "commands.h"
#include "server.h"
#include "store.h"
#include "util.h"

#include <arpa/inet.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int usage(const char *why) {
    fprintf(stderr, "redis-c: %s (usage: redis-c --port PORT [--host ADDR])\n", why);
    return 2;
}

int main(int argc, char **argv) {
    long port = 0;
    struct in_addr host = {.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            return usage("bad arguments");
        const char *val = argv[i + 1];
        if (strcmp(argv[i], "--port") == 0) {
            char *end;
            port = strtol(val, &end, 10);
            if (*val < '0' || *val > '9' || *end != '\0' || port < 1 || port > 65535)
                return usage("bad port");
        } else if (strcmp(argv[i], "--host") == 0) {
            /* An IPv4 literal only: "" would otherwise be taken as "any address". */
            if (inet_pton(AF_INET, val, &host) != 1)
                return usage("bad host (an IPv4 address is expected)");
        } else {
            return usage("bad arguments");
        }
    }
    if (port == 0)
        return usage("missing --port");

    /* 1,000+ clients: every descriptor the hard limit allows. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    /* A peer that closes while we write must not kill the server. */
    signal(SIGPIPE, SIG_IGN);

    hash_init();
    store_init();
    commands_init();
    if (!server_listen(host, (int)port))
        return 1;
    return server_run();
}
