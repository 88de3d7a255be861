/* Strict number parsing for the command lines of both programs. */
#ifndef COMM_OPTIONS_H
#define COMM_OPTIONS_H

#include <stdint.h>

/* Parses a decimal number in [lo, hi]; 0 on success, -1 on anything else (signs, spaces,
 * trailing characters, overflow). */
int options_parse_u64(const char *s, uint64_t lo, uint64_t hi, uint64_t *out);

#endif
