#include "arena.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct arena_block {
    struct arena_block *next;
    size_t size;
    max_align_t data[];
};

void arena_init(struct arena *a, bool reuse) {
    *a = (struct arena){.first_size = ARENA_FIRST_BLOCK, .reuse = reuse};
}

static void free_blocks(struct arena *a) {
    for (struct arena_block *b = a->blocks, *next; b != NULL; b = next) {
        next = b->next;
        free(b);
    }
    a->blocks = NULL;
    a->ptr = NULL;
    a->left = 0;
    a->total = 0;
}

void arena_release(struct arena *a) {
    if (a->blocks == NULL)
        return;
    if (a->reuse && a->blocks->next == NULL) {
        a->ptr = (unsigned char *)a->blocks->data;
        a->left = a->blocks->size;
        return;
    }
    if (a->reuse)
        a->first_size = a->total; /* next time one block holds the whole message */
    free_blocks(a);
}

void arena_destroy(struct arena *a) {
    free_blocks(a);
}

void *arena_grow(struct arena *a, size_t size) {
    if (size > ARENA_LIMIT - a->total)
        return NULL;
    size_t want = a->blocks == NULL ? a->first_size : 2 * a->blocks->size;
    if (want < size)
        want = size;
    if (want > ARENA_LIMIT - a->total)
        want = ARENA_LIMIT - a->total;
    struct arena_block *b = malloc(sizeof *b + want);
    if (b == NULL)
        return NULL;
    b->next = a->blocks;
    b->size = want;
    a->blocks = b;
    a->total += want;
    a->ptr = (unsigned char *)b->data + size;
    a->left = want - size;
    return b->data;
}

static void out_of_memory(size_t size) {
    fprintf(stderr, "capnp-baseline: out of memory (%zu bytes for a request)\n", size);
    exit(1);
}

void *arena_must(struct arena *a, size_t size) {
    void *p = arena_alloc(a, size);
    if (p == NULL)
        out_of_memory(size);
    return p;
}

char *arena_reserve(struct arena *a, size_t max) {
    max = (max + 7) & ~(size_t)7;
    if (max > a->left) {
        /* A new block with room for `max`, then give the room back: reserve takes nothing. */
        if (arena_grow(a, max) == NULL)
            out_of_memory(max);
        a->ptr -= max;
        a->left += max;
    }
    return (char *)a->ptr;
}
