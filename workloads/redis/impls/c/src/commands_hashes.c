/* Hash commands (the type itself is in hash.c). */
#include "commands.h"

#include "hash.h"
#include "numeric.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

/* The hash at the key, created empty if absent (hashTypeLookupWriteOrCreate); NULL after a
 * WRONGTYPE or OOM reply. */
static struct hash *hash_for_write(struct client *c, struct slice key, struct keyref *k) {
    if (!lookup_typed(c, key, T_HASH, k))
        return NULL;
    if (k->link)
        return entry_object(*k->link);
    struct hash *h = hash_new();
    if (!h || !db_add_object(k, T_HASH, h)) {
        if (h)
            hash_free(h);
        reply_error(c->out, "-OOM command not allowed when used memory > 'maxmemory'.");
        return NULL;
    }
    return h;
}

/* The hash at the key for reading: NULL if absent (nothing replied) or of another type
 * (WRONGTYPE replied, *wrong set). */
static struct hash *hash_for_read(struct client *c, struct slice key, bool *wrong) {
    struct keyref k;
    *wrong = !lookup_typed(c, key, T_HASH, &k);
    return k.link && !*wrong ? entry_object(*k.link) : NULL;
}

static void hset_generic(struct client *c, int argc, struct slice *argv, bool hmset) {
    if (argc % 2 == 1) {
        reply_errorf(c->out, "wrong number of arguments for '%s' command",
                     hmset ? "hmset" : "hset");
        return;
    }
    struct keyref k;
    struct hash *h = hash_for_write(c, argv[1], &k);
    if (!h)
        return;
    long long created = 0;
    for (int i = 2; i < argc; i += 2) {
        int r = hash_set(h, argv[i], argv[i + 1]);
        if (r < 0)
            break;
        created += r;
    }
    if (hmset)
        reply_ok(c->out);
    else
        reply_int(c->out, created);
}

static void hset_command(struct client *c, int argc, struct slice *argv) {
    hset_generic(c, argc, argv, false);
}

static void hmset_command(struct client *c, int argc, struct slice *argv) {
    hset_generic(c, argc, argv, true);
}

static void hsetnx_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k;
    struct hash *h = hash_for_write(c, argv[1], &k);
    if (!h)
        return;
    struct slice old;
    if (hash_get(h, argv[2], &old)) {
        REPLY_LITERAL(c->out, ":0\r\n");
        return;
    }
    hash_set(h, argv[2], argv[3]);
    REPLY_LITERAL(c->out, ":1\r\n");
}

static void reply_field(struct client *c, struct hash *h, struct slice field) {
    struct slice v;
    if (h && hash_get(h, field, &v))
        reply_bulk(c->out, v.p, v.len);
    else
        reply_null(c->out);
}

static void hget_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    bool wrong;
    struct hash *h = hash_for_read(c, argv[1], &wrong);
    if (!wrong)
        reply_field(c, h, argv[2]);
}

static void hmget_command(struct client *c, int argc, struct slice *argv) {
    bool wrong;
    struct hash *h = hash_for_read(c, argv[1], &wrong);
    if (wrong)
        return;
    reply_array(c->out, argc - 2);
    for (int i = 2; i < argc; i++)
        reply_field(c, h, argv[i]);
}

static void hstrlen_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    bool wrong;
    struct hash *h = hash_for_read(c, argv[1], &wrong);
    if (wrong)
        return;
    struct slice v;
    reply_int(c->out, h && hash_get(h, argv[2], &v) ? (long long)v.len : 0);
}

#define WITH_FIELDS 1
#define WITH_VALUES 2

static void hgetall_generic(struct client *c, struct slice key, int what) {
    bool wrong;
    struct hash *h = hash_for_read(c, key, &wrong);
    if (wrong)
        return;
    long long n = h ? (long long)hash_len(h) : 0;
    if (what == (WITH_FIELDS | WITH_VALUES))
        reply_map(c->out, n);
    else
        reply_array(c->out, n);
    if (!h)
        return;
    struct hash_iter it;
    hash_iter_init(&it, h);
    struct slice f, v;
    while (hash_iter_next(&it, &f, &v)) {
        if (what & WITH_FIELDS)
            reply_bulk(c->out, f.p, f.len);
        if (what & WITH_VALUES)
            reply_bulk(c->out, v.p, v.len);
    }
}

static void hgetall_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    hgetall_generic(c, argv[1], WITH_FIELDS | WITH_VALUES);
}

static void hkeys_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    hgetall_generic(c, argv[1], WITH_FIELDS);
}

static void hvals_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    hgetall_generic(c, argv[1], WITH_VALUES);
}

