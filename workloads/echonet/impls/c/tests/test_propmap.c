/* Unit tests of property maps (SPEC §4): exact encoding, decoding that does not trust N. */
#include "check.h"
#include "propmap.h"

static struct epc_set set_of(const uint8_t *epcs, size_t n) {
    struct epc_set s = {0};
    for (size_t i = 0; i < n; i++)
        epc_set_add(&s, epcs[i]);
    return s;
}

static void test_list_form_below_16(void) {
    uint8_t out[PROPMAP_MAX];
    /* Given out of order: written ascending. */
    const uint8_t node[] = {0xD7, 0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6};
    struct epc_set s = set_of(node, sizeof node);
    CHECK(bytes_equal(out, propmap_encode(&s, out), "0C 80 82 83 8A 9D 9E 9F D3 D4 D5 D6 D7"));
    struct epc_set empty = {0};
    CHECK(bytes_equal(out, propmap_encode(&empty, out), "00"));
    const uint8_t announce[] = {0xD5, 0x80};
    s = set_of(announce, 2);
    CHECK(bytes_equal(out, propmap_encode(&s, out), "02 80 D5"));
}

static void test_bitmap_form_from_16(void) {
    uint8_t out[PROPMAP_MAX];
    const uint8_t aircon[] = {0x80, 0x81, 0x82, 0x88, 0x8A, 0x8F, 0x93, 0x97, 0x98,
                              0x9D, 0x9E, 0x9F, 0xA0, 0xB0, 0xB1, 0xB3, 0xBA, 0xBB};
    struct epc_set s = set_of(aircon, sizeof aircon);
    CHECK(bytes_equal(out, propmap_encode(&s, out),
                      "12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03"));
    /* 0x80 is byte 0 bit 0, 0xD6 byte 6 bit 5 (with 0xF0-0xFE: 17 EPCs). */
    uint8_t fifteen[15];
    for (int i = 0; i < 15; i++)
        fifteen[i] = (uint8_t)(0xF0 + i);
    s = set_of(fifteen, 15);
    epc_set_add(&s, 0x80);
    epc_set_add(&s, 0xD6);
    CHECK(propmap_encode(&s, out) == PROPMAP_MAX);
    CHECK(out[0] == 17 && (out[1] & 0x01) && (out[7] & 0x20));
    /* An EPC below 0x80 has no bit. */
    epc_set_add(&s, 0x10);
    CHECK(propmap_encode(&s, out) == 0);
}

static void test_decode_list(void) {
    uint8_t epcs[256], map[8];
    size_t len = hex_bytes("03 D5 80 9F", map);
    CHECK(propmap_decode(map, len, epcs) == 3 && epcs[0] == 0xD5 && epcs[2] == 0x9F);
    len = hex_bytes("05 80 81", map); /* fewer present than N says */
    CHECK(propmap_decode(map, len, epcs) == 2);
    len = hex_bytes("01 80 81", map); /* more present than N says */
    CHECK(propmap_decode(map, len, epcs) == 1 && epcs[0] == 0x80);
    CHECK(propmap_decode(map, 0, epcs) == 0);
}

static void test_decode_bitmap_ignores_n(void) {
    uint8_t epcs[256], map[PROPMAP_MAX];
    /* The air conditioner's map with N written as 16 (a known peer bug): all 18 come back. */
    size_t len = hex_bytes("10 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03", map);
    size_t n = propmap_decode(map, len, epcs);
    const uint8_t want[] = {0x80, 0x81, 0x82, 0x88, 0x8A, 0x8F, 0x93, 0x97, 0x98,
                            0x9D, 0x9E, 0x9F, 0xA0, 0xB0, 0xB1, 0xB3, 0xBA, 0xBB};
    CHECK(n == sizeof want && memcmp(epcs, want, n) == 0);
    /* N saying 200 changes nothing either. */
    map[0] = 200;
    CHECK(propmap_decode(map, len, epcs) == sizeof want);
    /* A truncated bitmap gives the EPCs of the bytes present. */
    CHECK(propmap_decode(map, 2, epcs) == 3 && epcs[0] == 0x80 && epcs[2] == 0xB0);
}

static void test_round_trip_every_size(void) {
    for (unsigned count = 0; count <= 128; count++) {
        struct epc_set s = {0};
        for (unsigned k = 0; k < count; k++)
            epc_set_add(&s, (uint8_t)(0x80 + (k * 37) % 128)); /* 37 is coprime to 128 */
        uint8_t map[PROPMAP_MAX], epcs[256];
        size_t len = propmap_encode(&s, map);
        CHECK(len == (count < 16 ? 1 + count : PROPMAP_MAX));
        size_t n = propmap_decode(map, len, epcs);
        CHECK(n == count);
        for (size_t i = 0; i < n; i++)
            CHECK(epc_set_has(&s, epcs[i]) && (i == 0 || epcs[i - 1] < epcs[i]));
    }
}

int main(void) {
    RUN(test_list_form_below_16);
    RUN(test_bitmap_form_from_16);
    RUN(test_decode_list);
    RUN(test_decode_bitmap_ignores_n);
    RUN(test_round_trip_every_size);
    return check_failures ? 1 : 0;
}
