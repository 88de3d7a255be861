/* Sorted-set commands. */
#include "commands.h"

#include "zset.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

static const char ERR_NAN_SCORE[] = "resulting score is not a number (NaN)";

/* The sorted set at the key: NULL if absent (nothing replied) or of another type
 * (WRONGTYPE replied, *wrong set). */
static struct zset *zset_at_key(struct client *c, struct slice key, struct keyref *k, bool *wrong) {
    *wrong = !lookup_typed(c, key, T_ZSET, k);
    return k->link && !*wrong ? entry_object(*k->link) : NULL;
}

/* A score as redis replies it: like reply_double, but a score of -0 is "-0" (redis formats
 * it with %.17g; a -0 reaches a reply only from a skiplist-encoded set or as the result of an
 * increment, see struct zset). */
static void reply_score(struct client *c, double d) {
    if (d == 0 && signbit(d)) {
        if (c->resp == 3)
            REPLY_LITERAL(c->out, ",-0\r\n");
        else
            REPLY_LITERAL(c->out, "$2\r\n-0\r\n");
        return;
    }
    reply_double(c->out, d);
}

/* The score a set keeps: a listpack-encoded set (as redis would have it) stores -0 as 0. */
static double stored_score(const struct zset *z, double score) {
    return score == 0 && !z->outgrown_listpack ? 0.0 : score;
}

/* A member, and its score if asked; in RESP3 each pair is an array of its own (but not for
 * a plain ZPOPMIN, which says `flat`). */
static void reply_node(struct client *c, const struct znode *n, bool withscores) {
    if (withscores && c->resp == 3)
        reply_array(c->out, 2);
    struct slice m = znode_member(n);
    reply_bulk(c->out, m.p, m.len);
    if (withscores)
        reply_score(c, n->score);
}

#define ZADD_NX 0x01
#define ZADD_XX 0x02
#define ZADD_GT 0x04
#define ZADD_LT 0x08
#define ZADD_INCR 0x10
#define ZADD_CH 0x20

/* zaddGenericCommand: ZADD's options, all scores parsed before anything changes, then each
 * pair applied (zsetAdd). */
