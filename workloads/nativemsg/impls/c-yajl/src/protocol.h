/* The request -> reply logic of the nativemsg workload (SPEC.md sections 2 and 3). */
#ifndef NATIVEMSG_PROTOCOL_H
#define NATIVEMSG_PROTOCOL_H

#include <stddef.h>

/* The smallest fill reply, {"op":"fill","data":""}: a smaller "bytes" is invalid. */
#define FILL_MIN_BYTES 23u

/* What one session keeps between requests: yajl's generator, allocated once. */
struct protocol;

/* Returns NULL when out of memory. */
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
