/*
 * The request -> reply logic of the nativemsg workload (SPEC.md sections 2 and 3). One
 * interface for both C hosts: c/src/protocol.c (jansson) and c-yajl/src/protocol.c (yajl) each
 * implement it, and share framing, the serve loop and main.
 */
#ifndef NATIVEMSG_PROTOCOL_H
#define NATIVEMSG_PROTOCOL_H

#include <stddef.h>

/* The smallest fill reply, {"op":"fill","data":""}: a smaller "bytes" is invalid. */
#define FILL_MIN_BYTES 23u

/* What one session keeps between requests; each protocol.c defines its own. */
struct protocol;

/* Sets up a session once, before the first request. Returns NULL when out of memory. */
struct protocol *protocol_new(void);
void protocol_free(struct protocol *p);

/*
 * Answers one request body. Writes the reply body to `reply`, which has room for
 * FRAME_MAX_REPLY bytes, and returns its length. Every request gets exactly one reply: bad
 * input and replies that would exceed the limit get an {"error": ...} reply.
 */
size_t protocol_reply(struct protocol *p, const unsigned char *request, size_t len,
                      unsigned char *reply);

#endif
