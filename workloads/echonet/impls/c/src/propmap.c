#include "propmap.h"

#include <string.h>

size_t propmap_encode(const struct epc_set *set, uint8_t out[PROPMAP_MAX]) {
    unsigned n = 0;
    for (unsigned epc = 0; epc < 256; epc++)
        n += epc_set_has(set, (uint8_t)epc);
    out[0] = (uint8_t)n;
    if (n < PROPMAP_BITMAP_AT) {
        size_t len = 1;
        for (unsigned epc = 0; epc < 256; epc++)
            if (epc_set_has(set, (uint8_t)epc))
                out[len++] = (uint8_t)epc;
        return len;
    }
    memset(out + 1, 0, 16);
    for (unsigned epc = 0; epc < 256; epc++) {
        if (!epc_set_has(set, (uint8_t)epc))
            continue;
        if (epc < 0x80)
            return 0;
        out[1 + (epc & 0x0F)] |= (uint8_t)(1u << ((epc >> 4) - 8));
    }
    return PROPMAP_MAX;
}

size_t propmap_decode(const uint8_t *data, size_t len, uint8_t epcs[256]) {
    if (len == 0)
        return 0;
    size_t n = data[0];
    if (n < PROPMAP_BITMAP_AT) {
        size_t present = len - 1 < n ? len - 1 : n;
        memcpy(epcs, data + 1, present);
        return present;
    }
    size_t count = 0;
    size_t bytes = len - 1 < 16 ? len - 1 : 16; /* a truncated bitmap gives what it holds */
    for (unsigned j = 0; j < 8; j++)            /* ascending: high nibble outer, low inner */
        for (unsigned i = 0; i < bytes; i++)
            if (data[1 + i] >> j & 1)
                epcs[count++] = (uint8_t)(((j + 8) << 4) | i);
    return count;
}
