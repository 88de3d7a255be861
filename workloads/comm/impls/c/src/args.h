/* Strict number parsing for the command lines of both programs. */
#ifndef COMM_ARGS_H
#define COMM_ARGS_H

#include <stdint.h>

/* Parses a decimal number in [lo, hi]; 0 on success, -1 on anything else (signs, spaces,
 * trailing characters, overflow). */
int args_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

#endif
