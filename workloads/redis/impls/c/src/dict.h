/*
 * The hash table behind the keyspace and every hash, set and sorted set.
 *
 * Chained buckets, power-of-two sizes, load factor 1, and incremental rehashing as redis's
 * dict: a resize allocates the new table and then moves one bucket per operation (plus a
 * time-boxed batch from the server's timer), so no request ever waits for a whole table to
 * move. Chaining keeps deletion simple (no tombstones) and lets SCAN use redis's
 * reverse-binary cursor, which visits every key present for the whole scan even across
 * resizes.
 *
 * Entries are single allocations that carry their key inline, followed by a payload whose
 * meaning belongs to the owner (a keyspace value, a hash field's value, a sorted-set node, or
 * nothing for a set member):
 *
 *     next pointer | meta byte | key length (LEB128 varint) | key bytes | payload
 *
 * A 16-byte key with a 3-byte string value is a 30-byte allocation: no separate key object,
 * no value object, no per-entry hash.
 */
#ifndef REDIS_C_DICT_H
#define REDIS_C_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct dentry {
    struct dentry *next;
    uint8_t meta; /* the owner's: value type and flags */
    unsigned char data[];
};

#define DENTRY_HEADER offsetof(struct dentry, data)

struct dict {
    struct dentry **table[2]; /* table[1] exists only while rehashing into it */
    size_t mask[2];           /* size - 1 */
    size_t count;             /* entries in both tables */
    long rehash;              /* next bucket of table[0] to move, -1 when not rehashing */
};

/* ---- varints (LEB128): lengths of keys and inline values ---- */

static inline size_t varint_len(size_t v) {
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static inline size_t varint_put(unsigned char *p, size_t v) {
    size_t n = 0;
    while (v >= 0x80) {
        p[n++] = (unsigned char)(v | 0x80);
        v >>= 7;
    }
    p[n++] = (unsigned char)v;
    return n;
}

static inline size_t varint_get(const unsigned char *p, size_t *v) {
    if (p[0] < 0x80) {
        *v = p[0];
        return 1;
    }
    size_t r = 0, n = 0;
    unsigned shift = 0;
    do {
        r |= (size_t)(p[n] & 0x7f) << shift;
        shift += 7;
    } while (p[n++] & 0x80);
    *v = r;
    return n;
}

/* ---- entries ---- */

static inline const char *dentry_key(const struct dentry *e, size_t *klen) {
    size_t n = varint_get(e->data, klen);
    return (const char *)e->data + n;
}

/* The payload: right after the key. */
static inline unsigned char *dentry_payload(struct dentry *e) {
    size_t klen;
    size_t n = varint_get(e->data, &klen);
    return e->data + n + klen;
}

/* Bytes before the payload (header, varint, key) of an entry with a klen-byte key. */
static inline size_t dentry_prefix(size_t klen) {
    return DENTRY_HEADER + varint_len(klen) + klen;
}

/* A new entry holding the key, with `payload` uninitialised bytes after it; NULL if out of
 * memory. The caller fills meta and the payload. */
struct dentry *dentry_new(const char *key, size_t klen, size_t payload);

/* Pointers inside payloads are stored unaligned. */
static inline void *payload_ptr(const unsigned char *p) {
    void *v;
    memcpy(&v, p, sizeof v);
    return v;
}

static inline void payload_set_ptr(unsigned char *p, const void *v) {
    memcpy(p, &v, sizeof v);
}

/* ---- the table ---- */

void dict_init(struct dict *d);
/* Frees every entry (after calling free_value on it, if given) and the tables. */
void dict_clear(struct dict *d, void (*free_value)(struct dentry *));

static inline size_t dict_size(const struct dict *d) {
    return d->count;
}

/* Bucket count, both tables (INFO, memory estimates). */
size_t dict_buckets(const struct dict *d);

/*
 * The link that points to the entry with this key (so the caller can read it, unlink it or
 * replace it with a reallocated copy), or NULL. h = hash_bytes(key, klen). The link stays
 * valid until the next operation on the dict.
 */
struct dentry **dict_find(struct dict *d, const char *key, size_t klen, uint64_t h);

/* Inserts an entry whose key is not present; returns its link (as dict_find would). */
struct dentry **dict_add(struct dict *d, struct dentry *e, uint64_t h);

/* Unlinks the entry a dict_find link points to; the caller frees it. */
static inline struct dentry *dict_unlink(struct dict *d, struct dentry **link) {
    struct dentry *e = *link;
    *link = e->next;
    d->count--;
    return e;
}

/* Starts shrinking a table that deletions left mostly empty. */
void dict_shrink_if_sparse(struct dict *d);

/* The link to a random entry (chain-length fair enough for SPOP), NULL if empty. */
struct dentry **dict_random(struct dict *d);

/* Moves buckets for about `ms` milliseconds; returns true if still rehashing. */
bool dict_rehash_for(struct dict *d, long long ms);

/* One SCAN step from `cursor`: calls fn on every entry of one bucket (of each table) and
 * returns the next cursor, 0 when the scan is complete. fn must not modify the dict. */
size_t dict_scan(struct dict *d, size_t cursor, void (*fn)(void *ctx, struct dentry *e), void *ctx);

/* Iteration over every entry; the dict must not change meanwhile. */
struct dict_iter {
    struct dict *d;
    int table;
    size_t bucket;
    struct dentry *next;
};

void dict_iter_init(struct dict_iter *it, struct dict *d);
struct dentry *dict_iter_next(struct dict_iter *it);

#endif
