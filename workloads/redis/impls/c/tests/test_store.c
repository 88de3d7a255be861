/* Unit tests of the store and its value types: the list ring, the sorted set, keyspace strings. */
#include "check.h"
#include "client.h"
#include "commands.h"
#include "hash.h"
#include "list.h"
#include "set.h"
#include "store.h"
#include "util.h"
#include "zset.h"

#include <stdio.h>

static bool slice_eq(struct slice s, const char *lit) {
    return s.len == strlen(lit) && memcmp(s.p, lit, s.len) == 0;
}

static void test_list_ring(void) {
    struct list *l = list_new();
    char buf[64];
    /* Mixed ends force the ring to wrap and to grow while wrapped. */
    for (int i = 0; i < 1000; i++) {
        int n = snprintf(buf, sizeof buf, i % 3 ? "%d" : "element-number-%d", i);
        if (i % 2)
            list_push_head(l, buf, (size_t)n);
        else
            list_push_tail(l, buf, (size_t)n);
    }
    CHECK(list_len(l) == 1000);
    CHECK(slice_eq(list_get(l, 0), "element-number-999"));
    CHECK(slice_eq(list_get(l, 999), "998"));
    CHECK(slice_eq(list_get(l, 500), "element-number-0"));
    list_set(l, 0, "a much longer element than before", 33);
    CHECK(slice_eq(list_get(l, 0), "a much longer element than before"));
    list_set(l, 0, "x", 1);
    CHECK(slice_eq(list_get(l, 0), "x"));
    list_keep(l, 10, 20);
    CHECK(list_len(l) == 20);
    CHECK(slice_eq(list_get(l, 0), "979"));
    while (list_len(l) > 1)
        list_drop_head(l);
    list_drop_tail(l);
    CHECK(list_len(l) == 0);
    list_push_tail(l, "", 0);
    list_push_tail(l, "1234567", 7);  /* the longest inline element */
    list_push_tail(l, "12345678", 8); /* the shortest on the heap */
    list_push_tail(l, "\0\r\n", 3);
    CHECK(list_get(l, 0).len == 0);
    CHECK(slice_eq(list_get(l, 1), "1234567") && slice_eq(list_get(l, 2), "12345678"));
    CHECK(list_get(l, 3).len == 3 && memcmp(list_get(l, 3).p, "\0\r\n", 3) == 0);
    list_free(l);
}

static void test_zset_order_and_rank(void) {
    struct zset *z = zset_new();
    char m[16];
    for (int i = 0; i < 2000; i++) {
        int n = snprintf(m, sizeof m, "m%04d", (i * 7919) % 2000);
        zset_insert(z, (double)((i * 7919) % 2000 / 10), m, (size_t)n); /* ties of 10 */
    }
    CHECK(zset_len(z) == 2000);
    size_t rank = 0;
    for (struct znode *n = zset_first(z); n; n = n->level[0].forward, rank++) {
        snprintf(m, sizeof m, "m%04zu", rank);
        CHECK(slice_eq(znode_member(n), m));
        if (rank % 37 == 0) {
            CHECK(zset_rank(z, n) == rank);
            CHECK(zset_at(z, rank) == n);
        }
    }
    struct znode *n = zset_find(z, "m0005", 5);
    CHECK(n && n->score == 0);
    n = zset_update(z, n, 1000);
    CHECK(z->tail == n && zset_rank(z, n) == 1999);
    n = zset_update(z, n, 1000.5); /* stays last: updated in place */
    CHECK(z->tail == n && n->score == 1000.5);
    CHECK(zset_first_from_score(z, 3, false)->score == 3);
    CHECK(zset_first_from_score(z, 3, true)->score == 4);
    CHECK(zset_last_to_score(z, 3, true)->score == 2);
    zset_delete(z, n);
    CHECK(zset_find(z, "m0005", 5) == NULL && zset_len(z) == 1999);
    while (zset_len(z) > 0)
        zset_delete(z, zset_first(z));
    CHECK(zset_first(z) == NULL && z->tail == NULL);
    zset_free(z);
}

static void test_strings_in_store(void) {
    struct db *db = &databases[0];
    struct slice key = {"k", 1};
    struct keyref k = db_lookup(db, key);
    CHECK(k.link == NULL);
    CHECK(db_set_string(&k, "abc", 3));
    k = db_lookup(db, key);
    CHECK(slice_eq(entry_string(*k.link), "abc"));
    CHECK(db_set_string(&k, "a longer value", 14));
    CHECK(slice_eq(entry_string(*db_lookup(db, key).link), "a longer value"));
    /* APPEND grows inline up to a point, then moves to a growable buffer. */
    for (int i = 0; i < 100; i++) {
        k = db_lookup(db, key);
        CHECK(db_append_string(&k, "x", 1));
    }
    struct dentry *e = *db_lookup(db, key).link;
    CHECK(entry_string(e).len == 114 && (e->meta & META_HEAP_STRING));
    k = db_lookup(db, key);
    CHECK(db_set_expire(&k, now_ms() + 100000));
    CHECK(db_get_expire(&k) > now_ms());
    CHECK(db_set_string(&k, "v", 1)); /* the expiry flag survives a type/encoding change */
    CHECK(db_get_expire(&k) > now_ms());
    CHECK(db_clear_expire(&k) && db_get_expire(&k) == -1);
    CHECK(db_set_expire(&k, now_ms() - 1));
    CHECK(db_lookup(db, key).link == NULL); /* expired: gone on access */
    CHECK(db_size(db) == 0 && dict_size(&db->expires) == 0);
}

