#include "set.h"

#include <stdlib.h>

struct set *set_new(void) {
    struct set *s = calloc(1, sizeof *s);
    if (s)
        s->ints = true;
    return s;
}

void set_free(struct set *s) {
    if (s->ints)
        free(s->u.is.v);
    else
        dict_clear(&s->u.dict, NULL);
    free(s);
}

size_t set_len(const struct set *s) {
    return s->ints ? s->u.is.len : dict_size(&s->u.dict);
}

/* Position of v in the sorted array, or where it would go (*found tells which). */
static uint32_t int_position(const struct set *s, int64_t v, bool *found) {
    uint32_t lo = 0, hi = s->u.is.len;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (s->u.is.v[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = lo < s->u.is.len && s->u.is.v[lo] == v;
    return lo;
}

static int dict_add_member(struct dict *d, struct slice m) {
    uint64_t h = hash_bytes(m.p, m.len);
    if (dict_find(d, m.p, m.len, h))
        return 0;
    struct dentry *e = dentry_new(m.p, m.len, 0);
    if (!e)
        return -1;
    dict_add(d, e, h);
    return 1;
}

/* Moves the integers into a dict of their decimal spellings (order is lost, as in redis). */
static bool convert_to_dict(struct set *s) {
    struct dict d;
    dict_init(&d);
    for (uint32_t i = 0; i < s->u.is.len; i++) {
        char num[NUM_BUF];
        size_t n = format_ll(num, s->u.is.v[i]);
        if (dict_add_member(&d, (struct slice){num, n}) < 0) {
            dict_clear(&d, NULL);
            return false;
        }
    }
    free(s->u.is.v);
    s->ints = false;
    s->u.dict = d;
    return true;
}

int set_add(struct set *s, struct slice m) {
    long long v;
    if (s->ints) {
        if (parse_ll(m.p, m.len, &v)) {
            bool found;
            uint32_t at = int_position(s, v, &found);
            if (found)
                return 0;
            if (s->u.is.len < SET_INTS_MAX) {
                if (s->u.is.len == s->u.is.cap) {
                    uint32_t cap = s->u.is.cap ? s->u.is.cap * 2 : 4;
                    int64_t *bigger = realloc(s->u.is.v, cap * sizeof *bigger);
                    if (!bigger)
                        return -1;
                    s->u.is.v = bigger;
                    s->u.is.cap = cap;
                }
                memmove(s->u.is.v + at + 1, s->u.is.v + at, (s->u.is.len - at) * sizeof *s->u.is.v);
                s->u.is.v[at] = v;
                s->u.is.len++;
                return 1;
            }
        }
        /* Not an integer, or one too many: a dict from now on. */
        if (!convert_to_dict(s))
            return -1;
    }
    return dict_add_member(&s->u.dict, m);
}

bool set_contains(struct set *s, struct slice m) {
    if (s->ints) {
        long long v;
        bool found = false;
        if (parse_ll(m.p, m.len, &v))
            int_position(s, v, &found);
        return found;
    }
    return dict_find(&s->u.dict, m.p, m.len, hash_bytes(m.p, m.len)) != NULL;
}

bool set_remove(struct set *s, struct slice m) {
    if (s->ints) {
        long long v;
        bool found = false;
        uint32_t at = 0;
        if (parse_ll(m.p, m.len, &v))
            at = int_position(s, v, &found);
        if (found) {
            memmove(s->u.is.v + at, s->u.is.v + at + 1, (s->u.is.len - at - 1) * sizeof *s->u.is.v);
            s->u.is.len--;
        }
        return found;
    }
    struct dentry **link = dict_find(&s->u.dict, m.p, m.len, hash_bytes(m.p, m.len));
    if (!link)
        return false;
    free(dict_unlink(&s->u.dict, link));
    dict_shrink_if_sparse(&s->u.dict);
    return true;
}

static void int_member(struct set_member *out, int64_t v) {
    out->s.len = format_ll(out->num, v);
    out->s.p = out->num;
}

void set_random(struct set *s, struct set_member *out) {
    if (s->ints) {
        int_member(out, s->u.is.v[random_u64() % s->u.is.len]);
        return;
    }
    out->s.p = dentry_key(*dict_random(&s->u.dict), &out->s.len);
}

void set_pop(struct set *s, struct set_member *out) {
    if (s->ints) {
        uint32_t at = (uint32_t)(random_u64() % s->u.is.len);
        int_member(out, s->u.is.v[at]);
        memmove(s->u.is.v + at, s->u.is.v + at + 1, (s->u.is.len - at - 1) * sizeof *s->u.is.v);
        s->u.is.len--;
        return;
    }
    /* The member's bytes are copied out before its entry is freed. */
    struct dentry *e = dict_unlink(&s->u.dict, dict_random(&s->u.dict));
    size_t len;
    const char *key = dentry_key(e, &len);
    if (len < sizeof out->num) {
        memcpy(out->num, key, len);
        out->s = (struct slice){out->num, len};
        free(e);
    } else {
        /* Too long for the buffer: hand the entry over; set_member_release frees it. */
        out->s = (struct slice){key, len};
        out->owned = e;
    }
}

void set_member_release(struct set_member *m) {
    free(m->owned);
    m->owned = NULL;
}

void set_iter_init(struct set_iter *it, struct set *s) {
    it->s = s;
    it->i = 0;
    if (!s->ints)
        dict_iter_init(&it->it, &s->u.dict);
}

bool set_iter_next(struct set_iter *it, struct set_member *out) {
    if (it->s->ints) {
        if (it->i >= it->s->u.is.len)
            return false;
        int_member(out, it->s->u.is.v[it->i++]);
        return true;
    }
    struct dentry *e = dict_iter_next(&it->it);
    if (!e)
        return false;
    out->s.p = dentry_key(e, &out->s.len);
    return true;
}
