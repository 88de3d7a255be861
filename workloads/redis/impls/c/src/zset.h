/*
 * The sorted-set type: a dict from member to skiplist node (ZSCORE, ZADD's existence check in
 * O(1)) and a skiplist ordered by (score, member) with spans (ZRANK, ZRANGE by index in
 * O(log n)), as redis's. The member bytes live once, in the dict entry; the node points at
 * that entry (entries never move: their payload is a fixed-size node pointer).
 */
#ifndef REDIS_C_ZSET_H
#define REDIS_C_ZSET_H

#include "dict.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>

#define ZSKIPLIST_MAXLEVEL 32

struct znode {
    double score;
    struct dentry *member; /* the dict entry holding the member bytes */
    struct znode *backward;
    struct zlevel {
        struct znode *forward;
        size_t span; /* nodes skipped by this forward link */
    } level[];
};

struct zset {
    struct dict dict;
    struct znode *header;
    struct znode *tail;
    size_t length;
    int level;
    /* Whether redis would have converted this set from a listpack (at most 128 members of at
     * most 64 bytes) to a skiplist: it never converts back. A listpack stores a score of -0
     * as the integer 0; a skiplist keeps -0 (ZSCORE then says -0). */
    bool outgrown_listpack;
};

#define ZSET_LISTPACK_ENTRIES 128
#define ZSET_LISTPACK_VALUE 64

struct zset *zset_new(void);
void zset_free(struct zset *z);

static inline size_t zset_len(const struct zset *z) {
    return z->length;
}

static inline struct slice znode_member(const struct znode *n) {
    size_t len;
    const char *p = dentry_key(n->member, &len);
    return (struct slice){p, len};
}

/* The node of a member, or NULL. */
struct znode *zset_find(struct zset *z, const char *member, size_t len);
/* Adds a member that is not present; NULL if out of memory. */
struct znode *zset_insert(struct zset *z, double score, const char *member, size_t len);
/* Changes a member's score (moving its node only if the order changes). */
struct znode *zset_update(struct zset *z, struct znode *n, double score);
/* Removes a member and frees its node and entry. */
void zset_delete(struct zset *z, struct znode *n);

/* 0-based rank of a node. */
size_t zset_rank(const struct zset *z, const struct znode *n);
/* The node at a 0-based rank (< length). */
struct znode *zset_at(const struct zset *z, size_t rank);

static inline struct znode *zset_first(const struct zset *z) {
    return z->header->level[0].forward;
}

/* First node with score >= min (> min if exclusive), or NULL. */
struct znode *zset_first_from_score(const struct zset *z, double min, bool exclusive);
/* Last node with score <= max (< max if exclusive), or NULL. */
struct znode *zset_last_to_score(const struct zset *z, double max, bool exclusive);

#endif
