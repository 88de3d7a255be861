/*
 * The set type, in two encodings as redis's:
 *   - a set of integers only (each member spelled as redis's string2ll accepts: "7", "-3",
 *     not "07"), up to 512 of them, is a sorted array of int64: 8 bytes a member, and SMEMBERS
 *     answers in ascending order as redis's intset does;
 *   - any other set, or one that outgrows that, is a dict of members (no payload) for good.
 */
#ifndef REDIS_C_SET_H
#define REDIS_C_SET_H

#include "dict.h"
#include "numeric.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SET_INTS_MAX 512

struct set {
    bool ints;
    union {
        struct {
            int64_t *v;
            uint32_t len, cap;
        } is;
        struct dict dict;
    } u;
};

struct set *set_new(void);
void set_free(struct set *s);
size_t set_len(const struct set *s);

/* 1 if added, 0 if present, -1 if out of memory. */
int set_add(struct set *s, struct slice member);
bool set_contains(struct set *s, struct slice member);
bool set_remove(struct set *s, struct slice member);

/* A member as bytes: integers are printed into `num`; a popped member lives in `num` or, if
 * longer, in its old entry (`owned`, freed by set_member_release). */
struct set_member {
    struct slice s;
    char num[NUM_BUF];
    struct dentry *owned;
};

/* A random member, removed (SPOP) or not (SRANDMEMBER). The set must not be empty. */
void set_random(struct set *s, struct set_member *out);
void set_pop(struct set *s, struct set_member *out);
void set_member_release(struct set_member *m);

struct set_iter {
    struct set *s;
    uint32_t i;
    struct dict_iter it;
};

void set_iter_init(struct set_iter *it, struct set *s);
bool set_iter_next(struct set_iter *it, struct set_member *out);

#endif
