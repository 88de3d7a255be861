/*
 * The comm wire format (SPEC.md §1): a 9-byte header, then the body.
 *
 *   offset 0, 1 byte : message type
 *   offset 1, 8 bytes: body length, unsigned, big-endian (body only)
 *
 * This file is the only place that knows the layout; server and client both go through it.
 */
#ifndef COMM_FRAME_H
#define COMM_FRAME_H

#include <stdbool.h>
#include <stdint.h>

#define FRAME_HEADER_SIZE 9
#define FRAME_DEFAULT_MAX_BODY (64ull * 1024 * 1024)

enum frame_type {
    FRAME_DEFAULT = 0,
    FRAME_TEXT = 1,
    FRAME_REPLY = 2,
    FRAME_END = 4,
    FRAME_QUIT = 8,
    FRAME_FLUSH = 16,
    FRAME_STRING = 64,
    FRAME_BINARY = 128,
};

struct frame_header {
    uint8_t type;
    uint64_t body_len;
};

void frame_encode(unsigned char out[FRAME_HEADER_SIZE], uint8_t type, uint64_t body_len);
struct frame_header frame_decode(const unsigned char in[FRAME_HEADER_SIZE]);

/* END and QUIT both end a session; every other type byte is a message to echo. */
bool frame_ends_session(uint8_t type);

/* The cap, checked on the announced length before anything is allocated for the body. */
static inline bool frame_body_allowed(uint64_t body_len, uint64_t max_body) {
    return body_len <= max_body;
}

#endif