static void zadd_generic(struct client *c, int argc, struct slice *argv, int flags) {
    int idx = 2;
    for (; idx < argc; idx++) {
        struct slice o = argv[idx];
        if (slice_is(o, "nx"))
            flags |= ZADD_NX;
        else if (slice_is(o, "xx"))
            flags |= ZADD_XX;
        else if (slice_is(o, "ch"))
            flags |= ZADD_CH;
        else if (slice_is(o, "incr"))
            flags |= ZADD_INCR;
        else if (slice_is(o, "gt"))
            flags |= ZADD_GT;
        else if (slice_is(o, "lt"))
            flags |= ZADD_LT;
        else
            break;
    }
    int elements = argc - idx;
    if (elements % 2 || elements == 0) {
        reply_error(c->out, ERR_SYNTAX);
        return;
    }
    elements /= 2;
    bool nx = flags & ZADD_NX, xx = flags & ZADD_XX, gt = flags & ZADD_GT, lt = flags & ZADD_LT,
         incr = flags & ZADD_INCR;
    if (nx && xx) {
        reply_error(c->out, "XX and NX options at the same time are not compatible");
        return;
    }
    if ((gt && nx) || (lt && nx) || (gt && lt)) {
        reply_error(c->out, "GT, LT, and/or NX options at the same time are not compatible");
        return;
    }
    if (incr && elements > 1) {
        reply_error(c->out, "INCR option supports a single increment-element pair");
        return;
    }
    double one_score;
    double *scores = elements == 1 ? &one_score : malloc((size_t)elements * sizeof *scores);
    if (!scores) {
        reply_error(c->out, "-OOM command not allowed when used memory > 'maxmemory'.");
        return;
    }
    for (int j = 0; j < elements; j++) {
        if (!arg_double(c, argv[idx + j * 2], &scores[j]))
            goto done;
    }
    struct keyref k;
    bool wrong;
    struct zset *z = zset_at_key(c, argv[1], &k, &wrong);
    if (wrong)
        goto done;
    long long added = 0, updated = 0, processed = 0;
    double score = 0;
    if (!z) {
        if (xx)
            goto reply;
        z = zset_new();
        if (!z || !db_add_object(&k, T_ZSET, z)) {
            if (z)
                zset_free(z);
            reply_error(c->out, "-OOM command not allowed when used memory > 'maxmemory'.");
            goto done;
        }
    }
    for (int j = 0; j < elements; j++) {
        struct slice m = argv[idx + 1 + j * 2];
        score = scores[j];
        struct znode *n = zset_find(z, m.p, m.len);
        if (n) {
            if (nx)
                continue;
            if (incr) {
                score += n->score;
                if (isnan(score)) {
                    reply_error(c->out, ERR_NAN_SCORE);
                    goto done;
                }
            }
            if ((lt && score >= n->score) || (gt && score <= n->score))
                continue;
            processed++;
            if (score != n->score) {
                zset_update(z, n, stored_score(z, score));
                updated++;
            }
        } else if (!xx) {
            /* redis's zsetAdd: a member that does not fit a listpack converts the set first. */
            if (zset_len(z) + 1 > ZSET_LISTPACK_ENTRIES || m.len > ZSET_LISTPACK_VALUE)
                z->outgrown_listpack = true;
            if (!zset_insert(z, stored_score(z, score), m.p, m.len)) {
                reply_error(c->out, "-OOM command not allowed when used memory > 'maxmemory'.");
                goto done;
            }
            added++;
            processed++;
        }
    }
reply:
    if (incr) {
        if (processed)
            reply_score(c, score); /* the sum itself: -0 for a new member at -0 */
        else
            reply_null(c->out);
    } else {
        reply_int(c->out, (flags & ZADD_CH) ? added + updated : added);
    }
done:
    if (scores != &one_score)
        free(scores);
}

static void zadd_command(struct client *c, int argc, struct slice *argv) {
    zadd_generic(c, argc, argv, 0);
}

static void zincrby_command(struct client *c, int argc, struct slice *argv) {
    zadd_generic(c, argc, argv, ZADD_INCR);
}

static void zscore_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k;
    bool wrong;
    struct zset *z = zset_at_key(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    struct znode *n = z ? zset_find(z, argv[2].p, argv[2].len) : NULL;
    if (n)
        reply_score(c, n->score);
    else
        reply_null(c->out);
}

static void zmscore_command(struct client *c, int argc, struct slice *argv) {
    struct keyref k;
    bool wrong;
    struct zset *z = zset_at_key(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    reply_array(c->out, argc - 2);
    for (int i = 2; i < argc; i++) {
        struct znode *n = z ? zset_find(z, argv[i].p, argv[i].len) : NULL;
        if (n)
            reply_score(c, n->score);
        else
            reply_null(c->out);
    }
}

static void zcard_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct keyref k;
    bool wrong;
    struct zset *z = zset_at_key(c, argv[1], &k, &wrong);
    if (!wrong)
        reply_int(c->out, z ? (long long)zset_len(z) : 0);
}

static void zrem_command(struct client *c, int argc, struct slice *argv) {
    struct keyref k;
    bool wrong;
    struct zset *z = zset_at_key(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    long long removed = 0;
    if (z) {
        for (int i = 2; i < argc && zset_len(z) > 0; i++) {
            struct znode *n = zset_find(z, argv[i].p, argv[i].len);
            if (n) {
                zset_delete(z, n);
                removed++;
            }
        }
        delete_if_empty(&k, zset_len(z));
    }
    reply_int(c->out, removed);
}

static void rank_generic(struct client *c, struct slice *argv, bool reverse) {
    struct keyref k;
    bool wrong;
    struct zset *z = zset_at_key(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    struct znode *n = z ? zset_find(z, argv[2].p, argv[2].len) : NULL;
    if (!n) {
        reply_null(c->out);
        return;
    }
    size_t rank = zset_rank(z, n);
    reply_int(c->out, (long long)(reverse ? zset_len(z) - 1 - rank : rank));
}

static void zrank_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    rank_generic(c, argv, false);
}

static void zrevrank_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    rank_generic(c, argv, true);
}

