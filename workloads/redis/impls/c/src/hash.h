/*
 * The hash type, in two encodings as redis's:
 *   - small hashes (up to 128 fields, fields and values up to 64 bytes) are one packed buffer
 *     of (varint length, bytes) pairs in insertion order: a few dozen bytes for a few fields,
 *     scanned linearly, and HGETALL answers in the order redis's listpack does;
 *   - a hash that outgrows that becomes a dict (field -> inline value) for good.
 */
#ifndef REDIS_C_HASH_H
#define REDIS_C_HASH_H

#include "dict.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HASH_PACKED_MAX_ENTRIES 128
#define HASH_PACKED_MAX_VALUE 64

struct hash {
    bool packed;
    union {
        struct {
            unsigned char *buf;
            uint32_t len, cap, count;
        } pk;
        struct dict dict;
    } u;
};

struct hash *hash_new(void);
void hash_free(struct hash *h);
size_t hash_len(const struct hash *h);

/* The value of a field (pointing into the hash: valid until it changes). */
bool hash_get(struct hash *h, struct slice field, struct slice *value);
/* Sets a field: 1 if created, 0 if it existed, -1 if out of memory. */
int hash_set(struct hash *h, struct slice field, struct slice value);
/* Removes a field; false if it was not there. */
bool hash_delete(struct hash *h, struct slice field);

struct hash_iter {
    struct hash *h;
    uint32_t off;
    struct dict_iter it;
};

void hash_iter_init(struct hash_iter *it, struct hash *h);
bool hash_iter_next(struct hash_iter *it, struct slice *field, struct slice *value);

#endif
