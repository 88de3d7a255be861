/* Generic key commands: existence, type, expiry, KEYS/SCAN, databases. */
#include "commands.h"
#include "globmatch.h"
#include "numeric.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

static void del_command(struct client *c, int argc, struct slice *argv) {
    long long deleted = 0;
    for (int i = 1; i < argc; i++) {
        struct keyref k = db_lookup(c->db, argv[i]); /* an expired key does not count */
        if (k.link) {
            db_delete(&k);
            deleted++;
        }
    }
    reply_int(c->out, deleted);
}

static void exists_command(struct client *c, int argc, struct slice *argv) {
    long long found = 0;
    for (int i = 1; i < argc; i++) {
        struct keyref k = db_lookup(c->db, argv[i]);
        found += k.link != NULL;
    }
    reply_int(c->out, found);
}

static const char *type_name(struct dentry *e) {
    if (!e)
        return "none";
    switch (entry_type(e)) {
    case T_STRING:
        return "string";
    case T_LIST:
        return "list";
    case T_HASH:
        return "hash";
    case T_SET:
        return "set";
    case T_ZSET:
        return "zset";
    }
    return "none";
}

static void type_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k = db_lookup(c->db, argv[1]);
    reply_simple(c->out, type_name(keyref_entry(&k)));
}

#define EXPIRE_NX 1
#define EXPIRE_XX 2
#define EXPIRE_GT 4
#define EXPIRE_LT 8

/* expireGenericCommand: `base` is now (EXPIRE/PEXPIRE) or 0 (EXPIREAT/PEXPIREAT). */
static void expire_generic(struct client *c, int argc, struct slice *argv, long long base,
                           bool seconds, const char *cmd) {
    int flags = 0;
    for (int j = 3; j < argc; j++) {
        if (slice_is(argv[j], "nx")) {
            flags |= EXPIRE_NX;
        } else if (slice_is(argv[j], "xx")) {
            flags |= EXPIRE_XX;
        } else if (slice_is(argv[j], "gt")) {
            flags |= EXPIRE_GT;
        } else if (slice_is(argv[j], "lt")) {
            flags |= EXPIRE_LT;
        } else {
            const char *nul = memchr(argv[j].p, '\0', argv[j].len);
            int len = (int)(nul ? (size_t)(nul - argv[j].p) : argv[j].len);
            reply_errorf(c->out, "Unsupported option %.*s", len, argv[j].p);
            return;
        }
    }
    if ((flags & EXPIRE_NX) && (flags & (EXPIRE_XX | EXPIRE_GT | EXPIRE_LT))) {
        reply_error(c->out, "NX and XX, GT or LT options at the same time are not compatible");
        return;
    }
    if ((flags & EXPIRE_GT) && (flags & EXPIRE_LT)) {
        reply_error(c->out, "GT and LT options at the same time are not compatible");
        return;
    }
    long long when;
    if (!arg_ll(c, argv[2], &when))
        return;
    if (seconds) {
        if (when > LLONG_MAX / 1000 || when < LLONG_MIN / 1000) {
            reply_errorf(c->out, "invalid expire time in '%s' command", cmd);
            return;
        }
        when *= 1000;
    }
    if (when > LLONG_MAX - base) {
        reply_errorf(c->out, "invalid expire time in '%s' command", cmd);
        return;
    }
    when += base;
    struct keyref k = db_lookup(c->db, argv[1]);
    if (!k.link) {
        REPLY_LITERAL(c->out, ":0\r\n");
        return;
    }
    if (flags) {
        long long current = db_get_expire(&k);
        if (((flags & EXPIRE_NX) && current != -1) || ((flags & EXPIRE_XX) && current == -1) ||
            ((flags & EXPIRE_GT) && (when <= current || current == -1)) ||
            ((flags & EXPIRE_LT) && current != -1 && when >= current)) {
            REPLY_LITERAL(c->out, ":0\r\n");
            return;
        }
    }
    if (when <= now_ms())
        db_delete(&k); /* already in the past: the key goes now */
    else
        db_set_expire(&k, when);
    REPLY_LITERAL(c->out, ":1\r\n");
}

