/* A tiny assertion helper for the unit tests: unlike assert(), it survives -DNDEBUG. */
#ifndef CAPNP_BASELINE_TEST_CHECK_H
#define CAPNP_BASELINE_TEST_CHECK_H

#include <stdio.h>

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

#endif
