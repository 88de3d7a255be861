#include "hash.h"

#include <stdlib.h>

struct hash *hash_new(void) {
    struct hash *h = calloc(1, sizeof *h);
    if (h)
        h->packed = true;
    return h;
}

void hash_free(struct hash *h) {
    if (h->packed)
        free(h->u.pk.buf);
    else
        dict_clear(&h->u.dict, NULL);
    free(h);
}

size_t hash_len(const struct hash *h) {
    return h->packed ? h->u.pk.count : dict_size(&h->u.dict);
}

/* ---- packed encoding: [varint flen][field][varint vlen][value] ... ---- */

/* Reads the pair at *off and moves past it. */
static void packed_read(const unsigned char *buf, uint32_t *off, struct slice *field,
                        struct slice *value) {
    size_t len;
    uint32_t o = *off;
    o += (uint32_t)varint_get(buf + o, &len);
    *field = (struct slice){(const char *)buf + o, len};
    o += (uint32_t)len;
    o += (uint32_t)varint_get(buf + o, &len);
    *value = (struct slice){(const char *)buf + o, len};
    *off = o + (uint32_t)len;
}

/* Offset of the field's pair, or -1. */
static long packed_find(const struct hash *h, struct slice field) {
    uint32_t off = 0;
    while (off < h->u.pk.len) {
        uint32_t start = off;
        struct slice f, v;
        packed_read(h->u.pk.buf, &off, &f, &v);
        if (f.len == field.len && memcmp(f.p, field.p, f.len) == 0)
            return start;
    }
    return -1;
}

/* Replaces bytes [at, at + old) of the buffer with `n` bytes of room; returns false if out
 * of memory. Everything after moves, so the pairs keep their order. */
static bool packed_splice(struct hash *h, uint32_t at, uint32_t old, uint32_t n) {
    uint32_t len = h->u.pk.len;
    uint32_t need = len - old + n;
    if (need > h->u.pk.cap) {
        uint32_t cap = h->u.pk.cap ? h->u.pk.cap : 32;
        while (cap < need)
            cap *= 2;
        unsigned char *bigger = realloc(h->u.pk.buf, cap);
        if (!bigger)
            return false;
        h->u.pk.buf = bigger;
        h->u.pk.cap = cap;
    }
    memmove(h->u.pk.buf + at + n, h->u.pk.buf + at + old, len - at - old);
    h->u.pk.len = need;
    return true;
}

static void dict_set(struct dict *d, struct slice field, struct slice value, int *created);

/* Moves every pair into a dict (insertion order is lost, as in redis). */
static bool convert_to_dict(struct hash *h) {
    struct dict d;
    dict_init(&d);
    uint32_t off = 0;
    while (off < h->u.pk.len) {
        struct slice f, v;
        packed_read(h->u.pk.buf, &off, &f, &v);
        int created;
        dict_set(&d, f, v, &created);
        if (created < 0) {
            dict_clear(&d, NULL);
            return false;
        }
    }
    free(h->u.pk.buf);
    h->packed = false;
    h->u.dict = d;
    return true;
}

/* ---- dict encoding: entries keyed by field, value inline (varint length + bytes) ---- */

static struct slice entry_value(struct dentry *e) {
    unsigned char *p = dentry_payload(e);
    size_t len;
    size_t n = varint_get(p, &len);
    return (struct slice){(const char *)p + n, len};
}

static void dict_set(struct dict *d, struct slice field, struct slice value, int *created) {
    uint64_t hv = hash_bytes(field.p, field.len);
    struct dentry **link = dict_find(d, field.p, field.len, hv);
    size_t payload = varint_len(value.len) + value.len;
    struct dentry *e;
    if (link) {
        e = *link;
        size_t old = entry_value(e).len;
        if (varint_len(old) + old != payload) {
            e = realloc(e, dentry_prefix(field.len) + payload);
            if (!e) {
                *created = -1;
                return;
            }
            *link = e;
        }
        *created = 0;
    } else {
        e = dentry_new(field.p, field.len, payload);
        if (!e) {
            *created = -1;
            return;
        }
        dict_add(d, e, hv);
        *created = 1;
    }
    unsigned char *p = dentry_payload(e);
    size_t n = varint_put(p, value.len);
    memcpy(p + n, value.p, value.len);
}

