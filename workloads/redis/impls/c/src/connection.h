/*
 * Per-client I/O: reading requests, running them, writing the replies of a batch at once.
 */
#ifndef REDIS_C_CONNECTION_H
#define REDIS_C_CONNECTION_H

#include "client.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>

/* A client whose unsent replies pass this is disconnected (the lab's 64 MiB cap, as redis's
 * client-output-buffer-limit for normal clients). */
#define OUTPUT_LIMIT (64u * 1024 * 1024)

void connection_init(int epoll_fd);

/* Takes over an accepted, non-blocking socket; NULL (socket closed) if out of memory. */
struct client *connection_new(int fd, const struct sockaddr_in *peer);

/* The socket is readable: one read, every complete request in it run, one write of all the
 * replies. Returns false if the client was closed. */
bool connection_readable(struct client *c);
/* The socket is writable again: sends pending output. Returns false if closed. */
bool connection_writable(struct client *c);

void connection_close(struct client *c);
void connection_close_all(void);

/* Every connected client (a list through c->next). */
struct client *connection_clients(void);
/* "address:port" of the client's peer (a static buffer). */
const char *connection_peer(const struct client *c);

#endif
