/*
 * The list type: a ring buffer of 8-byte slots, one per element, so both ends push and pop in
 * O(1) and LINDEX/LSET/LRANGE index directly.
 *
 * A slot holds an element of up to 7 bytes in place (tagged by its low bit, which a heap
 * pointer never has): redis-benchmark's 3-byte values and most small numbers never touch the
 * allocator. Longer elements are a pointer to one allocation of varint length + bytes.
 */
#ifndef REDIS_C_LIST_H
#define REDIS_C_LIST_H

#include "dict.h" /* varints */
#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct list {
    uint64_t *slots;
    size_t head; /* slot index of element 0 */
    size_t len;
    size_t mask; /* capacity - 1 (a power of two) */
};

struct list *list_new(void);
void list_free(struct list *l);

static inline size_t list_len(const struct list *l) {
    return l->len;
}

/* Slot encoding: low bit 1 = inline, bits 1..3 the length, bytes 1..7 the element
 * (little-endian, so they are the slot's own bytes 1..7 in memory). */
static inline bool slot_inline(uint64_t s) {
    return s & 1;
}

static inline uint64_t *slot_at(const struct list *l, size_t i) {
    return &l->slots[(l->head + i) & l->mask];
}

/* Element i (0 <= i < len). The bytes may live inside the list itself: valid until the list
 * next changes. Inline: LRANGE calls it once per element (as a call, ~13 instructions each). */
static inline struct slice list_get(const struct list *l, size_t i) {
    const uint64_t *slot = slot_at(l, i);
    if (slot_inline(*slot))
        return (struct slice){(const char *)slot + 1, (size_t)((*slot >> 1) & 7)};
    const unsigned char *blob = (const unsigned char *)(uintptr_t)*slot;
    size_t len;
    size_t n = varint_get(blob, &len);
    return (struct slice){(const char *)blob + n, len};
}

/* Element i when it is stored in place (up to 7 bytes): its length, with its bytes as the low
 * bytes of *word; -1 when it has its own allocation (then list_get). Lets LRANGE move a short
 * element with one 8-byte store. */
static inline int list_get_small(const struct list *l, size_t i, uint64_t *word) {
    uint64_t s = *slot_at(l, i);
    if (!slot_inline(s))
        return -1;
    *word = s >> 8;
    return (int)((s >> 1) & 7);
}

/* Returns false if out of memory. */
bool list_push_head(struct list *l, const char *p, size_t len);
bool list_push_tail(struct list *l, const char *p, size_t len);

/* Remove (and free) the first / last element. */
void list_drop_head(struct list *l);
void list_drop_tail(struct list *l);

/* Replaces element i; false if out of memory (the old element is kept). */
bool list_set(struct list *l, size_t i, const char *p, size_t len);

/* Keeps `count` elements starting at `start` (start + count <= len), freeing the rest. */
void list_keep(struct list *l, size_t start, size_t count);

#endif
