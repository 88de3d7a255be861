/*
 * redis-c: a Redis-protocol (RESP2) server in C17.
 *
 *     redis-c --port PORT
 *
 * Listens on 127.0.0.1:PORT; SIGTERM or SIGINT closes every connection and exits 0. Nothing
 * is written to stdout or to disk.
 */
#include "commands.h"
#include "server.h"
#include "store.h"
#include "util.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static int usage(const char *why) {
    fprintf(stderr, "redis-c: %s (usage: redis-c --port PORT)\n", why);
    return 2;
}

int main(int argc, char **argv) {
    if (argc != 3 || strcmp(argv[1], "--port") != 0)
        return usage("bad arguments");
    char *end;
    long port = strtol(argv[2], &end, 10);
    if (argv[2][0] == '\0' || *end != '\0' || port < 1 || port > 65535)
        return usage("bad port");

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
    if (!server_listen((int)port))
        return 1;
    return server_run();
}
