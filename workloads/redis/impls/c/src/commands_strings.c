/* String commands: GET, SET and its options, counters, APPEND, multi-key MGET/MSET. */
#include "commands.h"
#include "numeric.h"

#include <limits.h>
#include <math.h>
#include <stdlib.h>

/* Replies the key's string value (or nil); false after a WRONGTYPE reply. redis's
 * getGenericCommand, shared by GET, SET ... GET, GETSET and GETDEL. */
static bool reply_string_of(struct client *c, struct keyref *k) {
    struct dentry *e = keyref_entry(k);
    if (!e) {
        reply_null(c->out);
        return true;
    }
    if (entry_type(e) != T_STRING) {
        reply_error(c->out, ERR_WRONGTYPE);
        return false;
    }
    struct slice v = entry_string(e);
    reply_bulk(c->out, v.p, v.len);
    return true;
}

static void get_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k = db_lookup(c->db, argv[1]);
    reply_string_of(c, &k);
}

static void reply_oom(struct client *c) {
    reply_error(c->out, "-OOM command not allowed when used memory > 'maxmemory'.");
}

#define SET_NX 0x01
#define SET_XX 0x02
#define SET_GET 0x04
#define SET_KEEPTTL 0x08
#define SET_EX 0x10
#define SET_PX 0x20
#define SET_EXAT 0x40
#define SET_PXAT 0x80
#define SET_ANY_EXPIRE (SET_EX | SET_PX | SET_EXAT | SET_PXAT)
#define SET_PERSIST 0x100

/*
 * The expiry argument of SET/SETEX/PSETEX as an absolute time in ms; false after replying
 * the error. As redis 7.0: the number must be positive, seconds must not overflow when
 * turned into ms, nor a relative time when the clock is added.
 */
static bool expire_arg(struct client *c, struct slice arg, int flags, const char *cmd,
                       long long *when) {
    long long v;
    if (!arg_ll(c, arg, &v))
        return false;
    bool seconds = flags & (SET_EX | SET_EXAT);
    if (v <= 0 || (seconds && v > LLONG_MAX / 1000)) {
        reply_errorf(c->out, "invalid expire time in '%s' command", cmd);
        return false;
    }
    if (seconds)
        v *= 1000;
    if ((flags & (SET_EX | SET_PX)) && __builtin_add_overflow(v, now_ms(), &v)) {
        reply_errorf(c->out, "invalid expire time in '%s' command", cmd);
        return false;
    }
    *when = v;
    return true;
}

/* setGenericCommand: stores the value honouring NX/XX/GET/KEEPTTL and the expiry. */
static void set_generic(struct client *c, int flags, struct slice key, struct slice value,
                        const struct slice *expire, const char *cmd, const char *ok_reply,
                        const char *abort_reply) {
    long long when = 0;
    if (expire && !expire_arg(c, *expire, flags, cmd, &when))
        return;
    struct keyref k = db_lookup(c->db, key);
    if ((flags & SET_GET) && !reply_string_of(c, &k))
        return;
    bool found = k.link != NULL;
    if (((flags & SET_NX) && found) || ((flags & SET_XX) && !found)) {
        if (!(flags & SET_GET)) {
            if (abort_reply)
                reply_raw(c->out, abort_reply, strlen(abort_reply));
            else
                reply_null(c->out);
        }
        return;
    }
    if (!db_set_string(&k, value.p, value.len)) {
        reply_oom(c);
        return;
    }
    if (expire)
        db_set_expire(&k, when);
    else if (!(flags & SET_KEEPTTL))
        db_clear_expire(&k);
    if (!(flags & SET_GET)) {
        if (ok_reply)
            reply_raw(c->out, ok_reply, strlen(ok_reply));
        else
            reply_ok(c->out);
    }
}

/*
 * redis's parseExtendedStringArgumentsOrReply, for SET (NX XX GET KEEPTTL and an expiry) and
 * GETEX (an expiry or PERSIST). Repeating an option is allowed, and so is a second EX (the
 * last one counts); conflicting ones are a syntax error.
 */
