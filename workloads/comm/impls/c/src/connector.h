/*
 * The client side of comm (the seed's Connector): one TCP connection, a send queue drained by
 * a send thread, and a receive thread filling a receive queue.
 *
 *   post  - queue a message for sending (waits only while the send queue is full)
 *   get   - take the next received message (waits until one arrives)
 *   close - end the sending side: an END or QUIT message after everything posted, or a
 *           half-close (EOF); replies keep arriving until the server ends the session
 *
 * post may be called from any thread; get from one thread at a time.
 */
#ifndef COMM_CONNECTOR_H
#define COMM_CONNECTOR_H

#include "message.h"

#include <stddef.h>
#include <stdint.h>

enum connector_end { CONNECTOR_END, CONNECTOR_QUIT, CONNECTOR_EOF };

struct connector;

/* Connects to host:port (an IPv4 address) and starts the two threads. NULL on failure, with
 * the reason in err. */
struct connector *connector_open(const char *host, uint16_t port, char *err, size_t errlen);

/* Takes ownership of msg->body. 0, or -1 if the connection can no longer send (the body is
 * freed then). */
int connector_post(struct connector *c, struct comm_message *msg);

/* 1: *out holds the next message (the caller owns its body). 0: the session ended normally
 * (the server's END, or EOF between frames) and every message has been taken. -1: it ended
 * with an error, see connector_error. */
int connector_get(struct connector *c, struct comm_message *out);

/* Ends the session from this side once the messages posted so far are sent. */
void connector_close(struct connector *c, enum connector_end how);

/* Breaks the connection at once: both threads stop, post and get fail. */
void connector_abort(struct connector *c);

/* The first error seen on the connection ("" if none). */
const char *connector_error(struct connector *c);

/* Joins the threads and frees everything. After connector_close it waits for the server to
 * end the session (unread replies are dropped); without it, it aborts. */
void connector_free(struct connector *c);

#endif
