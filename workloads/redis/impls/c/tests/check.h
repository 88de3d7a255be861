/* A tiny assertion helper for the unit tests: unlike assert(), it survives -DNDEBUG. */
#ifndef REDIS_C_TEST_CHECK_H
#define REDIS_C_TEST_CHECK_H

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

/* Byte-exact comparison of a buffer with a literal. */
#define CHECK_BYTES(p, n, lit) CHECK((n) == sizeof(lit) - 1 && memcmp((p), (lit), (n)) == 0)

#define RUN(test)                                                                                  \
    do {                                                                                           \
        int before = check_failures;                                                               \
        test();                                                                                    \
        fprintf(stderr, "%s %s\n", check_failures == before ? "ok  " : "FAIL", #test);             \
    } while (0)

#define TESTS_DONE() (check_failures ? (fprintf(stderr, "%d failed\n", check_failures), 1) : 0)

#endif