static struct slice S(const char *s) {
    return (struct slice){s, strlen(s)};
}

static void
test_hash_encodings(void) {
    struct hash *h = hash_new();
    CHECK(hash_set(h, S("b"), S("1")) == 1);
    CHECK(hash_set(h, S("a"), S("2")) == 1);
    CHECK(hash_set(h, S("c"), S("3")) == 1);
    CHECK(hash_set(h, S("a"), S("a longer value")) == 0); /* in place: order kept */
    CHECK(hash_delete(h, S("b")) && !hash_delete(h, S("b")));
    struct hash_iter it;
    struct slice f, v;
    hash_iter_init(&it, h);
    CHECK(hash_iter_next(&it, &f, &v) && slice_eq(f, "a") && slice_eq(v, "a longer value"));
    CHECK(hash_iter_next(&it, &f, &v) && slice_eq(f, "c") && slice_eq(v, "3"));
    CHECK(!hash_iter_next(&it, &f, &v));
    CHECK(h->packed && hash_len(h) == 2);
    /* 129 fields, or one long value, make it a dict; everything stays readable. */
    char name[16];
    for (int i = 0; i < 129; i++) {
        snprintf(name, sizeof name, "f%d", i);
        CHECK(hash_set(h, S(name), S(name)) == 1);
    }
    CHECK(!h->packed && hash_len(h) == 131);
    CHECK(hash_get(h, S("f77"), &v) && slice_eq(v, "f77"));
    CHECK(hash_get(h, S("a"), &v) && slice_eq(v, "a longer value"));
    hash_free(h);
    h = hash_new();
    char big[100];
    memset(big, 'x', sizeof big);
    CHECK(hash_set(h, S("k"), (struct slice){big, sizeof big}) == 1 && !h->packed);
    hash_free(h);
}

static void test_set_encodings(void) {
    struct set *s = set_new();
    CHECK(set_add(s, S("10")) == 1 && set_add(s, S("-3")) == 1 && set_add(s, S("7")) == 1);
    CHECK(set_add(s, S("7")) == 0 && s->ints);
    CHECK(set_contains(s, S("-3")) && !set_contains(s, S("07")) && !set_contains(s, S("x")));
    struct set_iter it;
    struct set_member m = {.owned = NULL};
    set_iter_init(&it, s);
    CHECK(set_iter_next(&it, &m) && slice_eq(m.s, "-3")); /* ascending, as an intset */
    CHECK(set_iter_next(&it, &m) && slice_eq(m.s, "7"));
    CHECK(set_iter_next(&it, &m) && slice_eq(m.s, "10"));
    CHECK(set_add(s, S("07")) == 1 && !s->ints); /* not canonical: a dict from now on */
    CHECK(set_contains(s, S("10")) && set_contains(s, S("07")) && set_len(s) == 4);
    CHECK(set_remove(s, S("10")) && !set_remove(s, S("10")));
    size_t n = 0;
    while (set_len(s) > 0) {
        set_pop(s, &m);
        set_member_release(&m);
        n++;
    }
    CHECK(n == 3);
    set_free(s);
}

/* One command through command_execute on a bare client; the reply's bytes. */
static struct outbuf reply_out;
static const char *run(struct client *c, int argc, const char **words) {
    struct slice argv[8];
    for (int i = 0; i < argc; i++)
        argv[i] = S(words[i]);
    reply_out.len = 0;
    command_execute(c, argc, argv);
    outbuf_grow(&reply_out, 1);
    reply_out.buf[reply_out.len] = '\0';
    return reply_out.buf;
}
#define RUN_CMD(c, ...)                                                                            \
    run((c), sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *), (const char *[]){__VA_ARGS__})

/* Found by UBSan (make check-deep, cases.py fuzz-expiretime-max): seconds were rounded as
 * (ms + 500) / 1000, a signed overflow for an expiry near 2^63-1 ms. redis 7.0.15's replies. */
static void test_expiretime_rounds_without_overflow(void) {
    struct client c = {.db = &databases[0], .resp = 2, .out = &reply_out};
    CHECK(!strcmp(RUN_CMD(&c, "SET", "a", "1", "PXAT", "9223372036854775807"), "+OK\r\n"));
    CHECK(!strcmp(RUN_CMD(&c, "EXPIRETIME", "a"), ":9223372036854776\r\n"));
    CHECK(!strcmp(RUN_CMD(&c, "PEXPIRETIME", "a"), ":9223372036854775807\r\n"));
    CHECK(!strcmp(RUN_CMD(&c, "PEXPIREAT", "a", "9223372036854775500"), ":1\r\n"));
    CHECK(!strcmp(RUN_CMD(&c, "EXPIRETIME", "a"), ":9223372036854776\r\n"));
    CHECK(!strcmp(RUN_CMD(&c, "PEXPIREAT", "a", "9223372036854775499"), ":1\r\n"));
    CHECK(!strcmp(RUN_CMD(&c, "EXPIRETIME", "a"), ":9223372036854775\r\n"));
    CHECK(!strcmp(RUN_CMD(&c, "DEL", "a"), ":1\r\n"));
    free(reply_out.buf);
}

int main(void) {
    hash_init();
    store_init();
    commands_init();
    RUN(test_list_ring);
    RUN(test_zset_order_and_rank);
    RUN(test_strings_in_store);
    RUN(test_hash_encodings);
    RUN(test_set_encodings);
    RUN(test_expiretime_rounds_without_overflow);
    return TESTS_DONE();
}