/* ---- the type ---- */

bool hash_get(struct hash *h, struct slice field, struct slice *value) {
    if (h->packed) {
        long at = packed_find(h, field);
        if (at < 0)
            return false;
        uint32_t off = (uint32_t)at;
        struct slice f;
        packed_read(h->u.pk.buf, &off, &f, value);
        return true;
    }
    struct dentry **link =
        dict_find(&h->u.dict, field.p, field.len, hash_bytes(field.p, field.len));
    if (!link)
        return false;
    *value = entry_value(*link);
    return true;
}

int hash_set(struct hash *h, struct slice field, struct slice value) {
    if (h->packed && (field.len > HASH_PACKED_MAX_VALUE || value.len > HASH_PACKED_MAX_VALUE) &&
        !convert_to_dict(h))
        return -1;
    if (!h->packed) {
        int created;
        dict_set(&h->u.dict, field, value, &created);
        return created;
    }
    long at = packed_find(h, field);
    uint32_t vlen = (uint32_t)(varint_len(value.len) + value.len);
    if (at >= 0) {
        /* Replace the value in place: the field keeps its position. */
        uint32_t off = (uint32_t)at;
        struct slice f, old;
        packed_read(h->u.pk.buf, &off, &f, &old);
        uint32_t vstart = (uint32_t)((const unsigned char *)f.p - h->u.pk.buf) + (uint32_t)f.len;
        uint32_t oldlen = off - vstart;
        if (!packed_splice(h, vstart, oldlen, vlen))
            return -1;
        size_t n = varint_put(h->u.pk.buf + vstart, value.len);
        memcpy(h->u.pk.buf + vstart + n, value.p, value.len);
        return 0;
    }
    uint32_t flen = (uint32_t)(varint_len(field.len) + field.len);
    uint32_t end = h->u.pk.len;
    if (!packed_splice(h, end, 0, flen + vlen))
        return -1;
    unsigned char *p = h->u.pk.buf + end;
    p += varint_put(p, field.len);
    memcpy(p, field.p, field.len);
    p += field.len;
    p += varint_put(p, value.len);
    memcpy(p, value.p, value.len);
    h->u.pk.count++;
    if (h->u.pk.count > HASH_PACKED_MAX_ENTRIES)
        convert_to_dict(h); /* on failure it simply stays packed */
    return 1;
}

bool hash_delete(struct hash *h, struct slice field) {
    if (!h->packed) {
        struct dentry **link =
            dict_find(&h->u.dict, field.p, field.len, hash_bytes(field.p, field.len));
        if (!link)
            return false;
        free(dict_unlink(&h->u.dict, link));
        dict_shrink_if_sparse(&h->u.dict);
        return true;
    }
    long at = packed_find(h, field);
    if (at < 0)
        return false;
    uint32_t off = (uint32_t)at;
    struct slice f, v;
    packed_read(h->u.pk.buf, &off, &f, &v);
    packed_splice(h, (uint32_t)at, off - (uint32_t)at, 0); /* shrinking never fails */
    h->u.pk.count--;
    return true;
}

void hash_iter_init(struct hash_iter *it, struct hash *h) {
    it->h = h;
    it->off = 0;
    if (!h->packed)
        dict_iter_init(&it->it, &h->u.dict);
}

bool hash_iter_next(struct hash_iter *it, struct slice *field, struct slice *value) {
    struct hash *h = it->h;
    if (h->packed) {
        if (it->off >= h->u.pk.len)
            return false;
        packed_read(h->u.pk.buf, &it->off, field, value);
        return true;
    }
    struct dentry *e = dict_iter_next(&it->it);
    if (!e)
        return false;
    field->p = dentry_key(e, &field->len);
    *value = entry_value(e);
    return true;
}