static bool string_options(struct client *c, int argc, struct slice *argv, int first, bool set,
                           int *flags, const struct slice **expire) {
    for (int j = first; j < argc; j++) {
        struct slice opt = argv[j];
        bool has_next = j + 1 < argc;
        int f = *flags;
        int no_expire_with = SET_KEEPTTL | SET_PERSIST;
        if (set && slice_is(opt, "nx") && !(f & SET_XX)) {
            *flags |= SET_NX;
        } else if (set && slice_is(opt, "xx") && !(f & SET_NX)) {
            *flags |= SET_XX;
        } else if (set && slice_is(opt, "get")) {
            *flags |= SET_GET;
        } else if (set && slice_is(opt, "keepttl") && !(f & (SET_ANY_EXPIRE | SET_PERSIST))) {
            *flags |= SET_KEEPTTL;
        } else if (!set && slice_is(opt, "persist") && !(f & (SET_ANY_EXPIRE | SET_KEEPTTL))) {
            *flags |= SET_PERSIST;
        } else if (slice_is(opt, "ex") && !(f & (no_expire_with | (SET_ANY_EXPIRE & ~SET_EX))) &&
                   has_next) {
            *flags |= SET_EX;
            *expire = &argv[++j];
        } else if (slice_is(opt, "px") && !(f & (no_expire_with | (SET_ANY_EXPIRE & ~SET_PX))) &&
                   has_next) {
            *flags |= SET_PX;
            *expire = &argv[++j];
        } else if (slice_is(opt, "exat") &&
                   !(f & (no_expire_with | (SET_ANY_EXPIRE & ~SET_EXAT))) && has_next) {
            *flags |= SET_EXAT;
            *expire = &argv[++j];
        } else if (slice_is(opt, "pxat") &&
                   !(f & (no_expire_with | (SET_ANY_EXPIRE & ~SET_PXAT))) && has_next) {
            *flags |= SET_PXAT;
            *expire = &argv[++j];
        } else {
            reply_error(c->out, ERR_SYNTAX);
            return false;
        }
    }
    return true;
}

static void set_command(struct client *c, int argc, struct slice *argv) {
    int flags = 0;
    const struct slice *expire = NULL;
    if (string_options(c, argc, argv, 3, true, &flags, &expire))
        set_generic(c, flags, argv[1], argv[2], expire, "set", NULL, NULL);
}

/* GETEX key [EX|PX|EXAT|PXAT time | PERSIST]: GET, then the expiry changes. */
static void getex_command(struct client *c, int argc, struct slice *argv) {
    int flags = 0;
    const struct slice *expire = NULL;
    if (!string_options(c, argc, argv, 2, false, &flags, &expire))
        return;
    struct keyref k;
    if (!lookup_typed(c, argv[1], T_STRING, &k))
        return;
    if (!k.link) {
        reply_null(c->out);
        return;
    }
    long long when = 0;
    if (expire && !expire_arg(c, *expire, flags, "getex", &when))
        return;
    struct slice v = entry_string(*k.link);
    reply_bulk(c->out, v.p, v.len);
    if ((flags & (SET_EXAT | SET_PXAT)) && when <= now_ms())
        db_delete(&k);
    else if (expire)
        db_set_expire(&k, when);
    else if (flags & SET_PERSIST)
        db_clear_expire(&k);
}

/* GETRANGE key start end: inclusive byte offsets, negative from the end. */
static void getrange_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    long long start, end;
    if (!arg_ll(c, argv[2], &start) || !arg_ll(c, argv[3], &end))
        return;
    struct keyref k;
    if (!lookup_typed(c, argv[1], T_STRING, &k))
        return;
    struct slice v = k.link ? entry_string(*k.link) : (struct slice){"", 0};
    long long len = (long long)v.len;
    if (start < 0 && end < 0 && start > end) {
        REPLY_LITERAL(c->out, "$0\r\n\r\n");
        return;
    }
    if (start < 0)
        start += len;
    if (end < 0)
        end += len;
    if (start < 0)
        start = 0;
    if (end < 0)
        end = 0;
    if (end >= len)
        end = len - 1;
    if (start > end || len == 0)
        REPLY_LITERAL(c->out, "$0\r\n\r\n");
    else
        reply_bulk(c->out, v.p + start, (size_t)(end - start + 1));
}

