/*
 * Small helpers shared by every part of the server: byte slices, redis's number parsing and
 * printing rules, glob matching, the keyed hash and the clocks.
 */
#ifndef REDIS_C_UTIL_H
#define REDIS_C_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A byte string that belongs to someone else (a request argument, a stored value). */
struct slice {
    const char *p;
    size_t len;
};

#define LIKELY(x) __builtin_expect(!!(x), 1)
#define UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Room for any integer or double printed by the helpers below, with its terminator. */
#define NUM_BUF 64
/* Room for INCRBYFLOAT's "%.17Lf" (a long double can have ~4950 integer digits). */
#define LONG_DOUBLE_BUF (5 * 1024)

/* ASCII case-insensitive comparison of an argument with a lower-case literal. */
static inline bool slice_is(struct slice s, const char *lower) {
    size_t n = strlen(lower);
    if (s.len != n)
        return false;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s.p[i];
        if (c >= 'A' && c <= 'Z')
            c = (unsigned char)(c + 32);
        if (c != (unsigned char)lower[i])
            return false;
    }
    return true;
}

/* memcpy for the short strings replies are made of: fixed-size overlapping moves instead of a
 * call for up to 16 bytes (it reads and writes only [0, n) of each side). */
static inline void copy_bytes(char *dst, const char *src, size_t n) {
    if (n > 16) {
        memcpy(dst, src, n);
    } else if (n >= 8) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else {
        for (size_t i = 0; i < n; i++)
            dst[i] = src[i];
    }
}

/* Byte-wise order of two strings, shorter first on a common prefix (redis's sdscmp). */
static inline int bytes_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    int r = memcmp(a, b, alen < blen ? alen : blen);
    if (r != 0)
        return r;
    return alen < blen ? -1 : alen > blen;
}

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

/* redis's glob (stringmatchlen): *, ?, [abc], [^a], [a-z], \x; nocase folds ASCII case. */
bool glob_match(const char *pat, size_t plen, const char *s, size_t slen, bool nocase);

/* The keyed hash of the dictionaries; the seed is random per process (hash_init). */
void hash_init(void);
uint64_t hash_bytes(const void *p, size_t len);

/* Wall-clock time in milliseconds (expiry times are absolute, as redis's). */
long long now_ms(void);
/* Monotonic time in milliseconds (timers). */
long long monotonic_ms(void);

/* A fast, non-cryptographic random number (SPOP, skiplist levels, expiry sampling). */
uint64_t random_u64(void);

#endif
