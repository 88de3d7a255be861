/* Unit tests of the body pattern (SPEC.md §3): every window of the table is the body. */
#include "check.h"
#include "pattern.h"

static void test_pattern(void) {
    const size_t size = 5000;
    unsigned char *t = pattern_table(size);
    CHECK(t != NULL);
    for (uint64_t c = 0; c < 20; c++)
        for (uint64_t m = 0; m < 300; m += 7) {
            const unsigned char *body = t + pattern_offset(c, m);
            for (size_t i = 0; i < size; i += 13)
                CHECK(body[i] == (c * 7 + m * 13 + i) % 251);
            CHECK(body[size - 1] == (c * 7 + m * 13 + size - 1) % 251);
        }
    /* Large indices must not overflow. */
    CHECK(pattern_offset(UINT64_MAX, UINT64_MAX) < PATTERN_PERIOD);
    free(t);
}

int main(void) {
    RUN(test_pattern);
    return check_failures ? 1 : 0;
}
