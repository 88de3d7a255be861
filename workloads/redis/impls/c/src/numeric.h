/* redis's number rules: parsing as string2ll/string2d/string2ld, printing as ll2string, %.17g
 * and INCRBYFLOAT's %.17Lf. */
#ifndef REDIS_C_NUMERIC_H
#define REDIS_C_NUMERIC_H

#include <stdbool.h>
#include <stddef.h>

/* Room for any integer or double printed by the helpers below, with its terminator. */
#define NUM_BUF 64
/* Room for INCRBYFLOAT's "%.17Lf" (a long double can have ~4950 integer digits). */
#define LONG_DOUBLE_BUF (5 * 1024)

/* Integers exactly as redis's string2ll accepts them: optional '-', no '+', no spaces, no
 * leading zeros, within int64. */
bool parse_ll(const char *s, size_t len, long long *out);
/* Doubles as redis's string2d: strtod on the whole string, no leading space, no NaN, an
 * overflow to +-inf or underflow to 0 is refused ("inf" spelled out is accepted). */
bool parse_double(const char *s, size_t len, double *out);
/* The same for long doubles (string2ld), used by INCRBYFLOAT. */
bool parse_long_double(const char *s, size_t len, long double *out);

/* Writes v in decimal to buf (NUM_BUF bytes); returns the length. */
size_t format_ll(char *buf, long long v);
/* "%.17g" as redis 7.0 prints scores; the caller handles infinities. */
size_t format_double(char *buf, double d);
/* INCRBYFLOAT's "%.17Lf" with trailing zeros (and a bare '.') removed; buf is
 * LONG_DOUBLE_BUF bytes. */
size_t format_long_double(char *buf, long double v);

#endif
