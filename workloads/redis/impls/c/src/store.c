#include "store.h"

#include "hash.h"
#include "list.h"
#include "set.h"
#include "zset.h"

#include <stdlib.h>

struct db databases[DB_COUNT];

void store_init(void) {
    for (int i = 0; i < DB_COUNT; i++) {
        dict_init(&databases[i].keys);
        dict_init(&databases[i].expires);
    }
}

void value_free(enum value_type type, void *object) {
    switch (type) {
    case T_STRING:
        free(object); /* a heap string */
        break;
    case T_LIST:
        list_free(object);
        break;
    case T_HASH:
        hash_free(object);
        break;
    case T_SET:
        set_free(object);
        break;
    case T_ZSET:
        zset_free(object);
        break;
    }
}

/* The value an entry owns outside itself, freed before the entry. */
static void entry_free_value(struct dentry *e) {
    enum value_type type = entry_type(e);
    if (type != T_STRING || (e->meta & META_HEAP_STRING))
        value_free(type, entry_object(e));
}

static struct dentry **expires_link(struct keyref *k) {
    return dict_find(&k->db->expires, k->key.p, k->key.len, k->h);
}

static long long expire_of(struct dentry *expire_entry) {
    long long when;
    memcpy(&when, dentry_payload(expire_entry), sizeof when);
    return when;
}

struct keyref db_lookup(struct db *db, struct slice key) {
    struct keyref k = {db, key, hash_bytes(key.p, key.len), NULL};
    k.link = dict_find(&db->keys, key.p, key.len, k.h);
    if (k.link && ((*k.link)->meta & META_EXPIRES)) {
        /* Lazy expiry: a key past its time is deleted when touched, as redis (now > when). */
        struct dentry **x = expires_link(&k);
        if (x && now_ms() > expire_of(*x))
            db_delete(&k);
    }
    return k;
}

void db_delete(struct keyref *k) {
    struct dentry *e = dict_unlink(&k->db->keys, k->link);
    k->link = NULL;
    if (e->meta & META_EXPIRES) {
        struct dentry **x = expires_link(k);
        if (x)
            free(dict_unlink(&k->db->expires, x));
        dict_shrink_if_sparse(&k->db->expires);
    }
    entry_free_value(e);
    free(e);
    dict_shrink_if_sparse(&k->db->keys);
}

/* Payload bytes of an inline string of `len` bytes. */
static inline size_t inline_size(size_t len) {
    return varint_len(len) + len;
}

bool db_set_string(struct keyref *k, const char *value, size_t len) {
    size_t payload = inline_size(len);
    struct dentry *old = keyref_entry(k);
    struct dentry *e;
    if (old && entry_type(old) == T_STRING && !(old->meta & META_HEAP_STRING)) {
        /* Same key, string to string: reuse the allocation (realloc keeps the key bytes;
         * an unchanged size, as every SET of a benchmark, costs no allocator call). */
        size_t oldlen;
        unsigned char *p = dentry_payload(old);
        varint_get(p, &oldlen);
        e = old;
        if (inline_size(oldlen) != payload) {
            size_t klen;
            dentry_key(old, &klen);
            e = realloc(old, dentry_prefix(klen) + payload);
            if (!e)
                return false;
            *k->link = e;
        }
    } else {
        e = dentry_new(k->key.p, k->key.len, payload);
        if (!e)
            return false;
        if (old) {
            /* Another type (or a heap string) is replaced: the expiry flag carries over. */
            e->meta = old->meta & META_EXPIRES;
            e->next = old->next;
            *k->link = e;
            entry_free_value(old);
            free(old);
        } else {
            k->link = dict_add(&k->db->keys, e, k->h);
        }
    }
    e->meta = (uint8_t)((e->meta & META_EXPIRES) | T_STRING);
    unsigned char *p = dentry_payload(e);
    size_t n = varint_put(p, len);
    memcpy(p + n, value, len);
    return true;
}

bool db_append_string(struct keyref *k, const char *more, size_t len) {
    struct dentry *e = keyref_entry(k);
    if (!e)
        return db_set_string(k, more, len);
    if (e->meta & META_HEAP_STRING) {
        struct heap_string *s = entry_object(e);
        if (s->cap - s->len < len) {
            size_t cap = s->len + len;
            cap += cap < (1u << 20) ? cap : (1u << 20); /* greedy, as sds: appends amortise */
            s = realloc(s, sizeof *s + cap);
            if (!s)
                return false;
            s->cap = cap;
            payload_set_ptr(dentry_payload(e), s);
        }
        memcpy(s->bytes + s->len, more, len);
        s->len += len;
        return true;
    }
    struct slice cur = entry_string(e);
    size_t total = cur.len + len;
    if (total <= STR_APPEND_INLINE_MAX) {
        /* Short strings stay inline; lengths under 128 keep a one-byte varint. */
        size_t klen;
        dentry_key(e, &klen);
        struct dentry *grown = realloc(e, dentry_prefix(klen) + inline_size(total));
        if (!grown)
            return false;
        *k->link = grown;
        unsigned char *p = dentry_payload(grown);
        p[0] = (unsigned char)total;
        memcpy(p + 1 + total - len, more, len);
        return true;
    }
    /* Moves to a growable heap buffer: a string that is appended to will likely grow more. */
    size_t cap = total * 2;
    struct heap_string *s = malloc(sizeof *s + cap);
    if (!s)
        return false;
    s->len = total;
    s->cap = cap;
    memcpy(s->bytes, cur.p, cur.len);
    memcpy(s->bytes + cur.len, more, len);
    struct dentry *ne = dentry_new(k->key.p, k->key.len, sizeof(void *));
    if (!ne) {
        free(s);
        return false;
    }
    ne->meta = (uint8_t)((e->meta & META_EXPIRES) | T_STRING | META_HEAP_STRING);
    ne->next = e->next;
    payload_set_ptr(dentry_payload(ne), s);
    *k->link = ne;
    free(e);
    return true;
}

