/*
 * The body pattern of SPEC.md §3: byte i of message m of client c is (c*7 + m*13 + i) mod 251,
 * so a reply belonging to another message or client does not compare equal.
 *
 * Every body is a window of one table holding 0, 1, ..., 250, 0, 1, ...: body(c, m) starts at
 * pattern_offset(c, m), so making a body or checking one is a memcpy or a memcmp.
 */
#ifndef COMM_PATTERN_H
#define COMM_PATTERN_H

#include <stddef.h>
#include <stdint.h>

#define PATTERN_PERIOD 251

/* A table long enough for any body of `size` bytes (size + PATTERN_PERIOD); free() it. */
unsigned char *pattern_table(size_t size);
size_t pattern_offset(uint64_t client, uint64_t message);

#endif
