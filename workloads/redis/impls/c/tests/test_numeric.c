/* Unit tests of numeric.c: redis's number rules. */
#include "check.h"
#include "numeric.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

static bool ll(const char *s, long long *v) {
    return parse_ll(s, strlen(s), v);
}

static void test_parse_ll(void) {
    long long v;
    CHECK(ll("0", &v) && v == 0);
    CHECK(ll("-1", &v) && v == -1);
    CHECK(ll("9223372036854775807", &v) && v == INT64_MAX);
    CHECK(ll("-9223372036854775808", &v) && v == INT64_MIN);
    CHECK(!ll("9223372036854775808", &v));
    CHECK(!ll("-9223372036854775809", &v));
    CHECK(!ll("", &v) && !ll("-", &v) && !ll("01", &v) && !ll("-0", &v) && !ll("+1", &v));
    CHECK(!ll(" 1", &v) && !ll("1 ", &v) && !ll("1.0", &v) && !ll("0x1", &v));
    CHECK(!ll("99999999999999999999", &v));
    CHECK(!parse_ll("1\0", 2, &v));
}

static void test_parse_double(void) {
    double d;
    CHECK(parse_double("1.5", 3, &d) && d == 1.5);
    CHECK(parse_double("-inf", 4, &d) && isinf(d) && d < 0);
    CHECK(parse_double("+inf", 4, &d) && isinf(d));
    CHECK(parse_double("1e2", 3, &d) && d == 100);
    CHECK(parse_double("0x10", 4, &d) && d == 16);
    CHECK(!parse_double("nan", 3, &d));
    CHECK(!parse_double(" 1", 2, &d) && !parse_double("1 ", 2, &d));
    CHECK(!parse_double("", 0, &d) && !parse_double("abc", 3, &d));
    CHECK(!parse_double("1e999", 5, &d) && !parse_double("1e-999", 6, &d));
    CHECK(!parse_double("1\0", 2, &d));
    long double ld;
    CHECK(parse_long_double("1.5", 3, &ld) && ld == 1.5L);
    CHECK(!parse_long_double("nan", 3, &ld));
    CHECK(!parse_long_double("1\0x", 3, &ld) && !parse_long_double("\0", 1, &ld));
}

static void test_format(void) {
    char buf[NUM_BUF];
    CHECK(format_ll(buf, INT64_MIN) == 20 && strcmp(buf, "-9223372036854775808") == 0);
    CHECK(format_ll(buf, 0) == 1 && strcmp(buf, "0") == 0);
    format_double(buf, 0.1);
    CHECK(strcmp(buf, "0.10000000000000001") == 0);
    format_double(buf, 123456789012345678.0);
    CHECK(strcmp(buf, "1.2345678901234568e+17") == 0);
    format_double(buf, 1e16);
    CHECK(strcmp(buf, "10000000000000000") == 0);
    format_double(buf, -2.5);
    CHECK(strcmp(buf, "-2.5") == 0);
    format_double(buf, 1.5e-7);
    CHECK(strcmp(buf, "1.4999999999999999e-07") == 0);
    char lbuf[LONG_DOUBLE_BUF];
    format_long_double(lbuf, 10.5L);
    CHECK(strcmp(lbuf, "10.5") == 0);
    format_long_double(lbuf, 3.0L);
    CHECK(strcmp(lbuf, "3") == 0);
    format_long_double(lbuf, -0.0L);
    CHECK(strcmp(lbuf, "0") == 0);
    format_long_double(lbuf, 0.1L + 0.2L);
    CHECK(strcmp(lbuf, "0.3") == 0);
}

int main(void) {
    RUN(test_parse_ll);
    RUN(test_parse_double);
    RUN(test_format);
    return TESTS_DONE();
}
