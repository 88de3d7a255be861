#define _GNU_SOURCE
#include "util.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <time.h>

bool parse_ll(const char *s, size_t len, long long *out) {
    /* 20 digits and a sign at most, as redis (LONG_STR_SIZE). */
    if (len == 0 || len >= 21)
        return false;
    if (len == 1 && s[0] == '0') {
        *out = 0;
        return true;
    }
    size_t i = 0;
    bool negative = false;
    if (s[0] == '-') {
        negative = true;
        if (++i == len)
            return false;
    }
    if (s[i] < '1' || s[i] > '9')
        return false;
    unsigned long long v = 0;
    for (; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return false;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (UINT64_MAX - d) / 10)
            return false;
        v = v * 10 + d;
    }
    if (negative) {
        if (v > (unsigned long long)INT64_MAX + 1)
            return false;
        *out = (long long)(0 - v);
    } else {
        if (v > (unsigned long long)INT64_MAX)
            return false;
        *out = (long long)v;
    }
    return true;
}

/* strtod/strtold need a terminated string: arguments are not, so they are copied (on the
 * stack when short, which is every real score). */
#define SHORT_NUMBER 128

bool parse_double(const char *s, size_t len, double *out) {
    if (len == 0 || isspace((unsigned char)s[0]))
        return false;
    char stack[SHORT_NUMBER];
    char *buf = len < sizeof stack ? stack : malloc(len + 1);
    if (!buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double v = strtod(buf, &end);
    bool ok = (size_t)(end - buf) == len && !isnan(v) &&
              !(errno == ERANGE && (v == HUGE_VAL || v == -HUGE_VAL || v == 0));
    if (buf != stack)
        free(buf);
    if (ok)
        *out = v;
    return ok;
}

bool parse_long_double(const char *s, size_t len, long double *out) {
    if (len == 0 || len >= LONG_DOUBLE_BUF || isspace((unsigned char)s[0]))
        return false;
    char stack[SHORT_NUMBER];
    char *buf = len < sizeof stack ? stack : malloc(len + 1);
    if (!buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    long double v = strtold(buf, &end);
    bool ok = (size_t)(end - buf) == len && !isnan(v) && errno != EINVAL &&
              !(errno == ERANGE && (v == HUGE_VALL || v == -HUGE_VALL || v == 0));
    if (buf != stack)
        free(buf);
    if (ok)
        *out = v;
    return ok;
}

size_t format_ll(char *buf, long long v) {
    static const char pairs[] = "00010203040506070809101112131415161718192021222324252627282930"
                                "31323334353637383940414243444546474849505152535455565758596061"
                                "6263646566676869707172737475767778798081828384858687888990919293"
                                "949596979899";
    char tmp[24];
    char *p = tmp + sizeof tmp;
    unsigned long long u = v < 0 ? 0 - (unsigned long long)v : (unsigned long long)v;
    /* Two digits per division. */
    while (u >= 100) {
        unsigned i = (unsigned)(u % 100) * 2;
        u /= 100;
        *--p = pairs[i + 1];
        *--p = pairs[i];
    }
    if (u >= 10) {
        *--p = pairs[u * 2 + 1];
        *--p = pairs[u * 2];
    } else {
        *--p = (char)('0' + u);
    }
    if (v < 0)
        *--p = '-';
    size_t n = (size_t)(tmp + sizeof tmp - p);
    memcpy(buf, p, n);
    buf[n] = '\0';
    return n;
}

size_t format_double(char *buf, double d) {
    /* "%.17g" prints an integral value below 1e17 as a plain integer: skip snprintf for the
     * common case of small integral scores (exact below 2^53). -0 keeps its sign. */
    if (d == 0 && !signbit(d)) {
        buf[0] = '0';
        buf[1] = '\0';
        return 1;
    }
    if (d > -1e15 && d < 1e15 && d != 0 && d == (double)(long long)d)
        return format_ll(buf, (long long)d);
    return (size_t)snprintf(buf, NUM_BUF, "%.17g", d);
}

size_t format_long_double(char *buf, long double v) {
    int n = snprintf(buf, LONG_DOUBLE_BUF, "%.17Lf", v);
    if (n < 0 || n >= LONG_DOUBLE_BUF)
        return 0;
    size_t len = (size_t)n;
    if (memchr(buf, '.', len)) {
        while (buf[len - 1] == '0')
            len--;
        if (buf[len - 1] == '.')
            len--;
    }
    if (len == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        len = 1;
    }
    buf[len] = '\0';
    return len;
}

/* The matcher works on signed chars, as redis's does: that decides how byte ranges above 0x7f
 * compare in [a-z] classes. */
static bool glob_impl(const signed char *pat, size_t plen, const signed char *s, size_t slen,
                      bool nocase, bool *give_up) {
    while (plen && slen) {
        switch (pat[0]) {
        case '*':
            while (plen > 1 && pat[1] == '*') {
                pat++;
                plen--;
            }
            if (plen == 1)
                return true;
            while (slen) {
                if (glob_impl(pat + 1, plen - 1, s, slen, nocase, give_up))
                    return true;
                if (*give_up)
                    return false;
                s++;
                slen--;
            }
            /* The rest of the pattern matches nowhere in the rest of the string, so no
             * earlier '*' can help by swallowing more: stop the whole search (this keeps
             * patterns like "a*a*a*a*b" linear instead of exponential). */
            *give_up = true;
            return false;
        case '?':
            s++;
            slen--;
            break;
        case '[': {
            pat++;
            plen--;
            bool negate = plen && pat[0] == '^';
            if (negate) {
                pat++;
                plen--;
            }
            bool match = false;
            for (;;) {
                if (plen == 0) {
                    /* An unterminated class ends at the end of the pattern. */
                    pat--;
                    plen++;
                    break;
                }
                if (pat[0] == '\\' && plen >= 2) {
                    pat++;
                    plen--;
                    if (pat[0] == s[0])
                        match = true;
                } else if (pat[0] == ']') {
                    break;
                } else if (plen >= 3 && pat[1] == '-') {
                    int lo = pat[0], hi = pat[2], c = s[0];
                    if (lo > hi) {
                        int t = lo;
                        lo = hi;
                        hi = t;
                    }
                    if (nocase) {
                        lo = tolower(lo);
                        hi = tolower(hi);
                        c = tolower(c);
                    }
                    pat += 2;
                    plen -= 2;
                    if (c >= lo && c <= hi)
                        match = true;
                } else if (nocase ? tolower(pat[0]) == tolower(s[0]) : pat[0] == s[0]) {
                    match = true;
                }
                pat++;
                plen--;
            }
            if (negate)
                match = !match;
            if (!match)
                return false;
            s++;
            slen--;
            break;
        }
        case '\\':
            if (plen >= 2) {
                pat++;
                plen--;
            }
            /* fall through */
        default:
            if (nocase ? tolower(pat[0]) != tolower(s[0]) : pat[0] != s[0])
                return false;
            s++;
            slen--;
            break;
        }
        pat++;
        plen--;
        if (slen == 0) {
            while (plen && pat[0] == '*') {
                pat++;
                plen--;
            }
            break;
        }
    }
    return plen == 0 && slen == 0;
}

bool glob_match(const char *pat, size_t plen, const char *s, size_t slen, bool nocase) {
    bool give_up = false;
    return glob_impl((const signed char *)pat, plen, (const signed char *)s, slen, nocase,
                     &give_up);
}

/*
 * The dictionaries' hash: 8 bytes at a time folded through a 64x64->128-bit multiply (the
 * high and low halves xor-ed), keyed with a random seed so request data cannot pick the
 * buckets. Short keys (the common case: 10-20 bytes) cost two or three multiplies.
 */
static uint64_t hash_seed;
static uint64_t rng_state;

static inline uint64_t fold_mul(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

uint64_t hash_bytes(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = hash_seed ^ (len * 0x9e3779b97f4a7c15ull);
    while (len >= 8) {
        h = fold_mul(h ^ load64(p), 0xa0761d6478bd642full);
        p += 8;
        len -= 8;
    }
    uint64_t tail = 0;
    if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + len - 4, 4);
        tail = ((uint64_t)a << 32) | b;
    } else if (len > 0) {
        tail = ((uint64_t)p[0] << 16) | ((uint64_t)p[len >> 1] << 8) | p[len - 1];
    }
    h = fold_mul(h ^ tail ^ 0xe7037ed1a0b428dbull, 0x8ebc6af09c88c6e3ull);
    return fold_mul(h, 0x589965cc75374cc3ull);
}

void hash_init(void) {
    uint64_t seed[2];
    if (getrandom(seed, sizeof seed, 0) != sizeof seed) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seed[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec;
        seed[1] = seed[0] ^ 0x5851f42d4c957f2dull;
    }
    hash_seed = seed[0];
    rng_state = seed[1] | 1;
}

uint64_t random_u64(void) {
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
