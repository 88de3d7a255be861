#define _GNU_SOURCE
#include "numeric.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
