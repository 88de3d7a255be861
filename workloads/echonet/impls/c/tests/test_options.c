/* Unit tests of the command-line parsers of both programs. */
#include "check.h"
#include "options.h"

#include <arpa/inet.h>

static void test_parse_u64(void) {
    uint64_t v = 0;
    CHECK(options_parse_u64("3610", 1, 65535, &v) == 0 && v == 3610);
    CHECK(options_parse_u64("0", 0, 10, &v) == 0 && v == 0);
    CHECK(options_parse_u64("65536", 1, 65535, &v) != 0);
    CHECK(options_parse_u64("0", 1, 65535, &v) != 0);
    CHECK(options_parse_u64("-1", 0, UINT64_MAX, &v) != 0);
    CHECK(options_parse_u64("+1", 0, 10, &v) != 0);
    CHECK(options_parse_u64(" 1", 0, 10, &v) != 0);
    CHECK(options_parse_u64("1x", 0, 10, &v) != 0);
    CHECK(options_parse_u64("", 0, 10, &v) != 0);
    CHECK(options_parse_u64("18446744073709551616", 0, UINT64_MAX, &v) != 0);
}

static void test_parse_ipv4(void) {
    struct in_addr a;
    CHECK(options_parse_ipv4("127.0.10.1", &a) == 0 && a.s_addr == htonl(0x7F000A01));
    CHECK(options_parse_ipv4("0.0.0.0", &a) == 0 && a.s_addr == 0);
    CHECK(options_parse_ipv4("127.1", &a) != 0);
    CHECK(options_parse_ipv4("256.0.0.1", &a) != 0);
    CHECK(options_parse_ipv4("1.2.3.4 ", &a) != 0);
    CHECK(options_parse_ipv4("localhost", &a) != 0);
    CHECK(options_parse_ipv4("", &a) != 0);
}

static void test_parse_eoj(void) {
    uint32_t eoj = 0;
    CHECK(options_parse_eoj("0ef001", &eoj) == 0 && eoj == 0x0EF001);
    CHECK(options_parse_eoj("0EF001", &eoj) == 0 && eoj == 0x0EF001);
    CHECK(options_parse_eoj("013000", &eoj) == 0 && eoj == 0x013000);
    CHECK(options_parse_eoj("0ef00", &eoj) != 0);
    CHECK(options_parse_eoj("0ef0011", &eoj) != 0);
    CHECK(options_parse_eoj("0xf001", &eoj) != 0);
    CHECK(options_parse_eoj("", &eoj) != 0);
}

static void test_parse_epcs(void) {
    uint8_t epcs[255];
    size_t n = 0;
    CHECK(options_parse_epcs("80,82,D6", epcs, &n) == 0 && n == 3);
    CHECK(epcs[0] == 0x80 && epcs[1] == 0x82 && epcs[2] == 0xD6);
    CHECK(options_parse_epcs("80", epcs, &n) == 0 && n == 1);
    CHECK(options_parse_epcs("80,80", epcs, &n) == 0 && n == 2); /* duplicates are asked twice */
    CHECK(options_parse_epcs("", epcs, &n) != 0);
    CHECK(options_parse_epcs("8", epcs, &n) != 0);
    CHECK(options_parse_epcs("800", epcs, &n) != 0);
    CHECK(options_parse_epcs("80,", epcs, &n) != 0);
    CHECK(options_parse_epcs(",80", epcs, &n) != 0);
    CHECK(options_parse_epcs("80;82", epcs, &n) != 0);
    CHECK(options_parse_epcs("zz", epcs, &n) != 0);
    char many[256 * 3 + 1] = "";
    for (int i = 0; i < 256; i++)
        strcat(many, i ? ",80" : "80");
    CHECK(options_parse_epcs(many, epcs, &n) != 0); /* OPC has room for 255 */
    many[255 * 3 - 1] = '\0';
    CHECK(options_parse_epcs(many, epcs, &n) == 0 && n == 255);
}

static void test_parse_sets(void) {
    static struct options_set sets[255];
    size_t n = 0;
    CHECK(options_parse_sets("80=30,b3=19", sets, &n) == 0 && n == 2);
    CHECK(sets[0].epc == 0x80 && sets[0].pdc == 1 && sets[0].edt[0] == 0x30);
    CHECK(sets[1].epc == 0xB3 && sets[1].pdc == 1 && sets[1].edt[0] == 0x19);
    CHECK(options_parse_sets("97=0C00", sets, &n) == 0 && n == 1 && sets[0].pdc == 2);
    CHECK(sets[0].edt[0] == 0x0C && sets[0].edt[1] == 0x00);
    CHECK(options_parse_sets("80=", sets, &n) == 0 && n == 1 && sets[0].pdc == 0);
    CHECK(options_parse_sets("80=3", sets, &n) != 0);
    CHECK(options_parse_sets("80", sets, &n) != 0);
    CHECK(options_parse_sets("80=30,", sets, &n) != 0);
    CHECK(options_parse_sets("=30", sets, &n) != 0);
    CHECK(options_parse_sets("80=3g", sets, &n) != 0);
    char big[3 + 2 * 256 + 1] = "80=";
    for (int i = 0; i < 256; i++)
        strcat(big, "ab");
    CHECK(options_parse_sets(big, sets, &n) != 0); /* PDC has room for 255 */
    big[3 + 2 * 255] = '\0';
    CHECK(options_parse_sets(big, sets, &n) == 0 && sets[0].pdc == 255);
}

static void test_match(void) {
    char *argv[] = {"prog", "--port", "3610", "--port=7", "--portx", "--port"};
    const char *v = 0;
    int i = 1;
    CHECK(options_match(6, argv, &i, "--port", &v) == 1 && i == 2 && strcmp(v, "3610") == 0);
    i = 3;
    CHECK(options_match(6, argv, &i, "--port", &v) == 1 && i == 3 && strcmp(v, "7") == 0);
    i = 4;
    CHECK(options_match(6, argv, &i, "--port", &v) == 0);
    i = 5;
    CHECK(options_match(6, argv, &i, "--port", &v) == -1);
    i = 1;
    CHECK(options_match(6, argv, &i, "--bind", &v) == 0 && i == 1);
}

int main(void) {
    RUN(test_parse_u64);
    RUN(test_parse_ipv4);
    RUN(test_parse_eoj);
    RUN(test_parse_epcs);
    RUN(test_parse_sets);
    RUN(test_match);
    return check_failures ? 1 : 0;
}
