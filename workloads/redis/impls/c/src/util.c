#define _GNU_SOURCE
#include "util.h"

#include <sys/random.h>
#include <time.h>

/*
 * The dictionaries' hash: 8 bytes at a time folded through a 64x64->128-bit multiply (the
 * high and low halves xor-ed), keyed with a random seed so request data cannot pick the
 * buckets. Short keys (the common case: 10-20 bytes) cost two or three multiplies.
 */
static uint64_t hash_seed;
static uint64_t rng_state;

static inline uint64_t fold_mul(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t load64(const unsigned char *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

uint64_t hash_bytes(const void *data, size_t len) {
    const unsigned char *p = data;
    uint64_t h = hash_seed ^ (len * 0x9e3779b97f4a7c15ull);
    while (len >= 8) {
        h = fold_mul(h ^ load64(p), 0xa0761d6478bd642full);
        p += 8;
        len -= 8;
    }
    uint64_t tail = 0;
    if (len >= 4) {
        uint32_t a, b;
        memcpy(&a, p, 4);
        memcpy(&b, p + len - 4, 4);
        tail = ((uint64_t)a << 32) | b;
    } else if (len > 0) {
        tail = ((uint64_t)p[0] << 16) | ((uint64_t)p[len >> 1] << 8) | p[len - 1];
    }
    h = fold_mul(h ^ tail ^ 0xe7037ed1a0b428dbull, 0x8ebc6af09c88c6e3ull);
    return fold_mul(h, 0x589965cc75374cc3ull);
}

void hash_init(void) {
    uint64_t seed[2];
    if (getrandom(seed, sizeof seed, 0) != sizeof seed) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        seed[0] = (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec;
        seed[1] = seed[0] ^ 0x5851f42d4c957f2dull;
    }
    hash_seed = seed[0];
    rng_state = seed[1] | 1;
}

uint64_t random_u64(void) {
    /* splitmix64 */
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

long long now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

long long monotonic_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}
