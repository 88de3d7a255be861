/* The request -> reply logic of the nativemsg workload (SPEC.md section 2 and 3). */
#ifndef NATIVEMSG_PROTOCOL_H
#define NATIVEMSG_PROTOCOL_H

#include <stddef.h>

/* The smallest fill reply, {"op":"fill","data":""}: a smaller "bytes" is invalid. */
#define FILL_MIN_BYTES 23u

/*
 * Seeds jansson's hash function with one getrandom(2) call. Without it jansson opens, reads
 * and closes /dev/urandom on the first parsed object: three system calls on every spawn.
 */
void protocol_init(void);

/*
 * Answers one request body. Writes the reply body to `reply`, which has room for
 * FRAME_MAX_REPLY bytes, and returns its length. Every request gets exactly one reply: bad
 * input and replies that would exceed the limit get an {"error": ...} reply.
 */
size_t protocol_reply(const unsigned char *request, size_t len, unsigned char *reply);

#endif
