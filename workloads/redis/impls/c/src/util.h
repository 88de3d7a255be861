/*
 * Small helpers shared by every part of the server: byte slices, the keyed hash, the
 * clocks and the random numbers (numbers are numeric.h, glob matching globmatch.h).
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
 * call for up to 16 bytes (it reads and writes only [0, n) of each side). Below 4 bytes (tested
 * first: redis-benchmark's values are 3), three single-byte moves (first, middle, last cover 1
 * to 3 bytes) rather than a loop: at -P 16 the loop was ~19 instructions per LRANGE element. */
static inline void copy_bytes(char *dst, const char *src, size_t n) {
    if (n < 4) {
        if (n != 0) {
            dst[0] = src[0];
            dst[n / 2] = src[n / 2];
            dst[n - 1] = src[n - 1];
        }
    } else if (n < 8) {
        uint32_t a, b;
        memcpy(&a, src, 4);
        memcpy(&b, src + n - 4, 4);
        memcpy(dst, &a, 4);
        memcpy(dst + n - 4, &b, 4);
    } else if (n <= 16) {
        uint64_t a, b;
        memcpy(&a, src, 8);
        memcpy(&b, src + n - 8, 8);
        memcpy(dst, &a, 8);
        memcpy(dst + n - 8, &b, 8);
    } else {
        memcpy(dst, src, n);
    }
}

/* Byte-wise order of two strings, shorter first on a common prefix (redis's sdscmp). */
static inline int bytes_cmp(const char *a, size_t alen, const char *b, size_t blen) {
    int r = memcmp(a, b, alen < blen ? alen : blen);
    if (r != 0)
        return r;
    return alen < blen ? -1 : alen > blen;
}

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