/* SETRANGE key offset value: overwrites from offset, zero-padding; keeps the TTL. */
static void setrange_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    long long offset;
    if (!arg_ll(c, argv[2], &offset))
        return;
    if (offset < 0) {
        reply_error(c->out, "offset is out of range");
        return;
    }
    struct keyref k;
    if (!lookup_typed(c, argv[1], T_STRING, &k))
        return;
    struct slice old = k.link ? entry_string(*k.link) : (struct slice){"", 0};
    struct slice value = argv[3];
    if (value.len == 0) {
        reply_int(c->out, (long long)old.len);
        return;
    }
    if ((unsigned long long)offset + value.len > PROTO_BULK_MAX) {
        reply_error(c->out, "string exceeds maximum allowed size (proto-max-bulk-len)");
        return;
    }
    size_t end = (size_t)offset + value.len;
    size_t len = end > old.len ? end : old.len;
    char *buf = calloc(1, len ? len : 1);
    if (!buf) {
        reply_oom(c);
        return;
    }
    memcpy(buf, old.p, old.len);
    memcpy(buf + offset, value.p, value.len);
    bool ok = db_set_string(&k, buf, len);
    free(buf);
    if (!ok)
        reply_oom(c);
    else
        reply_int(c->out, (long long)len);
}

static void setnx_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    set_generic(c, SET_NX, argv[1], argv[2], NULL, "setnx", ":1\r\n", ":0\r\n");
}

static void setex_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    set_generic(c, SET_EX, argv[1], argv[3], &argv[2], "setex", NULL, NULL);
}

static void psetex_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    set_generic(c, SET_PX, argv[1], argv[3], &argv[2], "psetex", NULL, NULL);
}

static void getset_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k = db_lookup(c->db, argv[1]);
    if (!reply_string_of(c, &k))
        return;
    if (db_set_string(&k, argv[2].p, argv[2].len))
        db_clear_expire(&k);
}

static void getdel_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k = db_lookup(c->db, argv[1]);
    if (reply_string_of(c, &k) && k.link)
        db_delete(&k);
}

static void mget_command(struct client *c, int argc, struct slice *argv) {
    reply_array(c->out, argc - 1);
    for (int i = 1; i < argc; i++) {
        struct keyref k = db_lookup(c->db, argv[i]);
        struct dentry *e = keyref_entry(&k);
        if (!e || entry_type(e) != T_STRING) {
            reply_null(c->out);
        } else {
            struct slice v = entry_string(e);
            reply_bulk(c->out, v.p, v.len);
        }
    }
}

static void mset_generic(struct client *c, int argc, struct slice *argv, bool nx) {
    if (argc % 2 == 0) {
        reply_errorf(c->out, "wrong number of arguments for '%s' command", nx ? "msetnx" : "mset");
        return;
    }
    if (nx) {
        for (int i = 1; i < argc; i += 2) {
            struct keyref k = db_lookup(c->db, argv[i]);
            if (k.link) {
                REPLY_LITERAL(c->out, ":0\r\n");
                return;
            }
        }
    }
    for (int i = 1; i < argc; i += 2) {
        struct keyref k = db_lookup(c->db, argv[i]);
        if (!db_set_string(&k, argv[i + 1].p, argv[i + 1].len)) {
            reply_oom(c);
            return;
        }
        db_clear_expire(&k);
    }
    if (nx)
        REPLY_LITERAL(c->out, ":1\r\n");
    else
        reply_ok(c->out);
}

static void mset_command(struct client *c, int argc, struct slice *argv) {
    mset_generic(c, argc, argv, false);
}

static void msetnx_command(struct client *c, int argc, struct slice *argv) {
    mset_generic(c, argc, argv, true);
}

/* incrDecrCommand: the value (0 if absent) plus incr, overflow-checked; keeps the TTL. */
static void incr_generic(struct client *c, struct slice key, long long incr) {
    struct keyref k;
    if (!lookup_typed(c, key, T_STRING, &k))
        return;
    long long value = 0;
    struct dentry *e = keyref_entry(&k);
    if (e) {
        struct slice v = entry_string(e);
        if (!parse_ll(v.p, v.len, &value)) {
            reply_error(c->out, ERR_NOT_INT);
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
    if (!db_set_string(&k, num, n)) {
        reply_oom(c);
        return;
    }
    reply_int(c->out, value);
}

static void incr_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    incr_generic(c, argv[1], 1);
}

static void decr_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    incr_generic(c, argv[1], -1);
}

static void incrby_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    long long incr;
    if (arg_ll(c, argv[2], &incr))
        incr_generic(c, argv[1], incr);
}

static void decrby_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    long long incr;
    if (!arg_ll(c, argv[2], &incr))
        return;
    if (incr == LLONG_MIN) {
        reply_error(c->out, "decrement would overflow");
        return;
    }
    incr_generic(c, argv[1], -incr);
}

