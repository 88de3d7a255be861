/*
 * Unit tests of dict.c: entries with inline keys, growth and shrinking through incremental
 * rehashing, SCAN's guarantee across resizes, random picks.
 */
#include "check.h"
#include "dict.h"
#include "util.h"

#include <stdbool.h>
#include <stdio.h>

static void key_of(int i, char *buf, size_t *len) {
    *len = (size_t)snprintf(buf, 32, "key:%d", i);
}

static struct dentry **find(struct dict *d, int i) {
    char k[32];
    size_t n;
    key_of(i, k, &n);
    return dict_find(d, k, n, hash_bytes(k, n));
}

static void add(struct dict *d, int i) {
    char k[32];
    size_t n;
    key_of(i, k, &n);
    struct dentry *e = dentry_new(k, n, sizeof(int));
    memcpy(dentry_payload(e), &i, sizeof i);
    dict_add(d, e, hash_bytes(k, n));
}

static int value_of(struct dentry *e) {
    int v;
    memcpy(&v, dentry_payload(e), sizeof v);
    return v;
}

static void test_entry_layout(void) {
    struct dentry *e = dentry_new("abc", 3, 5);
    size_t len;
    const char *k = dentry_key(e, &len);
    CHECK(len == 3 && memcmp(k, "abc", 3) == 0);
    CHECK(dentry_payload(e) == e->data + 1 + 3);
    free(e);
    /* Keys of 128 bytes and more take a longer varint. */
    char big[300];
    memset(big, 'x', sizeof big);
    e = dentry_new(big, sizeof big, 0);
    k = dentry_key(e, &len);
    CHECK(len == sizeof big && k == (const char *)e->data + 2);
    free(e);
    unsigned char buf[16];
    size_t v;
    for (size_t x = 0; x < 5000000; x = x * 3 + 1) {
        size_t n = varint_put(buf, x);
        CHECK(n == varint_len(x) && varint_get(buf, &v) == n && v == x);
    }
}

static void test_grow_and_shrink(void) {
    struct dict d;
    dict_init(&d);
    enum { N = 100000 };
    for (int i = 0; i < N; i++) {
        add(&d, i);
        /* Every key stays findable while the table rehashes underneath. */
        if (i % 997 == 0)
            for (int j = 0; j <= i; j += 101)
                CHECK(find(&d, j) && value_of(*find(&d, j)) == j);
    }
    CHECK(dict_size(&d) == N);
    CHECK(find(&d, N) == NULL);
    for (int i = 0; i < N; i += 2)
        free(dict_unlink(&d, find(&d, i)));
    for (int i = 0; i < N; i++) {
        if (i % 2 == 0) {
            CHECK(find(&d, i) == NULL);
        } else {
            /* deletions continue while the shrink started below proceeds */
            struct dentry **l = find(&d, i);
            CHECK(l && value_of(*l) == i);
            if (i % 4 == 1) {
                free(dict_unlink(&d, l));
                dict_shrink_if_sparse(&d);
            }
        }
    }
    CHECK(dict_size(&d) == N / 4);
    size_t before = dict_buckets(&d);
    for (int i = 3; i < N; i += 4) {
        if (i % 64 != 3) {
            free(dict_unlink(&d, find(&d, i)));
            dict_shrink_if_sparse(&d);
        }
    }
    /* A shrink waits for a running rehash; the timer's background rehashing finishes it. */
    while (dict_rehash_for(&d, 100))
        ;
    dict_shrink_if_sparse(&d);
    while (dict_rehash_for(&d, 100))
        ;
    CHECK(dict_size(&d) == N / 64 + 1 && dict_buckets(&d) <= 4096 && before >= 65536);
    size_t seen = 0;
    struct dict_iter it;
    dict_iter_init(&it, &d);
    for (struct dentry *e; (e = dict_iter_next(&it)) != NULL;) {
        CHECK(value_of(e) % 64 == 3);
        seen++;
    }
    CHECK(seen == N / 64 + 1);
    dict_clear(&d, NULL);
    CHECK(dict_size(&d) == 0 && find(&d, 3) == NULL);
}

struct marks {
    unsigned char *seen;
};

static void mark(void *ctx, struct dentry *e) {
    struct marks *m = ctx;
    m->seen[value_of(e)]++;
}

static void test_scan_across_resize(void) {
    struct dict d;
    dict_init(&d);
    enum { N = 5000 };
    for (int i = 0; i < N; i++)
        add(&d, i);
    struct marks m = {calloc(4 * N, 1)};
    size_t cursor = 0;
    int steps = 0;
    do {
        cursor = dict_scan(&d, cursor, mark, &m);
        /* The table doubles in the middle of the scan: keys present all along still come. */
        if (++steps == 50)
            for (int i = N; i < 3 * N; i++)
                add(&d, i);
    } while (cursor != 0);
    for (int i = 0; i < N; i++)
        CHECK(m.seen[i] >= 1);
    free(m.seen);
    dict_clear(&d, NULL);
}

static void test_random(void) {
    struct dict d;
    dict_init(&d);
    CHECK(dict_random(&d) == NULL);
    for (int i = 0; i < 50; i++)
        add(&d, i);
    /* dict_random picks a random non-empty bucket, then a random entry of its chain (as
     * redis's dictGetRandomKey does): not uniform, since an entry sharing its bucket is drawn
     * less often, and the hash seed is random per run. With 20,000 draws the rarest entry
     * (a chain of ~6 among ~30 non-empty buckets) still expects ~110 hits; "more than 10" only
     * fails when an entry is unreachable or nearly so (5,000 draws and "more than 20" failed
     * now and then: a chain of 3 expects ~40). */
    int hits[50] = {0};
    for (int i = 0; i < 20000; i++)
        hits[value_of(*dict_random(&d))]++;
    for (int i = 0; i < 50; i++)
        CHECK(hits[i] > 10);
    /* Unlinking through the random link empties the dict exactly. */
    while (dict_size(&d) > 0)
        free(dict_unlink(&d, dict_random(&d)));
    dict_clear(&d, NULL);
}

int main(void) {
    hash_init();
    RUN(test_entry_layout);
    RUN(test_grow_and_shrink);
    RUN(test_scan_across_resize);
    RUN(test_random);
    return TESTS_DONE();
}