static void expire_command(struct client *c, int argc, struct slice *argv) {
    expire_generic(c, argc, argv, now_ms(), true, "expire");
}

static void pexpire_command(struct client *c, int argc, struct slice *argv) {
    expire_generic(c, argc, argv, now_ms(), false, "pexpire");
}

static void expireat_command(struct client *c, int argc, struct slice *argv) {
    expire_generic(c, argc, argv, 0, true, "expireat");
}

static void pexpireat_command(struct client *c, int argc, struct slice *argv) {
    expire_generic(c, argc, argv, 0, false, "pexpireat");
}

/* ttlGenericCommand: -2 missing, -1 no expiry, else the time left (seconds rounded). */
static void ttl_generic(struct client *c, struct slice key, bool ms, bool absolute) {
    struct keyref k = db_lookup(c->db, key);
    if (!k.link) {
        REPLY_LITERAL(c->out, ":-2\r\n");
        return;
    }
    long long when = db_get_expire(&k);
    if (when == -1) {
        REPLY_LITERAL(c->out, ":-1\r\n");
        return;
    }
    long long ttl = absolute ? when : when - now_ms();
    if (ttl < 0)
        ttl = 0;
    /* Seconds rounded half up, as redis's (ttl+500)/1000, without its signed overflow near
     * the largest time (a PXAT of 2^63-1: UBSan in the sanitize profile). */
    reply_int(c->out, ms ? ttl : ttl / 1000 + (ttl % 1000 >= 500));
}

static void ttl_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    ttl_generic(c, argv[1], false, false);
}

static void pttl_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    ttl_generic(c, argv[1], true, false);
}

static void expiretime_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    ttl_generic(c, argv[1], false, true);
}

static void pexpiretime_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    ttl_generic(c, argv[1], true, true);
}

static void persist_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k = db_lookup(c->db, argv[1]);
    reply_int(c->out, k.link && db_clear_expire(&k));
}

/* A growable array of entries: KEYS and SCAN collect before they know the reply's length. */
struct entries {
    struct dentry **v;
    size_t len, cap;
};

static void entries_push(void *ctx, struct dentry *e) {
    struct entries *es = ctx;
    if (es->len == es->cap) {
        size_t cap = es->cap ? es->cap * 2 : 64;
        struct dentry **bigger = realloc(es->v, cap * sizeof *bigger);
        if (!bigger)
            return; /* the reply lists fewer keys rather than none */
        es->v = bigger;
        es->cap = cap;
    }
    es->v[es->len++] = e;
}

static void reply_keys(struct client *c, struct entries *es) {
    reply_array(c->out, (long long)es->len);
    for (size_t i = 0; i < es->len; i++) {
        size_t klen;
        const char *key = dentry_key(es->v[i], &klen);
        reply_bulk(c->out, key, klen);
    }
}

static void keys_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct slice pat = argv[1];
    bool all = pat.len == 1 && pat.p[0] == '*';
    long long now = now_ms();
    struct entries es = {0};
    struct dict_iter it;
    dict_iter_init(&it, &c->db->keys);
    for (struct dentry *e; (e = dict_iter_next(&it)) != NULL;) {
        size_t klen;
        const char *key = dentry_key(e, &klen);
        if ((all || glob_match(pat.p, pat.len, key, klen, false)) &&
            !db_entry_expired(c->db, e, now))
            entries_push(&es, e);
    }
    reply_keys(c, &es);
    free(es.v);
}

