/* Unit tests of the frame: decoding with bounds checks (SPEC §3) and the writer. */
#include "check.h"
#include "frame.h"

#define SPEC_GET_36                                                                                \
    "10 81 00 02 0E F0 01 0E F0 01 62 0C 80 00 82 00 83 00 8A 00 9D 00 9E 00 9F 00 D3 00 D4 00 "   \
    "D5 00 D6 00 D7 00"

static struct frame f;

static enum frame_status decode_hex(const char *text) {
    static uint8_t buf[4096];
    size_t len = hex_bytes(text, buf);
    return frame_decode(buf, len, &f);
}

static void test_decodes_the_spec_get(void) {
    uint8_t buf[64];
    size_t len = hex_bytes(SPEC_GET_36, buf);
    CHECK(len == 36);
    CHECK(frame_decode(buf, len, &f) == FRAME_OK);
    CHECK(f.tid == 0x0002);
    CHECK(f.seoj == EOJ_NODE_PROFILE && f.deoj == EOJ_NODE_PROFILE);
    CHECK(f.esv == ESV_GET && f.opc == 12 && f.opc_get == 0);
    const uint8_t epcs[12] = {0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E,
                              0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7};
    for (int i = 0; i < 12; i++)
        CHECK(f.props[i].epc == epcs[i] && f.props[i].pdc == 0);
}

static void test_every_truncation_is_malformed(void) {
    uint8_t buf[64];
    size_t len = hex_bytes(SPEC_GET_36, buf);
    for (size_t n = 0; n < len; n++)
        CHECK(frame_decode(buf, n, &f) == FRAME_MALFORMED);
}

static void test_header_checks(void) {
    CHECK(decode_hex("11 81 00 01 05 FF 01 0E F0 01 62 01 80 00") == FRAME_MALFORMED);
    CHECK(decode_hex("10 80 00 01 05 FF 01 0E F0 01 62 01 80 00") == FRAME_MALFORMED);
    CHECK(decode_hex("10 83 00 01 05 FF 01 0E F0 01 62 01 80 00") == FRAME_MALFORMED);
    CHECK(decode_hex("10") == FRAME_MALFORMED);
    CHECK(decode_hex("10 81 00 01 05 FF 01 0E F0 01 62") == FRAME_MALFORMED); /* 11 bytes */
}

static void test_format2_is_unsupported_not_malformed(void) {
    CHECK(decode_hex("10 82 00 01 05 FF 01 0E F0 01 62 01 80 00") == FRAME_UNSUPPORTED);
    CHECK(decode_hex("10 82 00 01 AA BB CC DD EE FF 00 11") == FRAME_UNSUPPORTED); /* free-form */
    CHECK(decode_hex("10 82 00 01 AA BB") == FRAME_MALFORMED); /* shorter than 12 bytes */
    CHECK(decode_hex("10 82 00") == FRAME_MALFORMED);
}

static void test_property_bounds(void) {
    CHECK(decode_hex("10 81 00 01 05 FF 01 0E F0 01 62 00") == FRAME_MALFORMED); /* OPC 0 */
    /* OPC larger than the properties present */
    CHECK(decode_hex("10 81 00 01 05 FF 01 0E F0 01 62 02 80 00") == FRAME_MALFORMED);
    CHECK(decode_hex("10 81 00 01 05 FF 01 0E F0 01 62 02 80 00 81") == FRAME_MALFORMED);
    /* PDC past the end */
    CHECK(decode_hex("10 81 00 01 05 FF 01 0E F0 01 61 01 80 02 30") == FRAME_MALFORMED);
    CHECK(decode_hex("10 81 00 01 05 FF 01 0E F0 01 61 01 80 FF 30") == FRAME_MALFORMED);
    /* bytes after the last property */
    CHECK(decode_hex("10 81 00 01 05 FF 01 0E F0 01 62 01 80 00 00") == FRAME_MALFORMED);
    CHECK(decode_hex("10 81 00 01 05 FF 01 0E F0 01 61 01 80 01 30") == FRAME_OK);
    CHECK(f.props[0].pdc == 1 && f.props[0].edt[0] == 0x30);
}

