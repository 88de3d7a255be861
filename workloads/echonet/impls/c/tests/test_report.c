/* Unit tests of the controller's JSON output (SPEC §8), written to memory and compared. */
#include "check.h"
#include "frame.h"
#include "report.h"

#include <arpa/inet.h>

static char *text;
static size_t text_len;

static FILE *open_text(void) {
    free(text);
    text = 0;
    return open_memstream(&text, &text_len);
}

static int printed(FILE *f, const char *want) {
    fclose(f);
    if (strcmp(text, want) == 0)
        return 1;
    fprintf(stderr, "  want: %s  got:  %s", want, text);
    return 0;
}

static struct in_addr addr(const char *s) {
    struct in_addr a;
    inet_pton(AF_INET, s, &a);
    return a;
}

static struct frame f;

static void decode(const char *hex) {
    static uint8_t buf[256];
    size_t len = hex_bytes(hex, buf);
    CHECK(frame_decode(buf, len, &f) == FRAME_OK);
}

static void test_reply(void) {
    decode("10 81 00 01 0E F0 01 05 FF 01 72 02 80 01 30 82 04 01 0E 01 00");
    FILE *o = open_text();
    report_reply(o, addr("127.0.0.1"), &f, 1, 0);
    CHECK(printed(o, "{\"host\": \"127.0.0.1\", \"tid\": \"0001\", \"seoj\": \"0ef001\", "
                     "\"deoj\": \"05ff01\", \"esv\": \"72\", \"properties\": [{\"epc\": \"80\", "
                     "\"edt\": \"30\"}, {\"epc\": \"82\", \"edt\": \"010e0100\"}], "
                     "\"attempts\": 1, \"ignored\": 0}\n"));
}

static void test_refusal_and_empty_edt(void) {
    decode("10 81 AB CD 01 30 01 05 FF 01 51 02 80 00 B3 01 99");
    FILE *o = open_text();
    report_reply(o, addr("10.201.0.2"), &f, 3, 7);
    CHECK(printed(o, "{\"host\": \"10.201.0.2\", \"tid\": \"abcd\", \"seoj\": \"013001\", "
                     "\"deoj\": \"05ff01\", \"esv\": \"51\", \"properties\": [{\"epc\": \"80\", "
                     "\"edt\": \"\"}, {\"epc\": \"b3\", \"edt\": \"99\"}], \"attempts\": 3, "
                     "\"ignored\": 7}\n"));
}

static void test_setget_reply(void) {
    decode("10 81 00 02 01 30 01 05 FF 01 7E 01 80 00 02 80 01 30 B3 01 14");
    FILE *o = open_text();
    report_reply(o, addr("127.0.0.1"), &f, 1, 0);
    CHECK(printed(o, "{\"host\": \"127.0.0.1\", \"tid\": \"0002\", \"seoj\": \"013001\", "
                     "\"deoj\": \"05ff01\", \"esv\": \"7e\", \"set\": [{\"epc\": \"80\", "
                     "\"edt\": \"\"}], \"get\": [{\"epc\": \"80\", \"edt\": \"30\"}, "
                     "{\"epc\": \"b3\", \"edt\": \"14\"}], \"attempts\": 1, \"ignored\": 0}\n"));
}

static void test_no_reply(void) {
    FILE *o = open_text();
    report_no_reply(o, addr("127.0.0.1"), 0x0102, 1, 0);
    CHECK(printed(o,
                  "{\"host\": \"127.0.0.1\", \"tid\": \"0102\", \"seoj\": null, \"deoj\": "
                  "null, \"esv\": null, \"properties\": [], \"attempts\": 1, \"ignored\": 0}\n"));
}

static void test_discovery(void) {
    struct controller_node nodes[2] = {
        {.host = addr("10.201.0.2"), .eoj = 0x0EF001, .count = 1, .instances = {0x013001}},
        {.host = addr("10.201.0.3"), .eoj = 0x0EF001, .count = 0},
    };
    struct controller_discovery d = {
        .nodes = nodes, .count = 2, .attempts = 1, .elapsed_s = 0.0021};
    FILE *o = open_text();
    report_discovery(o, &d, 2);
    CHECK(printed(o, "{\"nodes\": [{\"host\": \"10.201.0.2\", \"eoj\": \"0ef001\", "
                     "\"instances\": [\"013001\"]}, {\"host\": \"10.201.0.3\", \"eoj\": "
                     "\"0ef001\", \"instances\": []}], \"elapsed_s\": 0.002100, \"attempts\": 1, "
                     "\"ignored\": 2}\n"));
    d.count = 0;
    o = open_text();
    report_discovery(o, &d, 0);
    CHECK(
        printed(o, "{\"nodes\": [], \"elapsed_s\": 0.002100, \"attempts\": 1, \"ignored\": 0}\n"));
}

static void test_bench(void) {
    FILE *o = open_text();
    report_bench(o, "faithful", 10000, 120000, 3.21, 0, 0);
    CHECK(printed(o, "{\"mode\": \"faithful\", \"iterations\": 10000, \"requests\": 120000, "
                     "\"elapsed_s\": 3.210000, \"retries\": 0, \"ignored\": 0}\n"));
}

static void test_error_is_escaped(void) {
    FILE *o = open_text();
    report_error(o, "a \"quoted\" \\ word\nand a tab\t");
    CHECK(printed(o, "{\"error\": \"a \\\"quoted\\\" \\\\ word\\u000aand a tab\\u0009\"}\n"));
}

int main(void) {
    RUN(test_reply);
    RUN(test_refusal_and_empty_edt);
    RUN(test_setget_reply);
    RUN(test_no_reply);
    RUN(test_discovery);
    RUN(test_bench);
    RUN(test_error_is_escaped);
    free(text);
    return check_failures ? 1 : 0;
}