/* SCAN's cursor is parsed with strtoul, as redis: leading '+'/'-' and zeros are accepted. */
static bool scan_cursor(struct client *c, struct slice arg, size_t *cursor) {
    char buf[64];
    bool ok = arg.len < sizeof buf && !(arg.len > 0 && isspace((unsigned char)arg.p[0]));
    if (ok) {
        memcpy(buf, arg.p, arg.len);
        buf[arg.len] = '\0';
        char *end;
        errno = 0;
        *cursor = strtoul(buf, &end, 10);
        ok = *end == '\0' && errno != ERANGE;
    }
    if (!ok)
        reply_error(c->out, "invalid cursor");
    return ok;
}

static void scan_command(struct client *c, int argc, struct slice *argv) {
    size_t cursor;
    if (!scan_cursor(c, argv[1], &cursor))
        return;
    long long count = 10;
    struct slice pat = {NULL, 0}, type = {NULL, 0};
    bool use_pattern = false, use_type = false;
    for (int i = 2; i < argc; i += 2) {
        bool has_value = argc - i >= 2;
        if (slice_is(argv[i], "count") && has_value) {
            if (!arg_ll(c, argv[i + 1], &count))
                return;
            if (count < 1) {
                reply_error(c->out, ERR_SYNTAX);
                return;
            }
        } else if (slice_is(argv[i], "match") && has_value) {
            pat = argv[i + 1];
            use_pattern = !(pat.len == 1 && pat.p[0] == '*');
        } else if (slice_is(argv[i], "type") && has_value) {
            type = argv[i + 1];
            use_type = true;
        } else {
            reply_error(c->out, ERR_SYNTAX);
            return;
        }
    }
    struct entries es = {0};
    long long max_iterations = count * 10;
    do {
        cursor = dict_scan(&c->db->keys, cursor, entries_push, &es);
    } while (cursor && max_iterations-- && es.len < (size_t)count);
    long long now = now_ms();
    size_t kept = 0;
    struct entries expired = {0};
    for (size_t i = 0; i < es.len; i++) {
        struct dentry *e = es.v[i];
        size_t klen;
        const char *key = dentry_key(e, &klen);
        if (use_pattern && !glob_match(pat.p, pat.len, key, klen, false))
            continue;
        /* redis's scanGenericCommand: a key that matched the pattern but has expired is
         * deleted (its TYPE check looks it up, or expireIfNeeded does), not just left out. */
        if (db_entry_expired(c->db, e, now)) {
            entries_push(&expired, e);
            continue;
        }
        if (use_type) {
            const char *name = type_name(e);
            size_t n = strlen(name);
            if (type.len != n || strncasecmp(type.p, name, n) != 0)
                continue;
        }
        es.v[kept++] = e;
    }
    es.len = kept;
    reply_array(c->out, 2);
    char num[NUM_BUF];
    int n = snprintf(num, sizeof num, "%zu", cursor);
    reply_bulk(c->out, num, (size_t)n);
    reply_keys(c, &es);
    free(es.v);
    for (size_t i = 0; i < expired.len; i++) {
        size_t klen;
        const char *key = dentry_key(expired.v[i], &klen);
        db_lookup(c->db, (struct slice){key, klen}); /* deletes it: it has expired */
    }
    free(expired.v);
}

/* A database number as SELECT and MOVE read it (an int, then 0-15). */
static bool db_index_arg(struct client *c, struct slice arg, long long *id) {
    if (!arg_ll(c, arg, id))
        return false;
    if (*id < INT_MIN || *id > INT_MAX) {
        reply_error(c->out, "value is out of range, value must between -2147483648 and 2147483647");
        return false;
    }
    if (*id < 0 || *id >= DB_COUNT) {
        reply_error(c->out, "DB index is out of range");
        return false;
    }
    return true;
}

