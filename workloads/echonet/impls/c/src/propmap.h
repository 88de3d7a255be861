/*
 * Property maps (SPEC §4): the announcement, set and get maps (EPCs 0x9D, 0x9E, 0x9F).
 *
 * First byte N = the number of properties. N < 16: N EPC bytes follow (ascending). N >= 16: a
 * 16-byte bitmap follows, byte i holding the EPCs whose low nibble is i, bit j standing for
 * high nibble 8 + j. Encoding is exact; decoding does not trust N against the bitmap, because
 * known peers write 16 whatever the count, or mask away every EPC >= 0xC0.
 */
#ifndef ECHONET_PROPMAP_H
#define ECHONET_PROPMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROPMAP_MAX 17       /* N + a 16-byte bitmap */
#define PROPMAP_BITMAP_AT 16 /* from this many EPCs on, the bitmap form */

/* A set of EPCs, one bit per value. */
struct epc_set {
    uint8_t bits[32];
};

static inline void epc_set_add(struct epc_set *s, uint8_t epc) {
    s->bits[epc >> 3] |= (uint8_t)(1u << (epc & 7));
}

static inline bool epc_set_has(const struct epc_set *s, uint8_t epc) {
    return s->bits[epc >> 3] >> (epc & 7) & 1;
}

/* Encodes the map of `set` into out; returns its length, or 0 when the set needs the bitmap form
 * and holds an EPC below 0x80 (which the bitmap has no bit for; property codes start at 0x80). */
size_t propmap_encode(const struct epc_set *set, uint8_t out[PROPMAP_MAX]);

/* Decodes a map into epcs (list form: in the order written, as many as are present up to N;
 * bitmap form: ascending, whatever N says) and returns how many. 0 for an empty map. */
size_t propmap_decode(const uint8_t *data, size_t len, uint8_t epcs[256]);

#endif
