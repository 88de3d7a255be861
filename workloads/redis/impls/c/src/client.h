/*
 * One connected client: what the connection loop and the commands share about it.
 */
#ifndef REDIS_C_CLIENT_H
#define REDIS_C_CLIENT_H

#include "protocol.h"
#include "store.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>

#define CLIENT_CLOSE_AFTER_REPLY 0x01 /* QUIT or a protocol error: flush, then close */
#define CLIENT_WRITE_ARMED 0x02       /* EPOLLOUT is registered: output is pending */
#define CLIENT_KILL 0x04              /* over the output limit: close without flushing */

struct client {
    int fd;
    unsigned flags;
    long long id;
    struct db *db;
    int db_index;
    int resp; /* protocol version: 2, or 3 after HELLO 3 */
    struct parser parser;

    /* Input that is not a whole request yet. Complete requests are parsed straight from the
     * loop's shared read buffer; only a partial tail is copied here. */
    char *qbuf;
    size_t qlen, qcap;

    /* Replies of the current batch go to `out`, the loop's shared output buffer, and are
     * written before the next client is served. What the socket would not take waits here. */
    struct outbuf *out;
    char *pending;
    size_t pending_off, pending_len, pending_cap;

    struct multi_state *multi; /* inside MULTI: the queued commands, else NULL */
    char *name;                /* CLIENT SETNAME, NULL if none */
    struct in_addr peer_addr;
    unsigned peer_port;
    long long created_ms;
    struct client *prev, *next; /* every client, for INFO and shutdown */
};

#endif