/* RENAME/RENAMENX: the value and its TTL move to the new name (replacing it, or not). */
static void rename_generic(struct client *c, struct slice *argv, bool nx) {
    struct keyref from = db_lookup(c->db, argv[1]);
    if (!from.link) {
        reply_error(c->out, ERR_NO_KEY);
        return;
    }
    if (argv[1].len == argv[2].len && memcmp(argv[1].p, argv[2].p, argv[1].len) == 0) {
        if (nx)
            REPLY_LITERAL(c->out, ":0\r\n");
        else
            reply_ok(c->out);
        return;
    }
    struct keyref to = db_lookup(c->db, argv[2]);
    if (to.link) {
        if (nx) {
            REPLY_LITERAL(c->out, ":0\r\n");
            return;
        }
        db_delete(&to);
    }
    /* The lookup of `to` may have changed the dict: find `from` again. */
    from = db_lookup(c->db, argv[1]);
    if (!from.link) {
        reply_error(c->out, ERR_NO_KEY);
        return;
    }
    if (!db_move(&from, &to)) {
        reply_error(c->out, "-OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    if (nx)
        REPLY_LITERAL(c->out, ":1\r\n");
    else
        reply_ok(c->out);
}

static void rename_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    rename_generic(c, argv, false);
}

static void renamenx_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    rename_generic(c, argv, true);
}

/* MOVE key db: to another database, only if the key is absent there. */
static void move_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    long long id;
    if (!db_index_arg(c, argv[2], &id))
        return;
    if (&databases[id] == c->db) {
        reply_error(c->out, "source and destination objects are the same");
        return;
    }
    struct keyref from = db_lookup(c->db, argv[1]);
    if (!from.link) {
        REPLY_LITERAL(c->out, ":0\r\n");
        return;
    }
    struct keyref to = db_lookup(&databases[id], argv[1]);
    if (to.link) {
        REPLY_LITERAL(c->out, ":0\r\n");
        return;
    }
    if (!db_move(&from, &to)) {
        reply_error(c->out, "-OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    REPLY_LITERAL(c->out, ":1\r\n");
}

static void randomkey_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    /* redis's dbRandomKey: a pick that has expired is deleted and another one drawn (each
     * round returns or deletes a key, so this ends). */
    long long now = now_ms();
    while (db_size(c->db) > 0) {
        struct dentry *e = *dict_random(&c->db->keys);
        size_t klen;
        const char *key = dentry_key(e, &klen);
        if (db_entry_expired(c->db, e, now)) {
            db_lookup(c->db, (struct slice){key, klen}); /* deletes it */
            continue;
        }
        reply_bulk(c->out, key, klen);
        return;
    }
    reply_null(c->out);
}

/* SWAPDB a b: the two databases trade contents (clients stay on their numbers). */
static void swapdb_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    long long a, b;
    if (!parse_ll(argv[1].p, argv[1].len, &a) || a < INT_MIN || a > INT_MAX) {
        reply_error(c->out, "invalid first DB index");
        return;
    }
    if (!parse_ll(argv[2].p, argv[2].len, &b) || b < INT_MIN || b > INT_MAX) {
        reply_error(c->out, "invalid second DB index");
        return;
    }
    if (a < 0 || a >= DB_COUNT || b < 0 || b >= DB_COUNT) {
        reply_error(c->out, "DB index is out of range");
        return;
    }
    struct db tmp = databases[a];
    databases[a] = databases[b];
    databases[b] = tmp;
    reply_ok(c->out);
}

static void dbsize_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    (void)argv;
    reply_int(c->out, (long long)db_size(c->db));
}

/* FLUSHDB/FLUSHALL take an optional SYNC or ASYNC (both flush now here). */
static bool flush_args(struct client *c, int argc, struct slice *argv) {
    if (argc == 1 || (argc == 2 && (slice_is(argv[1], "sync") || slice_is(argv[1], "async"))))
        return true;
    reply_error(c->out, ERR_SYNTAX);
    return false;
}

static void flushdb_command(struct client *c, int argc, struct slice *argv) {
    if (!flush_args(c, argc, argv))
        return;
    db_flush(c->db);
    reply_ok(c->out);
}