/* ZPOPMIN/ZPOPMAX key [count]: a flat array of member, score pairs. */
static void zpop_generic(struct client *c, int argc, struct slice *argv, bool min) {
    if (argc > 3) {
        reply_error(c->out, ERR_SYNTAX);
        return;
    }
    long long count = 1;
    if (argc == 3 && !arg_positive_ll(c, argv[2], &count))
        return;
    struct keyref k;
    bool wrong;
    struct zset *z = zset_at_key(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    if (!z || count == 0) {
        REPLY_LITERAL(c->out, "*0\r\n");
        return;
    }
    size_t n = (size_t)count < zset_len(z) ? (size_t)count : zset_len(z);
    /* RESP3 nests the pairs only when a count was given. */
    bool nested = c->resp == 3 && argc == 3;
    reply_array(c->out, nested ? (long long)n : (long long)n * 2);
    for (size_t i = 0; i < n; i++) {
        struct znode *node = min ? zset_first(z) : z->tail;
        if (nested)
            reply_array(c->out, 2);
        struct slice m = znode_member(node);
        reply_bulk(c->out, m.p, m.len);
        reply_score(c, node->score);
        zset_delete(z, node);
    }
    delete_if_empty(&k, zset_len(z));
}

static void zpopmin_command(struct client *c, int argc, struct slice *argv) {
    zpop_generic(c, argc, argv, true);
}

static void zpopmax_command(struct client *c, int argc, struct slice *argv) {
    zpop_generic(c, argc, argv, false);
}

/* ---- ZRANGE and its older forms ---- */

enum range_kind { BY_AUTO, BY_RANK, BY_SCORE, BY_LEX };
enum range_dir { DIR_AUTO, DIR_FORWARD, DIR_REVERSE };

struct score_range {
    double min, max;
    bool minex, maxex;
};

/* One end of a score range: "(" makes it exclusive; parsed with strtod as redis
 * (zslParseRange), so leading spaces and "inf" are accepted. */
static bool parse_score_bound(struct slice arg, double *v, bool *exclusive) {
    char stack[128];
    char *buf = arg.len < sizeof stack ? stack : malloc(arg.len + 1);
    if (!buf)
        return false;
    memcpy(buf, arg.p, arg.len);
    buf[arg.len] = '\0';
    char *start = buf, *end;
    *exclusive = buf[0] == '(';
    if (*exclusive)
        start++;
    *v = strtod(start, &end);
    bool ok = *end == '\0' && !isnan(*v);
    if (buf != stack)
        free(buf);
    return ok;
}

static bool score_gte_min(double score, const struct score_range *r) {
    return r->minex ? score > r->min : score >= r->min;
}

static bool score_lte_max(double score, const struct score_range *r) {
    return r->maxex ? score < r->max : score <= r->max;
}

/* A lex range end: "[x" inclusive, "(x" exclusive, "-" and "+" the extremes. */
struct lex_bound {
    struct slice s;
    bool exclusive;
    int infinity; /* -1 for "-", +1 for "+", 0 otherwise */
};

static bool parse_lex_bound(struct slice arg, struct lex_bound *b) {
    if (arg.len == 0)
        return false;
    b->infinity = 0;
    switch (arg.p[0]) {
    case '+':
    case '-':
        /* redis compares with c[1] != '\0': "-" and "+" alone, or followed by a NUL. */
        if (arg.len > 1 && arg.p[1] != '\0')
            return false;
        b->infinity = arg.p[0] == '+' ? 1 : -1;
        b->exclusive = true;
        return true;
    case '(':
    case '[':
        b->exclusive = arg.p[0] == '(';
        b->s = (struct slice){arg.p + 1, arg.len - 1};
        return true;
    default:
        return false;
    }
}

static bool lex_gte_min(struct slice m, const struct lex_bound *min) {
    if (min->infinity)
        return min->infinity < 0;
    int cmp = bytes_cmp(m.p, m.len, min->s.p, min->s.len);
    return min->exclusive ? cmp > 0 : cmp >= 0;
}

static bool lex_lte_max(struct slice m, const struct lex_bound *max) {
    if (max->infinity)
        return max->infinity > 0;
    int cmp = bytes_cmp(m.p, m.len, max->s.p, max->s.len);
    return max->exclusive ? cmp < 0 : cmp <= 0;
}

/* Collects the nodes of a score or lex range (after offset, up to limit) before the reply,
 * whose length must come first. */
struct node_list {
    struct znode **v;
    size_t len, cap;
};

static bool node_list_push(struct node_list *l, struct znode *n) {
    if (l->len == l->cap) {
        size_t cap = l->cap ? l->cap * 2 : 32;
        struct znode **bigger = realloc(l->v, cap * sizeof *bigger);
        if (!bigger)
            return false;
        l->v = bigger;
        l->cap = cap;
    }
    l->v[l->len++] = n;
    return true;
}

static void reply_rank_range(struct client *c, struct zset *z, long long start, long long end,
                             bool withscores, bool reverse) {
    long long len = (long long)zset_len(z);
    if (start < 0)
        start += len;
    if (end < 0)
        end += len;
    if (start < 0)
        start = 0;
    if (start > end || start >= len) {
        REPLY_LITERAL(c->out, "*0\r\n");
        return;
    }
    if (end >= len)
        end = len - 1;
    long long n = end - start + 1;
    reply_array(c->out, withscores && c->resp == 2 ? n * 2 : n);
    struct znode *node =
        reverse ? zset_at(z, (size_t)(len - 1 - start)) : zset_at(z, (size_t)start);
    for (long long i = 0; i < n && node; i++) {
        reply_node(c, node, withscores);
        node = reverse ? node->backward : node->level[0].forward;
    }
}

static void reply_nodes(struct client *c, struct node_list *l, bool withscores) {
    reply_array(c->out, (long long)(withscores && c->resp == 2 ? l->len * 2 : l->len));
    for (size_t i = 0; i < l->len; i++)
        reply_node(c, l->v[i], withscores);
    free(l->v);
}

static void reply_score_range(struct client *c, struct zset *z, const struct score_range *r,
                              long long offset, long long limit, bool withscores, bool reverse) {
    struct node_list l = {0};
    struct znode *n = reverse ? zset_last_to_score(z, r->max, r->maxex)
                              : zset_first_from_score(z, r->min, r->minex);
    if (offset < 0) /* redis skips `while (offset--)`: a negative offset skips everything */
        n = NULL;
    while (n && offset-- > 0)
        n = reverse ? n->backward : n->level[0].forward;
    while (n && limit != 0) {
        if (reverse ? !score_gte_min(n->score, r) : !score_lte_max(n->score, r))
            break;
        if (!node_list_push(&l, n))
            break;
        limit--;
        n = reverse ? n->backward : n->level[0].forward;
    }
    reply_nodes(c, &l, withscores);
}

static void reply_lex_range(struct client *c, struct zset *z, const struct lex_bound *min,
                            const struct lex_bound *max, long long offset, long long limit,
                            bool reverse) {
    struct node_list l = {0};
    struct znode *n;
    if (!reverse) {
        n = zset_first(z);
        while (n && !lex_gte_min(znode_member(n), min))
            n = n->level[0].forward;
    } else {
        n = z->tail;
        while (n && !lex_lte_max(znode_member(n), max))
            n = n->backward;
    }
    if (offset < 0) /* as in reply_score_range */
        n = NULL;
    while (n && offset-- > 0)
        n = reverse ? n->backward : n->level[0].forward;
    while (n && limit != 0) {
        struct slice m = znode_member(n);
        if (reverse ? !lex_gte_min(m, min) : !lex_lte_max(m, max))
            break;
        if (!node_list_push(&l, n))
            break;
        limit--;
        n = reverse ? n->backward : n->level[0].forward;
    }
    reply_nodes(c, &l, false);
}

/* zrangeGenericCommand: argv[1] key, argv[2..3] the range, then options. ZRANGE leaves kind
 * and direction to its options; the older commands fix them. */
static void zrange_generic(struct client *c, int argc, struct slice *argv, enum range_kind kind,
                           enum range_dir dir) {
    bool withscores = false;
    long long offset = 0, limit = -1;
    for (int j = 4; j < argc; j++) {
        int left = argc - j - 1;
        if (slice_is(argv[j], "withscores")) {
            withscores = true;
        } else if (slice_is(argv[j], "limit") && left >= 2) {
            if (!arg_ll(c, argv[j + 1], &offset) || !arg_ll(c, argv[j + 2], &limit))
                return;
            j += 2;
        } else if (dir == DIR_AUTO && slice_is(argv[j], "rev")) {
            dir = DIR_REVERSE;
        } else if (kind == BY_AUTO && slice_is(argv[j], "bylex")) {
            kind = BY_LEX;
        } else if (kind == BY_AUTO && slice_is(argv[j], "byscore")) {
            kind = BY_SCORE;
        } else {
            reply_error(c->out, ERR_SYNTAX);
            return;
        }
    }
    if (dir == DIR_AUTO)
        dir = DIR_FORWARD;
    if (kind == BY_AUTO)
        kind = BY_RANK;
    if (limit != -1 && kind == BY_RANK) {
        reply_error(c->out, "syntax error, LIMIT is only supported in combination with either "
                            "BYSCORE or BYLEX");
        return;
    }
    if (withscores && kind == BY_LEX) {
        reply_error(c->out, "syntax error, WITHSCORES not supported in combination with BYLEX");
        return;
    }
    bool reverse = dir == DIR_REVERSE;
    /* Reversed score and lex ranges are written max first. */
    struct slice lo = argv[2], hi = argv[3];
    if (reverse && kind != BY_RANK) {
        lo = argv[3];
        hi = argv[2];
    }
    long long start = 0, end = 0;
    struct score_range sr;
    struct lex_bound lmin, lmax;
    if (kind == BY_RANK) {
        if (!arg_ll(c, lo, &start) || !arg_ll(c, hi, &end))
            return;
    } else if (kind == BY_SCORE) {
        if (!parse_score_bound(lo, &sr.min, &sr.minex) ||
            !parse_score_bound(hi, &sr.max, &sr.maxex)) {
            reply_error(c->out, "min or max is not a float");
            return;
        }
    } else if (!parse_lex_bound(lo, &lmin) || !parse_lex_bound(hi, &lmax)) {
        reply_error(c->out, "min or max not valid string range item");
        return;
    }
    struct keyref k;
    bool wrong;
    struct zset *z = zset_at_key(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    if (!z) {
        REPLY_LITERAL(c->out, "*0\r\n");
        return;
    }
    if (kind == BY_RANK)
        reply_rank_range(c, z, start, end, withscores, reverse);
    else if (kind == BY_SCORE)
        reply_score_range(c, z, &sr, offset, limit, withscores, reverse);
    else
        reply_lex_range(c, z, &lmin, &lmax, offset, limit, reverse);
}

static void zrange_command(struct client *c, int argc, struct slice *argv) {
    zrange_generic(c, argc, argv, BY_AUTO, DIR_AUTO);
}

static void zrevrange_command(struct client *c, int argc, struct slice *argv) {
    zrange_generic(c, argc, argv, BY_RANK, DIR_REVERSE);
}

static void zrangebyscore_command(struct client *c, int argc, struct slice *argv) {
    zrange_generic(c, argc, argv, BY_SCORE, DIR_FORWARD);
}

static void zrevrangebyscore_command(struct client *c, int argc, struct slice *argv) {
    zrange_generic(c, argc, argv, BY_SCORE, DIR_REVERSE);
}

static void zrangebylex_command(struct client *c, int argc, struct slice *argv) {
    zrange_generic(c, argc, argv, BY_LEX, DIR_FORWARD);
}

static void zcount_command(struct client *c, int argc, struct slice *argv) {
    (void)argc;
    struct score_range r;
    if (!parse_score_bound(argv[2], &r.min, &r.minex) ||
        !parse_score_bound(argv[3], &r.max, &r.maxex)) {
        reply_error(c->out, "min or max is not a float");
        return;
    }
    struct keyref k;
    bool wrong;
    struct zset *z = zset_at_key(c, argv[1], &k, &wrong);
    if (wrong)
        return;
    long long count = 0;
    struct znode *first = z ? zset_first_from_score(z, r.min, r.minex) : NULL;
    if (first && score_lte_max(first->score, &r)) {
        struct znode *last = zset_last_to_score(z, r.max, r.maxex);
        count = (long long)(zset_rank(z, last) - zset_rank(z, first)) + 1;
    }
    reply_int(c->out, count);
}

const struct command zset_commands[] = {
    {"zadd", zadd_command, -4, "write denyoom fast", 1, 1, 1, "sorted_set",
     "Add one or more members to a sorted set, or update its score if it already exists", NULL},
    {"zincrby", zincrby_command, 4, "write denyoom fast", 1, 1, 1, "sorted_set",
     "Increment the score of a member in a sorted set", NULL},
    {"zscore", zscore_command, 3, "readonly fast", 1, 1, 1, "sorted_set",
     "Get the score associated with the given member in a sorted set", NULL},
    {"zmscore", zmscore_command, -3, "readonly fast", 1, 1, 1, "sorted_set",
     "Get the score associated with the given members in a sorted set", NULL},
    {"zcard", zcard_command, 2, "readonly fast", 1, 1, 1, "sorted_set",
     "Get the number of members in a sorted set", NULL},
    {"zrem", zrem_command, -3, "write fast", 1, 1, 1, "sorted_set",
     "Remove one or more members from a sorted set", NULL},
    {"zrank", zrank_command, 3, "readonly fast", 1, 1, 1, "sorted_set",
     "Determine the index of a member in a sorted set", NULL},
    {"zrevrank", zrevrank_command, 3, "readonly fast", 1, 1, 1, "sorted_set",
     "Determine the index of a member in a sorted set, with scores ordered from high to low", NULL},
    {"zpopmin", zpopmin_command, -2, "write fast", 1, 1, 1, "sorted_set",
     "Remove and return members with the lowest scores in a sorted set", NULL},
    {"zpopmax", zpopmax_command, -2, "write fast", 1, 1, 1, "sorted_set",
     "Remove and return members with the highest scores in a sorted set", NULL},
    {"zrange", zrange_command, -4, "readonly", 1, 1, 1, "sorted_set",
     "Return a range of members in a sorted set", NULL},
    {"zrevrange", zrevrange_command, -4, "readonly", 1, 1, 1, "sorted_set",
     "Return a range of members in a sorted set, by index, with scores ordered from high to low",
     NULL},
    {"zrangebyscore", zrangebyscore_command, -4, "readonly", 1, 1, 1, "sorted_set",
     "Return a range of members in a sorted set, by score", NULL},
    {"zrevrangebyscore", zrevrangebyscore_command, -4, "readonly", 1, 1, 1, "sorted_set",
     "Return a range of members in a sorted set, by score, with scores ordered from high to low",
     NULL},
    {"zrangebylex", zrangebylex_command, -4, "readonly", 1, 1, 1, "sorted_set",
     "Return a range of members in a sorted set, by lexicographical range", NULL},
    {"zcount", zcount_command, 4, "readonly fast", 1, 1, 1, "sorted_set",
     "Count the members in a sorted set with scores within the given values", NULL},
    {NULL, NULL, 0, NULL, 0, 0, 0, NULL, NULL, NULL},
};
