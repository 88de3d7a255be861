/* Set commands (the type itself is in set.c). */
#include "commands.h"

#include "set.h"

#include <limits.h>
#include <stdlib.h>

static void reply_member(struct client *c, const struct set_member *m) {
    reply_bulk(c->out, m->s.p, m->s.len);
}

/* The set at the key: NULL if absent (nothing replied) or of another type (WRONGTYPE
 * replied, *wrong set). */
static struct set *set_at(struct client *c, struct slice key, struct keyref *k, bool *wrong) {
    *wrong = !lookup_typed(c, key, T_SET, k);
    return k->link && !*wrong ? entry_object(*k->link) : NULL;
}

static void sadd_command(struct client *c, int argc, struct slice *argv) {
    struct keyref k;
    bool wrong;
    struct set *s = set_at(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    if (!s) {
        s = set_new();
        if (!s || !db_add_object(&k, T_SET, s)) {
            if (s)
                set_free(s);
            reply_error(c->out, "-OOM command not allowed when used memory > 'maxmemory'.");
            return;
        }
    }
    long long added = 0;
    for (int i = 2; i < argc; i++) {
        int r = set_add(s, argv[i]);
        if (r < 0)
            break;
        added += r;
    }
    reply_int(c->out, added);
}

static void srem_command(struct client *c, int argc, struct slice *argv) {
    struct keyref k;
    bool wrong;
    struct set *s = set_at(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    long long removed = 0;
    if (s) {
        for (int i = 2; i < argc && set_len(s) > 0; i++)
            removed += set_remove(s, argv[i]);
        delete_if_empty(&k, set_len(s));
    }
    reply_int(c->out, removed);
}

static void smembers_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k;
    bool wrong;
    struct set *s = set_at(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    reply_set(c->out, s ? (long long)set_len(s) : 0);
    if (!s)
        return;
    struct set_iter it;
    set_iter_init(&it, s);
    struct set_member m;
    while (set_iter_next(&it, &m))
        reply_member(c, &m);
}

static void sismember_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k;
    bool wrong;
    struct set *s = set_at(c, argv[1], &k, &wrong);
    if (!wrong)
        reply_int(c->out, s && set_contains(s, argv[2]));
}

static void smismember_command(struct client *c, int argc, struct slice *argv) {
    struct keyref k;
    bool wrong;
    struct set *s = set_at(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    reply_array(c->out, argc - 2);
    for (int i = 2; i < argc; i++)
        reply_int(c->out, s && set_contains(s, argv[i]));
}

static void scard_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k;
    bool wrong;
    struct set *s = set_at(c, argv[1], &k, &wrong);
    if (!wrong)
        reply_int(c->out, s ? (long long)set_len(s) : 0);
}

/* SPOP key [count]: random members, removed; the key goes with the last one. */
static void spop_command(struct client *c, int argc, struct slice *argv) {
    if (argc > 3) {
        reply_error(c->out, ERR_SYNTAX);
        return;
    }
    bool has_count = argc == 3;
    long long count = 1;
    if (has_count && !arg_positive_ll(c, argv[2], &count))
        return;
    struct keyref k;
    bool wrong;
    struct set *s = set_at(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    if (!s) {
        if (has_count)
            reply_set(c->out, 0);
        else
            reply_null(c->out);
        return;
    }
    struct set_member m = {.owned = NULL};
    if (!has_count) {
        set_pop(s, &m);
        reply_member(c, &m);
        set_member_release(&m);
    } else if (count == 0) {
        reply_set(c->out, 0);
        return;
    } else if ((size_t)count >= set_len(s)) {
        /* The whole set, in its order (ascending for integers, as redis). */
        reply_set(c->out, (long long)set_len(s));
        struct set_iter it;
        set_iter_init(&it, s);
        while (set_iter_next(&it, &m))
            reply_member(c, &m);
        db_delete(&k);
        return;
    } else {
        reply_set(c->out, count);
        for (long long i = 0; i < count; i++) {
            set_pop(s, &m);
            reply_member(c, &m);
            set_member_release(&m);
        }
    }
    delete_if_empty(&k, set_len(s));
}

/* SRANDMEMBER key [count]: count > 0 distinct members (at most the set), count < 0 that
 * many draws with repetition. */
static void srandmember_command(struct client *c, int argc, struct slice *argv) {
    if (argc > 3) {
        reply_error(c->out, ERR_SYNTAX);
        return;
    }
    bool has_count = argc == 3;
    long long count = 1;
    if (has_count) {
        if (!arg_ll(c, argv[2], &count))
            return;
        if (count == LLONG_MIN) {
            reply_error(c->out, "value is out of range, value must between -9223372036854775807 "
                                "and 9223372036854775807");
            return;
        }
    }
    struct keyref k;
    bool wrong;
    struct set *s = set_at(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    struct set_member m = {.owned = NULL};
    if (!has_count) {
        if (s) {
            set_random(s, &m);
            reply_member(c, &m);
        } else {
            reply_null(c->out);
        }
        return;
    }
    if (!s || count == 0) {
        REPLY_LITERAL(c->out, "*0\r\n");
        return;
    }
    if (count < 0) {
        reply_array(c->out, -count);
        /* The reply is cut short past the output limit: the client is closed anyway. */
        for (long long i = 0; i < -count && !client_output_over_limit(c); i++) {
            set_random(s, &m);
            reply_member(c, &m);
        }
        return;
    }
    size_t size = set_len(s);
    size_t n = (size_t)count < size ? (size_t)count : size;
    /* Distinct members: a random window of the iteration order. */
    reply_array(c->out, (long long)n);
    size_t skip = n < size ? random_u64() % (size - n + 1) : 0;
    struct set_iter it;
    set_iter_init(&it, s);
    while (skip-- && set_iter_next(&it, &m))
        ;
    for (size_t i = 0; i < n && set_iter_next(&it, &m); i++)
        reply_member(c, &m);
}

const struct command set_commands[] = {
    {"sadd", sadd_command, -3, "write denyoom fast", 1, 1, 1, "set",
     "Add one or more members to a set", NULL},
    {"srem", srem_command, -3, "write fast", 1, 1, 1, "set",
     "Remove one or more members from a set", NULL},
    {"smembers", smembers_command, 2, "readonly", 1, 1, 1, "set", "Get all the members in a set",
     NULL},
    {"sismember", sismember_command, 3, "readonly fast", 1, 1, 1, "set",
     "Determine if a given value is a member of a set", NULL},
    {"smismember", smismember_command, -3, "readonly fast", 1, 1, 1, "set",
     "Returns the membership associated with the given elements for a set", NULL},
    {"scard", scard_command, 2, "readonly fast", 1, 1, 1, "set",
     "Get the number of members in a set", NULL},
    {"spop", spop_command, -2, "write fast", 1, 1, 1, "set",
     "Remove and return one or multiple random members from a set", NULL},
    {"srandmember", srandmember_command, -2, "readonly", 1, 1, 1, "set",
     "Get one or multiple random members from a set", NULL},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL},
};