static void flushall_command(struct client *c, int argc, struct slice *argv) {
    if (!flush_args(c, argc, argv))
        return;
    for (int i = 0; i < DB_COUNT; i++)
        db_flush(&databases[i]);
    reply_ok(c->out);
}

static void select_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    long long id;
    if (!db_index_arg(c, argv[1], &id))
        return;
    c->db_index = (int)id;
    c->db = &databases[id];
    reply_ok(c->out);
}

const struct command key_commands[] = {
    {"del", del_command, -2, "write", 1, -1, 1, "generic", "Delete a key", NULL},
    {"unlink", del_command, -2, "write fast", 1, -1, 1, "generic", "Delete a key", NULL},
    {"exists", exists_command, -2, "readonly fast", 1, -1, 1, "generic",
     "Determine if a key exists", NULL},
    {"type", type_command, 2, "readonly fast", 1, 1, 1, "generic",
     "Determine the type stored at key", NULL},
    {"expire", expire_command, -3, "write fast", 1, 1, 1, "generic",
     "Set a key's time to live in seconds", NULL},
    {"pexpire", pexpire_command, -3, "write fast", 1, 1, 1, "generic",
     "Set a key's time to live in milliseconds", NULL},
    {"expireat", expireat_command, -3, "write fast", 1, 1, 1, "generic",
     "Set the expiration for a key as a UNIX timestamp", NULL},
    {"pexpireat", pexpireat_command, -3, "write fast", 1, 1, 1, "generic",
     "Set the expiration for a key as a UNIX timestamp specified in milliseconds", NULL},
    {"ttl", ttl_command, 2, "readonly fast", 1, 1, 1, "generic",
     "Get the time to live for a key in seconds", NULL},
    {"pttl", pttl_command, 2, "readonly fast", 1, 1, 1, "generic",
     "Get the time to live for a key in milliseconds", NULL},
    {"expiretime", expiretime_command, 2, "readonly fast", 1, 1, 1, "generic",
     "Get the expiration Unix timestamp for a key", NULL},
    {"pexpiretime", pexpiretime_command, 2, "readonly fast", 1, 1, 1, "generic",
     "Get the expiration Unix timestamp for a key in milliseconds", NULL},
    {"persist", persist_command, 2, "write fast", 1, 1, 1, "generic",
     "Remove the expiration from a key", NULL},
    {"keys", keys_command, 2, "readonly", 0, 0, 0, "generic",
     "Find all keys matching the given pattern", NULL},
    {"scan", scan_command, -2, "readonly", 0, 0, 0, "generic",
     "Incrementally iterate the keys space", NULL},
    {"rename", rename_command, 3, "write", 1, 2, 1, "generic", "Rename a key", NULL},
    {"renamenx", renamenx_command, 3, "write fast", 1, 2, 1, "generic",
     "Rename a key, only if the new key does not exist", NULL},
    {"move", move_command, 3, "write fast", 1, 1, 1, "generic", "Move a key to another database",
     NULL},
    {"randomkey", randomkey_command, 1, "readonly", 0, 0, 0, "generic",
     "Return a random key from the keyspace", NULL},
    {"swapdb", swapdb_command, 3, "write fast", 0, 0, 0, "server", "Swaps two Redis databases",
     NULL},
    {"dbsize", dbsize_command, 1, "readonly fast", 0, 0, 0, "server",
     "Return the number of keys in the selected database", NULL},
    {"flushdb", flushdb_command, -1, "write", 0, 0, 0, "server",
     "Remove all keys from the current database", NULL},
    {"flushall", flushall_command, -1, "write", 0, 0, 0, "server",
     "Remove all keys from all databases", NULL},
    {"select", select_command, 2, "loading stale fast", 0, 0, 0, "connection",
     "Change the selected database for the current connection", NULL},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL},
};