static void test_setget_has_two_lists(void) {
    CHECK(decode_hex("10 81 00 01 05 FF 01 01 30 01 6E 01 80 01 30 02 80 00 B3 00") == FRAME_OK);
    CHECK(f.opc == 1 && f.opc_get == 2);
    CHECK(f.props[0].epc == 0x80 && f.props[0].pdc == 1 && f.props[0].edt[0] == 0x30);
    CHECK(f.props[1].epc == 0x80 && f.props[2].epc == 0xB3);
    /* One part may be empty, not both. */
    CHECK(decode_hex("10 81 00 01 05 FF 01 01 30 01 6E 00 01 80 00") == FRAME_OK);
    CHECK(f.opc == 0 && f.opc_get == 1);
    CHECK(decode_hex("10 81 00 01 05 FF 01 01 30 01 6E 01 80 01 30 00") == FRAME_OK);
    CHECK(decode_hex("10 81 00 01 05 FF 01 01 30 01 6E 00 00") == FRAME_MALFORMED);
    /* OPCGet missing (12 bytes of a SetGet), or running past the end. */
    CHECK(decode_hex("10 81 00 01 05 FF 01 01 30 01 6E 00") == FRAME_MALFORMED);
    CHECK(decode_hex("10 81 00 01 05 FF 01 01 30 01 6E 01 80 01 30") == FRAME_MALFORMED);
    CHECK(decode_hex("10 81 00 01 05 FF 01 01 30 01 6E 01 80 01 30 01") == FRAME_MALFORMED);
    /* The replies of the family too. */
    CHECK(decode_hex("10 81 00 01 01 30 01 05 FF 01 7E 01 80 00 01 80 01 30") == FRAME_OK);
    CHECK(decode_hex("10 81 00 01 01 30 01 05 FF 01 5E 01 80 00 01 80 01 30") == FRAME_OK);
}

static void test_largest_frames(void) {
    static uint8_t buf[FRAME_RECV_BUFFER];
    size_t len = hex_bytes("10 81 00 01 05 FF 01 0E F0 01 62 FF", buf);
    for (int i = 0; i < 255; i++) {
        buf[len++] = (uint8_t)(0x80 + i % 128);
        buf[len++] = 0;
    }
    CHECK(frame_decode(buf, len, &f) == FRAME_OK && f.opc == 255);
    /* Both lists of a SetGet full: 510 properties. */
    len = hex_bytes("10 81 00 01 05 FF 01 01 30 01 6E FF", buf);
    for (int part = 0; part < 2; part++) {
        for (int i = 0; i < 255; i++) {
            buf[len++] = 0x80;
            buf[len++] = 0;
        }
        if (part == 0)
            buf[len++] = 0xFF;
    }
    CHECK(frame_decode(buf, len, &f) == FRAME_OK && f.opc == 255 && f.opc_get == 255);
}

static void test_writer_makes_the_spec_get(void) {
    uint8_t buf[64];
    const uint8_t epcs[12] = {0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E,
                              0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7};
    struct frame_writer w;
    frame_writer_begin(&w, buf, sizeof buf, 0x0002, EOJ_NODE_PROFILE, EOJ_NODE_PROFILE, ESV_GET);
    frame_writer_list(&w);
    for (int i = 0; i < 12; i++)
        frame_writer_prop(&w, epcs[i], 0, 0);
    CHECK(bytes_equal(buf, frame_writer_end(&w), SPEC_GET_36));
}

static void test_writer_never_overflows(void) {
    uint8_t buf[20] = {0};
    struct frame_writer w;
    frame_writer_begin(&w, buf, 16, 1, EOJ_CONTROLLER, EOJ_AIRCON, ESV_SETC);
    frame_writer_list(&w);
    frame_writer_prop(&w, 0x80, 1, (const uint8_t[]){0x30}); /* 15 bytes */
    CHECK(frame_writer_end(&w) == 15);
    frame_writer_prop(&w, 0x81, 1, (const uint8_t[]){0x00}); /* 18: does not fit */
    CHECK(frame_writer_end(&w) == 0);
    CHECK(buf[15] == 0 && buf[16] == 0 && buf[17] == 0);

    static uint8_t big[1024];
    frame_writer_begin(&w, big, sizeof big, 1, EOJ_CONTROLLER, EOJ_AIRCON, ESV_GET);
    frame_writer_list(&w);
    for (int i = 0; i < 255; i++)
        frame_writer_prop(&w, 0x80, 0, 0);
    CHECK(frame_writer_end(&w) == 12 + 2 * 255);
    frame_writer_prop(&w, 0x80, 0, 0); /* a 256th property cannot be counted */
    CHECK(frame_writer_end(&w) == 0);
}

int main(void) {
    RUN(test_decodes_the_spec_get);
    RUN(test_every_truncation_is_malformed);
    RUN(test_header_checks);
    RUN(test_format2_is_unsupported_not_malformed);
    RUN(test_property_bounds);
    RUN(test_setget_has_two_lists);
    RUN(test_largest_frames);
    RUN(test_writer_makes_the_spec_get);
    RUN(test_writer_never_overflows);
    return check_failures ? 1 : 0;
}
