/* Unit tests of the strict number and address parsers both command lines use. */
#include "check.h"
#include "options.h"

static void test_parse_u64(void) {
    uint64_t v = 0;
    CHECK(options_parse_u64("7700", 1, 65535, &v) == 0 && v == 7700);
    CHECK(options_parse_u64("0", 0, 10, &v) == 0 && v == 0);
    CHECK(options_parse_u64("18446744073709551615", 0, UINT64_MAX, &v) == 0 && v == UINT64_MAX);
    CHECK(options_parse_u64("18446744073709551616", 0, UINT64_MAX, &v) != 0);
    CHECK(options_parse_u64("65536", 1, 65535, &v) != 0);
    CHECK(options_parse_u64("0", 1, 65535, &v) != 0);
    CHECK(options_parse_u64("-1", 0, UINT64_MAX, &v) != 0);
    CHECK(options_parse_u64(" 1", 0, 10, &v) != 0);
    CHECK(options_parse_u64("1x", 0, 10, &v) != 0);
    CHECK(options_parse_u64("", 0, 10, &v) != 0);
}

static void test_parse_ipv4(void) {
    struct in_addr a = {0};
    CHECK(options_parse_ipv4("127.0.0.2", &a) == 0 && a.s_addr == htonl(0x7f000002));
    CHECK(options_parse_ipv4("0.0.0.0", &a) == 0 && a.s_addr == 0);
    CHECK(options_parse_ipv4("nope", &a) != 0);
    CHECK(options_parse_ipv4("300.1.1.1", &a) != 0);
    CHECK(options_parse_ipv4("", &a) != 0); /* not "any address" */
    CHECK(options_parse_ipv4("localhost", &a) != 0);
    CHECK(options_parse_ipv4("::1", &a) != 0);
    CHECK(options_parse_ipv4("127.0.0.1 ", &a) != 0);
}

int main(void) {
    RUN(test_parse_u64);
    RUN(test_parse_ipv4);
    return check_failures ? 1 : 0;
}
