/* Unit tests of the responder: one request in, the exact reply bytes out (SPEC §6). */
#include "check.h"
#include "frame.h"
#include "objects.h"
#include "responder.h"

#define SPEC_GET_36                                                                                \
    "10 81 00 02 0E F0 01 0E F0 01 62 0C 80 00 82 00 83 00 8A 00 9D 00 9E 00 9F 00 D3 00 D4 00 "   \
    "D5 00 D6 00 D7 00"
#define SPEC_REPLY_94                                                                              \
    "10 81 00 02 0E F0 01 0E F0 01 72 0C 80 01 30 82 04 01 0E 01 00 83 11 FE FF FF FF 00 00 00 "   \
    "00 00 00 00 00 00 7F 00 00 01 8A 03 FF FF FF 9D 03 02 80 D5 9E 01 00 9F 0D 0C 80 82 83 8A "   \
    "9D 9E 9F D3 D4 D5 D6 D7 D3 03 00 00 01 D4 02 00 02 D5 04 01 01 30 01 D6 04 01 01 30 01 D7 "   \
    "03 01 01 30"

static struct node_objects node;
static struct frame req;
static uint8_t out[FRAME_MAX_DATAGRAM];
static size_t out_len;

/* Decodes the request `text` and answers it. */
static enum responder_outcome answer(const char *text) {
    static uint8_t buf[4096];
    size_t len = hex_bytes(text, buf);
    if (frame_decode(buf, len, &req) != FRAME_OK) {
        fprintf(stderr, "  request does not decode: %s\n", text);
        return (enum responder_outcome) - 1;
    }
    out_len = 0;
    return responder_handle(&node, &req, out, sizeof out, &out_len);
}

static int replies(const char *request, const char *reply) {
    return answer(request) == RESPONDER_REPLY && bytes_equal(out, out_len, reply) &&
           out_len <= responder_reply_bound(&req);
}

static void setup(void) {
    objects_init(&node, (const uint8_t[]){127, 0, 0, 1});
}

static void test_the_spec_get(void) {
    setup();
    CHECK(replies(SPEC_GET_36, SPEC_REPLY_94));
}

static void test_one_property_gets(void) {
    setup();
    /* TID copied, SEOJ the object, DEOJ the request's SEOJ. */
    CHECK(replies("10 81 AB CD 05 FF 01 0E F0 01 62 01 D6 00",
                  "10 81 AB CD 0E F0 01 05 FF 01 72 01 D6 04 01 01 30 01"));
    /* A Get's EDT is ignored. */
    CHECK(replies("10 81 00 05 05 FF 01 0E F0 01 62 01 80 01 31",
                  "10 81 00 05 0E F0 01 05 FF 01 72 01 80 01 30"));
}

static void test_get_sna_keeps_order_and_duplicates(void) {
    setup();
    CHECK(replies("10 81 00 03 05 FF 01 01 30 01 62 04 80 00 C0 00 80 00 B3 00",
                  "10 81 00 03 01 30 01 05 FF 01 52 04 80 01 31 C0 00 80 01 31 B3 01 14"));
}

static void test_instance_zero_and_unknown_objects(void) {
    setup();
    CHECK(replies("10 81 00 04 05 FF 01 0E F0 00 62 01 80 00",
                  "10 81 00 04 0E F0 01 05 FF 01 72 01 80 01 30"));
    CHECK(replies("10 81 00 04 05 FF 01 01 30 00 62 01 80 00",
                  "10 81 00 04 01 30 01 05 FF 01 72 01 80 01 31"));
    CHECK(answer("10 81 00 04 05 FF 01 0E F0 02 62 01 80 00") == RESPONDER_IGNORED);
    CHECK(answer("10 81 00 04 05 FF 01 01 30 02 62 01 80 00") == RESPONDER_IGNORED);
    CHECK(answer("10 81 00 04 05 FF 01 05 FF 01 62 01 80 00") == RESPONDER_IGNORED);
    CHECK(answer("10 81 00 04 05 FF 01 01 31 01 62 01 80 00") == RESPONDER_IGNORED);
}

static void test_non_requests_are_ignored(void) {
    setup();
    const uint8_t esvs[] = {0x72, 0x52, 0x71, 0x73, 0x7A, 0x50, 0x00, 0x64, 0xFF};
    char text[80];
    for (size_t i = 0; i < sizeof esvs; i++) {
        snprintf(text, sizeof text, "10 81 00 01 05 FF 01 0E F0 01 %02X 01 80 00", esvs[i]);
        CHECK(answer(text) == RESPONDER_IGNORED);
    }
    /* The node's own start INF, looped back. */
    CHECK(answer("10 81 00 01 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01") == RESPONDER_IGNORED);
}

