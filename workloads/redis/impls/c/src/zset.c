#include "zset.h"

#include "util.h"

#include <stdlib.h>

static struct znode *node_new(int level, double score, struct dentry *member) {
    struct znode *n = malloc(sizeof *n + (size_t)level * sizeof n->level[0]);
    if (!n)
        return NULL;
    n->score = score;
    n->member = member;
    n->backward = NULL;
    return n;
}

struct zset *zset_new(void) {
    struct zset *z = malloc(sizeof *z);
    if (!z)
        return NULL;
    z->header = node_new(ZSKIPLIST_MAXLEVEL, 0, NULL);
    if (!z->header) {
        free(z);
        return NULL;
    }
    for (int i = 0; i < ZSKIPLIST_MAXLEVEL; i++)
        z->header->level[i] = (struct zlevel){NULL, 0};
    dict_init(&z->dict);
    z->tail = NULL;
    z->length = 0;
    z->level = 1;
    z->outgrown_listpack = false;
    return z;
}

void zset_free(struct zset *z) {
    struct znode *n = z->header->level[0].forward;
    while (n) {
        struct znode *next = n->level[0].forward;
        free(n);
        n = next;
    }
    free(z->header);
    dict_clear(&z->dict, NULL);
    free(z);
}

/* Levels with probability 1/4 each step up, as redis. */
static int random_level(void) {
    int level = 1;
    uint64_t r = random_u64();
    while (level < ZSKIPLIST_MAXLEVEL && (r & 3) == 0) {
        level++;
        r >>= 2;
    }
    return level;
}

/* Whether node n sorts before (score, member). */
static inline bool before(const struct znode *n, double score, struct slice member) {
    if (n->score != score)
        return n->score < score;
    struct slice m = znode_member(n);
    return bytes_cmp(m.p, m.len, member.p, member.len) < 0;
}

struct znode *zset_find(struct zset *z, const char *member, size_t len) {
    struct dentry **link = dict_find(&z->dict, member, len, hash_bytes(member, len));
    return link ? payload_ptr(dentry_payload(*link)) : NULL;
}

/* Links node n (level `level`, score and member set) into the skiplist. */
static void skiplist_link(struct zset *z, struct znode *n, int level) {
    struct znode *update[ZSKIPLIST_MAXLEVEL];
    size_t rank[ZSKIPLIST_MAXLEVEL];
    struct slice member = znode_member(n);
    struct znode *x = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        rank[i] = i == z->level - 1 ? 0 : rank[i + 1];
        while (x->level[i].forward && before(x->level[i].forward, n->score, member)) {
            rank[i] += x->level[i].span;
            x = x->level[i].forward;
        }
        update[i] = x;
    }
    if (level > z->level) {
        for (int i = z->level; i < level; i++) {
            rank[i] = 0;
            update[i] = z->header;
            update[i]->level[i].span = z->length;
        }
        z->level = level;
    }
    for (int i = 0; i < level; i++) {
        n->level[i].forward = update[i]->level[i].forward;
        update[i]->level[i].forward = n;
        n->level[i].span = update[i]->level[i].span - (rank[0] - rank[i]);
        update[i]->level[i].span = (rank[0] - rank[i]) + 1;
    }
    for (int i = level; i < z->level; i++)
        update[i]->level[i].span++;
    n->backward = update[0] == z->header ? NULL : update[0];
    if (n->level[0].forward)
        n->level[0].forward->backward = n;
    else
        z->tail = n;
    z->length++;
}

/* Unlinks node n from the skiplist (not freed). */
static void skiplist_unlink(struct zset *z, struct znode *n) {
    struct znode *update[ZSKIPLIST_MAXLEVEL];
    struct slice member = znode_member(n);
    struct znode *x = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && before(x->level[i].forward, n->score, member))
            x = x->level[i].forward;
        update[i] = x;
    }
    for (int i = 0; i < z->level; i++) {
        if (update[i]->level[i].forward == n) {
            update[i]->level[i].span += n->level[i].span - 1;
            update[i]->level[i].forward = n->level[i].forward;
        } else {
            update[i]->level[i].span--;
        }
    }
    if (n->level[0].forward)
        n->level[0].forward->backward = n->backward;
    else
        z->tail = n->backward;
    while (z->level > 1 && z->header->level[z->level - 1].forward == NULL)
        z->level--;
    z->length--;
}

struct znode *zset_insert(struct zset *z, double score, const char *member, size_t len) {
    uint64_t h = hash_bytes(member, len);
    struct dentry *e = dentry_new(member, len, sizeof(void *));
    if (!e)
        return NULL;
    int level = random_level();
    struct znode *n = node_new(level, score, e);
    if (!n) {
        free(e);
        return NULL;
    }
    payload_set_ptr(dentry_payload(e), n);
    dict_add(&z->dict, e, h);
    skiplist_link(z, n, level);
    return n;
}

struct znode *zset_update(struct zset *z, struct znode *n, double score) {
    /* Still between its neighbours: only the score changes. */
    struct znode *prev = n->backward, *next = n->level[0].forward;
    struct slice member = znode_member(n);
    bool after_prev = !prev || before(prev, score, member);
    bool before_next = true;
    if (next) {
        struct slice nm = znode_member(next);
        before_next = score < next->score ||
                      (score == next->score && bytes_cmp(member.p, member.len, nm.p, nm.len) < 0);
    }
    if (after_prev && before_next) {
        n->score = score;
        return n;
    }
    /* Otherwise a new node (of a new random height) at the new place, as redis does. */
    int level = random_level();
    struct znode *moved = node_new(level, score, n->member);
    if (!moved)
        return NULL;
    skiplist_unlink(z, n);
    free(n);
    payload_set_ptr(dentry_payload(moved->member), moved);
    skiplist_link(z, moved, level);
    return moved;
}

void zset_delete(struct zset *z, struct znode *n) {
    skiplist_unlink(z, n);
    struct slice member = znode_member(n);
    struct dentry **link =
        dict_find(&z->dict, member.p, member.len, hash_bytes(member.p, member.len));
    free(dict_unlink(&z->dict, link));
    dict_shrink_if_sparse(&z->dict);
    free(n);
}

size_t zset_rank(const struct zset *z, const struct znode *n) {
    size_t rank = 0;
    struct slice member = znode_member(n);
    const struct znode *x = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward &&
               (x->level[i].forward == n || before(x->level[i].forward, n->score, member))) {
            rank += x->level[i].span;
            x = x->level[i].forward;
        }
        if (x == n)
            return rank - 1;
    }
    return rank - 1;
}

struct znode *zset_at(const struct zset *z, size_t index) {
    size_t want = index + 1, traversed = 0;
    struct znode *x = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward && traversed + x->level[i].span <= want) {
            traversed += x->level[i].span;
            x = x->level[i].forward;
        }
        if (traversed == want)
            return x;
    }
    return NULL;
}

struct znode *zset_first_from_score(const struct zset *z, double min, bool exclusive) {
    struct znode *x = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward &&
               (exclusive ? x->level[i].forward->score <= min : x->level[i].forward->score < min))
            x = x->level[i].forward;
    }
    return x->level[0].forward;
}

struct znode *zset_last_to_score(const struct zset *z, double max, bool exclusive) {
    struct znode *x = z->header;
    for (int i = z->level - 1; i >= 0; i--) {
        while (x->level[i].forward &&
               (exclusive ? x->level[i].forward->score < max : x->level[i].forward->score <= max))
            x = x->level[i].forward;
    }
    return x == z->header ? NULL : x;
}
