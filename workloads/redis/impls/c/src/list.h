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

/* Element i (0 <= i < len). The bytes may live inside the list itself: valid until the list
 * next changes. */
struct slice list_get(const struct list *l, size_t i);

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