static void test_seti(void) {
    setup();
    CHECK(answer("10 81 00 06 05 FF 01 01 30 01 60 02 80 01 30 B3 01 19") == RESPONDER_NO_REPLY);
    CHECK(replies("10 81 00 07 05 FF 01 01 30 01 62 02 80 00 B3 00",
                  "10 81 00 07 01 30 01 05 FF 01 72 02 80 01 30 B3 01 19"));
    /* Refused: the request's PDC and EDT back; the accepted one stays applied. */
    CHECK(replies("10 81 00 08 05 FF 01 01 30 01 60 03 80 01 31 B3 01 33 88 02 41 42",
                  "10 81 00 08 01 30 01 05 FF 01 50 03 80 00 B3 01 33 88 02 41 42"));
    CHECK(replies("10 81 00 09 05 FF 01 01 30 01 62 02 80 00 B3 00",
                  "10 81 00 09 01 30 01 05 FF 01 72 02 80 01 31 B3 01 19"));
}

static void test_setc(void) {
    setup();
    CHECK(replies("10 81 00 0A 05 FF 01 01 30 01 61 02 A0 01 35 B0 01 42",
                  "10 81 00 0A 01 30 01 05 FF 01 71 02 A0 00 B0 00"));
    CHECK(replies("10 81 00 0B 05 FF 01 01 30 01 61 02 A0 01 39 B0 01 45",
                  "10 81 00 0B 01 30 01 05 FF 01 51 02 A0 01 39 B0 00"));
    CHECK(replies("10 81 00 0C 05 FF 01 01 30 01 62 02 A0 00 B0 00",
                  "10 81 00 0C 01 30 01 05 FF 01 72 02 A0 01 35 B0 01 45"));
    /* The node profile has nothing settable. */
    CHECK(replies("10 81 00 0D 05 FF 01 0E F0 01 61 01 80 01 30",
                  "10 81 00 0D 0E F0 01 05 FF 01 51 01 80 01 30"));
}

static void test_setget(void) {
    setup();
    /* Sets first: the get part reads the value just written. */
    CHECK(replies("10 81 00 0E 05 FF 01 01 30 01 6E 01 80 01 30 02 80 00 B3 00",
                  "10 81 00 0E 01 30 01 05 FF 01 7E 01 80 00 02 80 01 30 B3 01 14"));
    CHECK(replies("10 81 00 0F 05 FF 01 01 30 01 6E 01 B3 01 40 02 B3 00 C0 00",
                  "10 81 00 0F 01 30 01 05 FF 01 5E 01 B3 01 40 02 B3 01 14 C0 00"));
    /* A failure in the get part alone also makes it a SetGet_SNA. */
    CHECK(replies("10 81 00 10 05 FF 01 01 30 01 6E 01 81 01 07 01 C0 00",
                  "10 81 00 10 01 30 01 05 FF 01 5E 01 81 00 01 C0 00"));
    CHECK(replies("10 81 00 11 05 FF 01 01 30 01 6E 00 01 81 00",
                  "10 81 00 11 01 30 01 05 FF 01 7E 00 01 81 01 07"));
}

static void test_inf_req_and_infc(void) {
    setup();
    CHECK(replies("10 81 00 12 05 FF 01 0E F0 01 63 01 D5 00",
                  "10 81 00 12 0E F0 01 05 FF 01 73 01 D5 04 01 01 30 01"));
    CHECK(replies("10 81 00 13 05 FF 01 0E F0 01 63 02 D5 00 81 00",
                  "10 81 00 13 0E F0 01 05 FF 01 53 02 D5 04 01 01 30 01 81 00"));
    CHECK(replies("10 81 00 14 05 FF 01 01 30 01 74 02 80 01 30 C0 00",
                  "10 81 00 14 01 30 01 05 FF 01 7A 02 80 00 C0 00"));
}

static void test_reply_too_large(void) {
    setup();
    static uint8_t buf[FRAME_RECV_BUFFER];
    size_t len = hex_bytes("10 81 00 01 05 FF 01 0E F0 01 62 FF", buf);
    for (int i = 0; i < 255; i++) {
        buf[len++] = 0x83; /* 17 bytes each in the reply */
        buf[len++] = 0;
    }
    CHECK(frame_decode(buf, len, &req) == FRAME_OK);
    CHECK(responder_handle(&node, &req, out, sizeof out, &out_len) == RESPONDER_REPLY);
    CHECK(out_len == 12 + 255 * 19 && out_len <= responder_reply_bound(&req));
    CHECK(responder_handle(&node, &req, out, 1000, &out_len) == RESPONDER_TOO_LARGE);
}

int main(void) {
    RUN(test_the_spec_get);
    RUN(test_one_property_gets);
    RUN(test_get_sna_keeps_order_and_duplicates);
    RUN(test_instance_zero_and_unknown_objects);
    RUN(test_non_requests_are_ignored);
    RUN(test_seti);
    RUN(test_setc);
    RUN(test_setget);
    RUN(test_inf_req_and_infc);
    RUN(test_reply_too_large);
    return check_failures ? 1 : 0;
}
