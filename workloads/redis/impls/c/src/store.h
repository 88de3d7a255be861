/*
 * The keyspace: 16 databases, each a dict of keys and a dict of expiry times, and the values
 * the key entries hold.
 *
 * A key entry's payload is its value:
 *   - a string up to STR_INLINE_MAX bytes: varint length + bytes, inline in the entry (one
 *     allocation for key and value: what SET/GET traffic creates);
 *   - a longer string built by APPEND: a pointer to a growable heap string;
 *   - a list, hash, set or sorted set: a pointer to that object.
 * The entry's meta byte says which, and whether the key has an expiry time. Keys without one
 * (nearly all of them) never touch the expires dict.
 */
#ifndef REDIS_C_STORE_H
#define REDIS_C_STORE_H

#include "dict.h"
#include "util.h"

#include <stdbool.h>
#include <stdint.h>

#define DB_COUNT 16

enum value_type { T_STRING = 0, T_LIST = 1, T_HASH = 2, T_SET = 3, T_ZSET = 4 };

/* meta byte: bits 0-2 type, bit 3 heap-string encoding, bit 4 has an expiry time */
#define META_TYPE 0x07
#define META_HEAP_STRING 0x08
#define META_EXPIRES 0x10

/* Strings longer than this that grow by APPEND move to a growable heap buffer. SET stores
 * any length inline: one allocation, written once. */
#define STR_APPEND_INLINE_MAX 64

struct heap_string {
    size_t len;
    size_t cap;
    char bytes[];
};

struct db {
    struct dict keys;
    struct dict expires; /* key -> int64 ms since the epoch */
};

extern struct db databases[DB_COUNT];

void store_init(void);

static inline enum value_type entry_type(const struct dentry *e) {
    return (enum value_type)(e->meta & META_TYPE);
}

/* The bytes of a string value. */
static inline struct slice entry_string(struct dentry *e) {
    unsigned char *p = dentry_payload(e);
    if (e->meta & META_HEAP_STRING) {
        struct heap_string *s = payload_ptr(p);
        return (struct slice){s->bytes, s->len};
    }
    size_t len;
    size_t n = varint_get(p, &len);
    return (struct slice){(const char *)p + n, len};
}

/* The list/hash/set/zset object of a value. */
static inline void *entry_object(struct dentry *e) {
    return payload_ptr(dentry_payload(e));
}

/* A key looked up for a command: `link` points at its entry in the keys dict (NULL when
 * absent or expired), `h` is the key's hash, reused for inserts and the expires dict. */
struct keyref {
    struct db *db;
    struct slice key;
    uint64_t h;
    struct dentry **link;
};

/* Looks a key up, deleting it first if it has expired. */
struct keyref db_lookup(struct db *db, struct slice key);

static inline struct dentry *keyref_entry(const struct keyref *k) {
    return k->link ? *k->link : NULL;
}

/* Stores a string value under the key (replacing any value; a previous value's expiry time
 * is kept unless the caller clears it). Returns false if out of memory. */
bool db_set_string(struct keyref *k, const char *value, size_t len);
/* Appends to a string value (the key must hold one), or creates it. */
bool db_append_string(struct keyref *k, const char *more, size_t len);
/* Stores a new object (list/hash/set/zset) under an absent key. */
bool db_add_object(struct keyref *k, enum value_type type, void *object);
/* Deletes the key, its value and its expiry time. */
void db_delete(struct keyref *k);

/* Moves the key's value and expiry time to `to`, a key known to be absent (RENAME, MOVE).
 * Afterwards `from` is absent and `to` refers to the moved entry. */
bool db_move(struct keyref *from, struct keyref *to);

/* Expiry times: absolute ms since the epoch; -1 when the key has none. */
long long db_get_expire(struct keyref *k);
bool db_set_expire(struct keyref *k, long long when);
/* Returns true if the key had an expiry time. */
bool db_clear_expire(struct keyref *k);

/* Keys (and keys with an expiry time) in a database. */
static inline size_t db_size(const struct db *db) {
    return dict_size(&db->keys);
}

/* Whether a key entry found by iteration (KEYS, SCAN) has expired; not deleted. */
bool db_entry_expired(struct db *db, struct dentry *e, long long now);

void db_flush(struct db *db);

/* One pass of active expiry over every database: samples keys with an expiry time and
 * deletes the expired ones, for at most `budget_ms`. */
void store_active_expire(long long budget_ms);
/* Background rehashing of the keyspace dicts, for at most `budget_ms`. */
void store_rehash(long long budget_ms);

/* Frees a value object of the given type. */
void value_free(enum value_type type, void *object);

#endif
