/* Unit tests of the frame codec: the header layout, the session enders, the cap. */
#include "check.h"
#include "frame.h"

#include <string.h>

static void test_layout_is_big_endian(void) {
    unsigned char h[FRAME_HEADER_SIZE];
    frame_encode(h, FRAME_REPLY, 0x0102030405060708ull);
    const unsigned char want[] = {2, 1, 2, 3, 4, 5, 6, 7, 8};
    CHECK(memcmp(h, want, sizeof want) == 0);
    frame_encode(h, FRAME_DEFAULT, 4096);
    const unsigned char want4k[] = {0, 0, 0, 0, 0, 0, 0, 0x10, 0};
    CHECK(memcmp(h, want4k, sizeof want4k) == 0);
}

static void test_round_trip(void) {
    const uint64_t lengths[] = {0, 1, 255, 256, 65535, 1ull << 32, UINT64_MAX};
    const uint8_t types[] = {0, 1, 2, 4, 8, 16, 64, 128, 255};
    for (size_t i = 0; i < sizeof lengths / sizeof *lengths; i++)
        for (size_t j = 0; j < sizeof types; j++) {
            unsigned char h[FRAME_HEADER_SIZE];
            frame_encode(h, types[j], lengths[i]);
            struct frame_header d = frame_decode(h);
            CHECK(d.type == types[j]);
            CHECK(d.body_len == lengths[i]);
        }
}

static void test_session_enders(void) {
    CHECK(frame_ends_session(FRAME_END));
    CHECK(frame_ends_session(FRAME_QUIT));
    const uint8_t others[] = {0, 1, 2, 3, 5, 16, 64, 128, 255};
    for (size_t i = 0; i < sizeof others; i++)
        CHECK(!frame_ends_session(others[i]));
}

static void test_cap(void) {
    CHECK(frame_body_allowed(0, 0));
    CHECK(frame_body_allowed(FRAME_DEFAULT_MAX_BODY, FRAME_DEFAULT_MAX_BODY));
    CHECK(!frame_body_allowed(FRAME_DEFAULT_MAX_BODY + 1, FRAME_DEFAULT_MAX_BODY));
    CHECK(!frame_body_allowed(UINT64_MAX, FRAME_DEFAULT_MAX_BODY));
}

int main(void) {
    RUN(test_layout_is_big_endian);
    RUN(test_round_trip);
    RUN(test_session_enders);
    RUN(test_cap);
    return check_failures ? 1 : 0;
}
