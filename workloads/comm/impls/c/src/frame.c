#include "frame.h"

void frame_encode(unsigned char out[FRAME_HEADER_SIZE], uint8_t type, uint64_t body_len) {
    out[0] = type;
    for (int i = 8; i >= 1; i--) {
        out[i] = (unsigned char)body_len;
        body_len >>= 8;
    }
}

struct frame_header frame_decode(const unsigned char in[FRAME_HEADER_SIZE]) {
    uint64_t len = 0;
    for (int i = 1; i < FRAME_HEADER_SIZE; i++)
        len = len << 8 | in[i];
    return (struct frame_header){.type = in[0], .body_len = len};
}

bool frame_ends_session(uint8_t type) {
    return type == FRAME_END || type == FRAME_QUIT;
}