/* Bytes of an entry's payload. */
static size_t payload_size(struct dentry *e) {
    if (entry_type(e) == T_STRING && !(e->meta & META_HEAP_STRING))
        return inline_size(entry_string(e).len);
    return sizeof(void *);
}

bool db_move(struct keyref *from, struct keyref *to) {
    struct dentry *e = *from->link;
    long long when = db_get_expire(from);
    size_t n = payload_size(e);
    struct dentry *moved = dentry_new(to->key.p, to->key.len, n);
    if (!moved)
        return false;
    memcpy(dentry_payload(moved), dentry_payload(e), n);
    moved->meta = e->meta & (uint8_t)~META_EXPIRES;
    /* The old entry goes without its value, which now belongs to the new one. */
    db_clear_expire(from);
    free(dict_unlink(&from->db->keys, from->link));
    from->link = NULL;
    dict_shrink_if_sparse(&from->db->keys);
    to->link = dict_add(&to->db->keys, moved, to->h);
    if (when != -1)
        db_set_expire(to, when);
    return true;
}

bool db_add_object(struct keyref *k, enum value_type type, void *object) {
    struct dentry *e = dentry_new(k->key.p, k->key.len, sizeof(void *));
    if (!e)
        return false;
    e->meta = (uint8_t)type;
    payload_set_ptr(dentry_payload(e), object);
    k->link = dict_add(&k->db->keys, e, k->h);
    return true;
}

long long db_get_expire(struct keyref *k) {
    struct dentry *e = keyref_entry(k);
    if (!e || !(e->meta & META_EXPIRES))
        return -1;
    struct dentry **x = expires_link(k);
    return x ? expire_of(*x) : -1;
}

bool db_set_expire(struct keyref *k, long long when) {
    struct dentry *e = keyref_entry(k);
    if (e->meta & META_EXPIRES) {
        struct dentry **x = expires_link(k);
        if (x) {
            memcpy(dentry_payload(*x), &when, sizeof when);
            return true;
        }
    }
    struct dentry *x = dentry_new(k->key.p, k->key.len, sizeof when);
    if (!x)
        return false;
    memcpy(dentry_payload(x), &when, sizeof when);
    dict_add(&k->db->expires, x, k->h);
    e->meta |= META_EXPIRES;
    return true;
}

bool db_clear_expire(struct keyref *k) {
    struct dentry *e = keyref_entry(k);
    if (!e || !(e->meta & META_EXPIRES))
        return false;
    e->meta &= (uint8_t)~META_EXPIRES;
    struct dentry **x = expires_link(k);
    if (x)
        free(dict_unlink(&k->db->expires, x));
    dict_shrink_if_sparse(&k->db->expires);
    return true;
}

bool db_entry_expired(struct db *db, struct dentry *e, long long now) {
    if (!(e->meta & META_EXPIRES))
        return false;
    size_t klen;
    const char *key = dentry_key(e, &klen);
    struct dentry **x = dict_find(&db->expires, key, klen, hash_bytes(key, klen));
    return x && now > expire_of(*x);
}

static void free_key_entry(struct dentry *e) {
    entry_free_value(e);
}

void db_flush(struct db *db) {
    dict_clear(&db->keys, free_key_entry);
    dict_clear(&db->expires, NULL);
}

/*
 * Active expiry, as redis's: sample up to 20 keys that have an expiry time, delete the expired
 * ones, and go on while more than a quarter of a sample had expired (many keys are due) and
 * the time budget lasts. Keys nobody touches again still go away.
 */
#define EXPIRE_SAMPLE 20

void store_active_expire(long long budget_ms) {
    long long deadline = monotonic_ms() + budget_ms;
    for (int i = 0; i < DB_COUNT; i++) {
        struct db *db = &databases[i];
        for (;;) {
            if (dict_size(&db->expires) == 0)
                break;
            long long now = now_ms();
            int expired = 0;
            for (int n = 0; n < EXPIRE_SAMPLE && dict_size(&db->expires) > 0; n++) {
                struct dentry *x = *dict_random(&db->expires);
                if (now <= expire_of(x))
                    continue;
                size_t klen;
                const char *key = dentry_key(x, &klen);
                struct keyref k = {db, {key, klen}, hash_bytes(key, klen), NULL};
                k.link = dict_find(&db->keys, key, klen, k.h);
                if (k.link) {
                    db_delete(&k);
                } else {
                    /* Cannot happen (the flags and the dict agree); drop the orphan. */
                    free(dict_unlink(&db->expires, expires_link(&k)));
                }
                expired++;
            }
            if (expired <= EXPIRE_SAMPLE / 4 || monotonic_ms() >= deadline)
                break;
        }
    }
}

void store_rehash(long long budget_ms) {
    for (int i = 0; i < DB_COUNT; i++) {
        if (dict_rehash_for(&databases[i].keys, budget_ms))
            return; /* the budget is spent */
        dict_rehash_for(&databases[i].expires, budget_ms);
    }
}
