#include "list.h"

#include "dict.h" /* varints */

#include <stdlib.h>

#define MIN_SLOTS 4
#define INLINE_MAX 7

static bool make_slot(uint64_t *slot, const char *p, size_t len) {
    if (len <= INLINE_MAX) {
        uint64_t s = 0;
        memcpy((char *)&s + 1, p, len);
        *slot = s | 1 | (uint64_t)(len << 1);
        return true;
    }
    unsigned char *blob = malloc(varint_len(len) + len);
    if (!blob)
        return false;
    size_t n = varint_put(blob, len);
    memcpy(blob + n, p, len);
    *slot = (uint64_t)(uintptr_t)blob;
    return true;
}

static void free_slot(uint64_t s) {
    if (!slot_inline(s))
        free((void *)(uintptr_t)s);
}

struct list *list_new(void) {
    struct list *l = malloc(sizeof *l);
    if (!l)
        return NULL;
    l->slots = malloc(MIN_SLOTS * sizeof *l->slots);
    if (!l->slots) {
        free(l);
        return NULL;
    }
    l->head = 0;
    l->len = 0;
    l->mask = MIN_SLOTS - 1;
    return l;
}

void list_free(struct list *l) {
    for (size_t i = 0; i < l->len; i++)
        free_slot(*slot_at(l, i));
    free(l->slots);
    free(l);
}

/* Moves the elements, in order, to a ring of `cap` slots starting at slot 0. */
static bool resize(struct list *l, size_t cap) {
    uint64_t *slots = malloc(cap * sizeof *slots);
    if (!slots)
        return false;
    size_t first = l->mask + 1 - l->head; /* elements before the ring wraps */
    if (first >= l->len) {
        memcpy(slots, l->slots + l->head, l->len * sizeof *slots);
    } else {
        memcpy(slots, l->slots + l->head, first * sizeof *slots);
        memcpy(slots + first, l->slots, (l->len - first) * sizeof *slots);
    }
    free(l->slots);
    l->slots = slots;
    l->head = 0;
    l->mask = cap - 1;
    return true;
}

static bool ensure_room(struct list *l) {
    return l->len <= l->mask || resize(l, (l->mask + 1) * 2);
}

/* A list that shrank to a quarter of its ring gives half of it back. */
static void maybe_shrink(struct list *l) {
    size_t cap = l->mask + 1;
    if (cap > 64 && l->len < cap / 4)
        resize(l, cap / 2); /* on failure the bigger ring simply stays */
}

bool list_push_head(struct list *l, const char *p, size_t len) {
    uint64_t s;
    if (!ensure_room(l) || !make_slot(&s, p, len))
        return false;
    l->head = (l->head - 1) & l->mask;
    l->slots[l->head] = s;
    l->len++;
    return true;
}

bool list_push_tail(struct list *l, const char *p, size_t len) {
    uint64_t s;
    if (!ensure_room(l) || !make_slot(&s, p, len))
        return false;
    *slot_at(l, l->len) = s;
    l->len++;
    return true;
}

void list_drop_head(struct list *l) {
    free_slot(l->slots[l->head]);
    l->head = (l->head + 1) & l->mask;
    l->len--;
    maybe_shrink(l);
}

void list_drop_tail(struct list *l) {
    free_slot(*slot_at(l, l->len - 1));
    l->len--;
    maybe_shrink(l);
}

bool list_set(struct list *l, size_t i, const char *p, size_t len) {
    uint64_t s;
    if (!make_slot(&s, p, len))
        return false;
    uint64_t *slot = slot_at(l, i);
    free_slot(*slot);
    *slot = s;
    return true;
}

void list_keep(struct list *l, size_t start, size_t count) {
    for (size_t i = 0; i < start; i++)
        free_slot(*slot_at(l, i));
    for (size_t i = start + count; i < l->len; i++)
        free_slot(*slot_at(l, i));
    l->head = (l->head + start) & l->mask;
    l->len = count;
    maybe_shrink(l);
}