static void hdel_command(struct client *c, int argc, struct slice *argv) {
    struct keyref k;
    if (!lookup_typed(c, argv[1], T_HASH, &k))
        return;
    if (!k.link) {
        REPLY_LITERAL(c->out, ":0\r\n");
        return;
    }
    struct hash *h = entry_object(*k.link);
    long long deleted = 0;
    for (int i = 2; i < argc && hash_len(h) > 0; i++)
        deleted += hash_delete(h, argv[i]);
    delete_if_empty(&k, hash_len(h));
    reply_int(c->out, deleted);
}

static void hlen_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    bool wrong;
    struct hash *h = hash_for_read(c, argv[1], &wrong);
    if (!wrong)
        reply_int(c->out, h ? (long long)hash_len(h) : 0);
}

static void hexists_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    bool wrong;
    struct hash *h = hash_for_read(c, argv[1], &wrong);
    if (!wrong)
        reply_int(c->out, h && hash_get(h, argv[2], &(struct slice){0}));
}

static void hincrby_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    long long incr;
    if (!arg_ll(c, argv[3], &incr))
        return;
    struct keyref k;
    struct hash *h = hash_for_write(c, argv[1], &k);
    if (!h)
        return;
    long long value = 0;
    struct slice v;
    if (hash_get(h, argv[2], &v)) {
        if (!parse_ll(v.p, v.len, &value)) {
            reply_error(c->out, "hash value is not an integer");
            return;
        }
    }
    if ((incr < 0 && value < 0 && incr < LLONG_MIN - value) ||
        (incr > 0 && value > 0 && incr > LLONG_MAX - value)) {
        reply_error(c->out, ERR_OVERFLOW);
        return;
    }
    value += incr;
    char num[NUM_BUF];
    size_t n = format_ll(num, value);
    hash_set(h, argv[2], (struct slice){num, n});
    reply_int(c->out, value);
}

static void hincrbyfloat_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    long double incr, value = 0;
    if (!parse_long_double(argv[3].p, argv[3].len, &incr)) {
        reply_error(c->out, ERR_NOT_FLOAT);
        return;
    }
    if (isnan(incr) || isinf(incr)) {
        reply_error(c->out, "value is NaN or Infinity");
        return;
    }
    struct keyref k;
    struct hash *h = hash_for_write(c, argv[1], &k);
    if (!h)
        return;
    struct slice v;
    if (hash_get(h, argv[2], &v)) {
        if (!parse_long_double(v.p, v.len, &value)) {
            reply_error(c->out, "hash value is not a float");
            return;
        }
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        reply_error(c->out, "increment would produce NaN or Infinity");
        return;
    }
    char num[LONG_DOUBLE_BUF];
    size_t n = format_long_double(num, value);
    hash_set(h, argv[2], (struct slice){num, n});
    reply_bulk(c->out, num, n);
}

const struct command hash_commands[] = {
    {"hset", hset_command, -4, "write denyoom fast", 1, 1, 1, "hash",
     "Set the string value of a hash field", NULL},
    {"hmset", hmset_command, -4, "write denyoom fast", 1, 1, 1, "hash",
     "Set multiple hash fields to multiple values", NULL},
    {"hsetnx", hsetnx_command, 4, "write denyoom fast", 1, 1, 1, "hash",
     "Set the value of a hash field, only if the field does not exist", NULL},
    {"hget", hget_command, 3, "readonly fast", 1, 1, 1, "hash", "Get the value of a hash field",
     NULL},
    {"hmget", hmget_command, -3, "readonly fast", 1, 1, 1, "hash",
     "Get the values of all the given hash fields", NULL},
    {"hstrlen", hstrlen_command, 3, "readonly fast", 1, 1, 1, "hash",
     "Get the length of the value of a hash field", NULL},
    {"hgetall", hgetall_command, 2, "readonly", 1, 1, 1, "hash",
     "Get all the fields and values in a hash", NULL},
    {"hkeys", hkeys_command, 2, "readonly", 1, 1, 1, "hash", "Get all the fields in a hash", NULL},
    {"hvals", hvals_command, 2, "readonly", 1, 1, 1, "hash", "Get all the values in a hash", NULL},
    {"hdel", hdel_command, -3, "write fast", 1, 1, 1, "hash", "Delete one or more hash fields",
     NULL},
    {"hlen", hlen_command, 2, "readonly fast", 1, 1, 1, "hash",
     "Get the number of fields in a hash", NULL},
    {"hexists", hexists_command, 3, "readonly fast", 1, 1, 1, "hash",
     "Determine if a hash field exists", NULL},
    {"hincrby", hincrby_command, 4, "write denyoom fast", 1, 1, 1, "hash",
     "Increment the integer value of a hash field by the given number", NULL},
    {"hincrbyfloat", hincrbyfloat_command, 4, "write denyoom fast", 1, 1, 1, "hash",
     "Increment the float value of a hash field by the given amount", NULL},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL},
};
