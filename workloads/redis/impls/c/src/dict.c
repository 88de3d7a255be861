#include "dict.h"

#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MIN_BUCKETS 4

static void out_of_memory(void) {
    static const char msg[] = "redis-c: out of memory\n";
    ssize_t ignored = write(2, msg, sizeof msg - 1);
    (void)ignored;
    abort();
}

struct dentry *dentry_new(const char *key, size_t klen, size_t payload) {
    struct dentry *e = malloc(dentry_prefix(klen) + payload);
    if (!e)
        return NULL;
    e->next = NULL;
    e->meta = 0;
    size_t n = varint_put(e->data, klen);
    memcpy(e->data + n, key, klen);
    return e;
}

void dict_init(struct dict *d) {
    memset(d, 0, sizeof *d);
    d->rehash = -1;
}

static size_t table_size(const struct dict *d, int t) {
    return d->table[t] ? d->mask[t] + 1 : 0;
}

size_t dict_buckets(const struct dict *d) {
    return table_size(d, 0) + table_size(d, 1);
}

void dict_clear(struct dict *d, void (*free_value)(struct dentry *)) {
    for (int t = 0; t < 2; t++) {
        for (size_t i = 0; i < table_size(d, t); i++) {
            struct dentry *e = d->table[t][i];
            while (e) {
                struct dentry *next = e->next;
                if (free_value)
                    free_value(e);
                free(e);
                e = next;
            }
        }
        free(d->table[t]);
    }
    dict_init(d);
}

static inline bool rehashing(const struct dict *d) {
    return d->rehash >= 0;
}

static uint64_t entry_hash(const struct dentry *e) {
    size_t klen;
    const char *key = dentry_key(e, &klen);
    return hash_bytes(key, klen);
}

/* Starts moving everything into a table of `size` buckets (a power of two). */
static void start_resize(struct dict *d, size_t size) {
    struct dentry **table = calloc(size, sizeof *table);
    if (!table)
        out_of_memory();
    if (!d->table[0]) {
        d->table[0] = table;
        d->mask[0] = size - 1;
        return;
    }
    d->table[1] = table;
    d->mask[1] = size - 1;
    d->rehash = 0;
}

/* Moves up to n non-empty buckets (visiting at most 10n empty ones) from table[0] to
 * table[1]; finishes the rehash when table[0] is empty. */
static void rehash_steps(struct dict *d, int n) {
    size_t size0 = d->mask[0] + 1;
    int empty_visits = n * 10;
    while (n-- > 0 && (size_t)d->rehash < size0) {
        while (d->table[0][d->rehash] == NULL) {
            if (++d->rehash == (long)size0 || --empty_visits == 0)
                goto check_done;
        }
        struct dentry *e = d->table[0][d->rehash];
        while (e) {
            struct dentry *next = e->next;
            size_t idx = entry_hash(e) & d->mask[1];
            e->next = d->table[1][idx];
            d->table[1][idx] = e;
            e = next;
        }
        d->table[0][d->rehash++] = NULL;
    }
check_done:
    if ((size_t)d->rehash >= size0) {
        free(d->table[0]);
        d->table[0] = d->table[1];
        d->mask[0] = d->mask[1];
        d->table[1] = NULL;
        d->mask[1] = 0;
        d->rehash = -1;
    }
}

static size_t next_power(size_t n) {
    size_t size = MIN_BUCKETS;
    while (size < n)
        size *= 2;
    return size;
}

struct dentry **dict_find(struct dict *d, const char *key, size_t klen, uint64_t h) {
    if (d->count == 0)
        return NULL;
    if (rehashing(d))
        rehash_steps(d, 1);
    for (int t = 0; t < 2; t++) {
        if (!d->table[t])
            break;
        struct dentry **link = &d->table[t][h & d->mask[t]];
        for (struct dentry *e; (e = *link) != NULL; link = &e->next) {
            size_t elen;
            const char *ekey = dentry_key(e, &elen);
            if (elen == klen && memcmp(ekey, key, klen) == 0)
                return link;
        }
        if (!rehashing(d))
            break;
    }
    return NULL;
}

