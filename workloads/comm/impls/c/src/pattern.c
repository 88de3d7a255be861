#include "pattern.h"

#include <stdlib.h>
#include <string.h>

unsigned char *pattern_table(size_t size) {
    size_t len = size + PATTERN_PERIOD;
    unsigned char *t = malloc(len);
    if (!t)
        return NULL;
    for (size_t i = 0; i < len && i < PATTERN_PERIOD; i++)
        t[i] = (unsigned char)i;
    /* Doubling copies: the table is periodic, so each copy extends it by what exists. */
    for (size_t have = PATTERN_PERIOD; have < len; have *= 2)
        memcpy(t + have, t, have < len - have ? have : len - have);
    return t;
}

size_t pattern_offset(uint64_t client, uint64_t message) {
    return (size_t)((client % PATTERN_PERIOD * 7 + message % PATTERN_PERIOD * 13) % PATTERN_PERIOD);
}
