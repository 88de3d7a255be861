/*
 * The server's structure (SPEC.md §2): one listener thread accepting connections and a pool of
 * worker threads, each running its own epoll loop over the sessions handed to it. A new
 * connection goes to the worker with the fewest sessions, so every client is served at once.
 */
#ifndef COMM_LISTENER_H
#define COMM_LISTENER_H

#include <netinet/in.h>
#include <stdint.h>

struct listener;

/* Binds host:port (port 0 = any free port), starts the accept thread and `pool` workers.
 * NULL on failure, with the reason on stderr. */
struct listener *listener_start(struct in_addr host, uint16_t port, int pool, uint64_t max_body);
/* The bound port (useful after asking for port 0). */
uint16_t listener_port(const struct listener *l);
/* Stops accepting, closes every connection, joins the threads and frees the listener. */
void listener_stop(struct listener *l);

#endif
