/* A tiny assertion helper for the unit tests: unlike assert(), it survives -DNDEBUG. */
#ifndef ECHONET_TEST_CHECK_H
#define ECHONET_TEST_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            check_failures++;                                                                      \
        }                                                                                          \
    } while (0)

#define RUN(test)                                                                                  \
    do {                                                                                           \
        int before = check_failures;                                                               \
        test();                                                                                    \
        fprintf(stderr, "%s %s\n", check_failures == before ? "ok  " : "FAIL", #test);             \
    } while (0)

/* Bytes written as in SPEC.md ("10 81 00 02 ..."), parsed into out; returns the count. */
static inline size_t hex_bytes(const char *text, uint8_t *out) {
    size_t n = 0;
    unsigned v;
    int used;
    while (sscanf(text, " %2x%n", &v, &used) == 1) {
        out[n++] = (uint8_t)v;
        text += used;
    }
    return n;
}

/* Whether got[0 .. got_len) is exactly the bytes of `text`; prints both when not. */
static inline int bytes_equal(const uint8_t *got, size_t got_len, const char *text) {
    uint8_t want[4096];
    size_t want_len = hex_bytes(text, want);
    if (got_len == want_len && memcmp(got, want, want_len) == 0)
        return 1;
    fprintf(stderr, "  want (%zu):", want_len);
    for (size_t i = 0; i < want_len; i++)
        fprintf(stderr, " %02x", want[i]);
    fprintf(stderr, "\n  got  (%zu):", got_len);
    for (size_t i = 0; i < got_len; i++)
        fprintf(stderr, " %02x", got[i]);
    fprintf(stderr, "\n");
    return 0;
}

#endif