struct dentry **dict_add(struct dict *d, struct dentry *e, uint64_t h) {
    if (!d->table[0]) {
        start_resize(d, MIN_BUCKETS);
    } else if (rehashing(d)) {
        rehash_steps(d, 1);
    } else if (d->count >= d->mask[0] + 1) {
        start_resize(d, next_power(d->count + 1));
    }
    /* New entries go to the table being filled, so table[0] only ever empties. */
    int t = rehashing(d) ? 1 : 0;
    size_t idx = h & d->mask[t];
    e->next = d->table[t][idx];
    d->table[t][idx] = e;
    d->count++;
    return &d->table[t][idx];
}

void dict_shrink_if_sparse(struct dict *d) {
    if (rehashing(d) || !d->table[0])
        return;
    size_t size = d->mask[0] + 1;
    if (d->count == 0) {
        free(d->table[0]);
        dict_init(d);
        return;
    }
    /* Under 10% full, as redis (and above its minimum size). */
    if (size > MIN_BUCKETS && d->count * 10 < size)
        start_resize(d, next_power(d->count));
}

struct dentry **dict_random(struct dict *d) {
    if (d->count == 0)
        return NULL;
    if (rehashing(d))
        rehash_steps(d, 1);
    struct dentry **bucket;
    do {
        if (rehashing(d)) {
            /* Buckets of table[0] below d->rehash are already empty. */
            size_t size0 = d->mask[0] + 1, span = size0 + d->mask[1] + 1 - (size_t)d->rehash;
            size_t i = (size_t)d->rehash + random_u64() % span;
            bucket = i < size0 ? &d->table[0][i] : &d->table[1][i - size0];
        } else {
            bucket = &d->table[0][random_u64() & d->mask[0]];
        }
    } while (*bucket == NULL);
    size_t len = 0;
    for (struct dentry *e = *bucket; e; e = e->next)
        len++;
    size_t pick = random_u64() % len;
    struct dentry **link = bucket;
    while (pick--)
        link = &(*link)->next;
    return link;
}

bool dict_rehash_for(struct dict *d, long long ms) {
    if (!rehashing(d))
        return false;
    long long deadline = monotonic_ms() + ms;
    while (rehashing(d)) {
        rehash_steps(d, 100);
        if (monotonic_ms() >= deadline)
            break;
    }
    return rehashing(d);
}

static inline size_t reverse_bits(size_t v) {
    size_t r = 0;
    for (unsigned i = 0; i < sizeof v * 8; i++) {
        r = (r << 1) | (v & 1);
        v >>= 1;
    }
    return r;
}

/* The next cursor: increment the bits above `mask` reversed, so a table that doubles or
 * halves between calls neither skips nor revisits (much) of what was already emitted. */
static inline size_t next_cursor(size_t v, size_t mask) {
    v |= ~mask;
    v = reverse_bits(v);
    v++;
    return reverse_bits(v);
}

static void emit_bucket(struct dentry *e, void (*fn)(void *, struct dentry *), void *ctx) {
    while (e) {
        struct dentry *next = e->next;
        fn(ctx, e);
        e = next;
    }
}

size_t dict_scan(struct dict *d, size_t v, void (*fn)(void *ctx, struct dentry *e), void *ctx) {
    if (d->count == 0)
        return 0;
    if (!rehashing(d)) {
        size_t m0 = d->mask[0];
        emit_bucket(d->table[0][v & m0], fn, ctx);
        return next_cursor(v, m0);
    }
    int small = d->mask[0] <= d->mask[1] ? 0 : 1, big = 1 - small;
    size_t m0 = d->mask[small], m1 = d->mask[big];
    emit_bucket(d->table[small][v & m0], fn, ctx);
    /* Every bucket of the bigger table that the smaller table's bucket expands to. */
    do {
        emit_bucket(d->table[big][v & m1], fn, ctx);
        v = next_cursor(v, m1);
    } while (v & (m0 ^ m1));
    return v;
}

void dict_iter_init(struct dict_iter *it, struct dict *d) {
    it->d = d;
    it->table = 0;
    it->bucket = 0;
    it->next = NULL;
}

struct dentry *dict_iter_next(struct dict_iter *it) {
    while (!it->next) {
        struct dict *d = it->d;
        if (it->table > 1 || !d->table[it->table])
            return NULL;
        if (it->bucket > d->mask[it->table]) {
            it->table++;
            it->bucket = 0;
            continue;
        }
        it->next = d->table[it->table][it->bucket++];
    }
    struct dentry *e = it->next;
    it->next = e->next;
    return e;
}