static void incrbyfloat_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k;
    if (!lookup_typed(c, argv[1], T_STRING, &k))
        return;
    long double value = 0, incr;
    struct dentry *e = keyref_entry(&k);
    if (e) {
        struct slice v = entry_string(e);
        if (!parse_long_double(v.p, v.len, &value)) {
            reply_error(c->out, ERR_NOT_FLOAT);
            return;
        }
    }
    if (!parse_long_double(argv[2].p, argv[2].len, &incr)) {
        reply_error(c->out, ERR_NOT_FLOAT);
        return;
    }
    value += incr;
    if (isnan(value) || isinf(value)) {
        reply_error(c->out, "increment would produce NaN or Infinity");
        return;
    }
    char num[LONG_DOUBLE_BUF];
    size_t n = format_long_double(num, value);
    if (!db_set_string(&k, num, n)) {
        reply_oom(c);
        return;
    }
    reply_bulk(c->out, num, n);
}

static void append_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k;
    if (!lookup_typed(c, argv[1], T_STRING, &k))
        return;
    size_t have = k.link ? entry_string(*k.link).len : 0;
    if (k.link && have + argv[2].len > PROTO_BULK_MAX) {
        reply_error(c->out, "string exceeds maximum allowed size (proto-max-bulk-len)");
        return;
    }
    if (!db_append_string(&k, argv[2].p, argv[2].len)) {
        reply_oom(c);
        return;
    }
    reply_int(c->out, (long long)(have + argv[2].len));
}

static void strlen_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k;
    if (!lookup_typed(c, argv[1], T_STRING, &k))
        return;
    reply_int(c->out, k.link ? (long long)entry_string(*k.link).len : 0);
}

const struct command string_commands[] = {
    {"get", get_command, 2, "readonly fast", 1, 1, 1, "string", "Get the value of a key", NULL},
    {"set", set_command, -3, "write denyoom", 1, 1, 1, "string", "Set the string value of a key",
     NULL},
    {"setnx", setnx_command, 3, "write denyoom fast", 1, 1, 1, "string",
     "Set the value of a key, only if the key does not exist", NULL},
    {"setex", setex_command, 4, "write denyoom", 1, 1, 1, "string",
     "Set the value and expiration of a key", NULL},
    {"psetex", psetex_command, 4, "write denyoom", 1, 1, 1, "string",
     "Set the value and expiration in milliseconds of a key", NULL},
    {"getset", getset_command, 3, "write denyoom fast", 1, 1, 1, "string",
     "Set the string value of a key and return its old value", NULL},
    {"getex", getex_command, -2, "write fast", 1, 1, 1, "string",
     "Get the value of a key and optionally set its expiration", NULL},
    {"getrange", getrange_command, 4, "readonly", 1, 1, 1, "string",
     "Get a substring of the string stored at a key", NULL},
    {"setrange", setrange_command, 4, "write denyoom", 1, 1, 1, "string",
     "Overwrite part of a string at key starting at the specified offset", NULL},
    {"getdel", getdel_command, 2, "write fast", 1, 1, 1, "string",
     "Get the value of a key and delete the key", NULL},
    {"mget", mget_command, -2, "readonly fast", 1, -1, 1, "string",
     "Get the values of all the given keys", NULL},
    {"mset", mset_command, -3, "write denyoom", 1, -1, 2, "string",
     "Set multiple keys to multiple values", NULL},
    {"msetnx", msetnx_command, -3, "write denyoom", 1, -1, 2, "string",
     "Set multiple keys to multiple values, only if none of the keys exist", NULL},
    {"incr", incr_command, 2, "write denyoom fast", 1, 1, 1, "string",
     "Increment the integer value of a key by one", NULL},
    {"decr", decr_command, 2, "write denyoom fast", 1, 1, 1, "string",
     "Decrement the integer value of a key by one", NULL},
    {"incrby", incrby_command, 3, "write denyoom fast", 1, 1, 1, "string",
     "Increment the integer value of a key by the given amount", NULL},
    {"decrby", decrby_command, 3, "write denyoom fast", 1, 1, 1, "string",
     "Decrement the integer value of a key by the given number", NULL},
    {"incrbyfloat", incrbyfloat_command, 3, "write denyoom fast", 1, 1, 1, "string",
     "Increment the float value of a key by the given amount", NULL},
    {"append", append_command, 3, "write denyoom fast", 1, 1, 1, "string",
     "Append a value to a key", NULL},
    {"strlen", strlen_command, 2, "readonly fast", 1, 1, 1, "string",
     "Get the length of the value stored in a key", NULL},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL},
};
