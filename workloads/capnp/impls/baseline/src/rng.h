/* The requests' generator (SPEC §3.1): Marsaglia's xorshift128 with the SPEC's seed.
 * Header-only so that every draw inlines into the request builders: it is the innermost
 * operation of every case. */
#ifndef CAPNP_BASELINE_RNG_H
#define CAPNP_BASELINE_RNG_H

#include <stdint.h>

struct rng {
    uint32_t x, y, z, w;
};

static inline void rng_init(struct rng *r) {
    r->x = 0x1d2acd47u;
    r->y = 0x58ca3e14u;
    r->z = 0xf563f232u;
    r->w = 0x0bc76199u;
}

static inline uint32_t rng_next(struct rng *r) {
    uint32_t t = r->x ^ (r->x << 11);
    r->x = r->y;
    r->y = r->z;
    r->z = r->w;
    r->w = r->w ^ (r->w >> 19) ^ t ^ (t >> 8);
    return r->w;
}

/* fastRand(n) */
static inline uint32_t rng_rand(struct rng *r, uint32_t n) {
    return rng_next(r) % n;
}

/* fastRandDouble(range): the multiplication first, then the division, in IEEE double (the
 * build turns off FP contraction so no compiler fuses them differently). */
static inline double rng_rand_double(struct rng *r, double range) {
    return ((double)rng_next(r) * range) / 4294967295.0;
}

#endif
