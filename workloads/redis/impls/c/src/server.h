/*
 * The server: listening socket, the epoll event loop, timers (active expiry, background
 * rehashing) and shutdown. Also the process-wide counters INFO reports.
 */
#ifndef REDIS_C_SERVER_H
#define REDIS_C_SERVER_H

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

struct server_stats {
    int port;
    char host[INET_ADDRSTRLEN]; /* the address listened on (CONFIG GET bind, CLIENT LIST) */
    long long started_ms;       /* monotonic */
    size_t connected_clients;
    long long total_connections;
    long long total_commands;
    long long rejected_connections;
    long long expired_keys;
    unsigned long maxclients;
};

extern struct server_stats server_stats;

/* Listens on host:port; false (and a message on stderr) on failure. */
bool server_listen(struct in_addr host, int port);
/* Runs until SIGTERM/SIGINT; returns the exit status. */
int server_run(void);

#endif
