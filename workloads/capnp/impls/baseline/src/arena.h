/* The arena every message's objects live in: a bump allocator over a chain of blocks.
 *
 * With `reuse` an arena is reset after each message and keeps its memory: when a message
 * needed more than one block, the next one starts with a single block of the total (the
 * high-water mark), so after the first few messages no iteration calls malloc. Without it
 * every message gets a fresh arena: the first allocation mallocs an 8 KiB block (the size of
 * libcapnp's default first segment, 1024 words), more blocks double, and the end of the
 * message frees them all. */
#ifndef CAPNP_BASELINE_ARENA_H
#define CAPNP_BASELINE_ARENA_H

#include <stdbool.h>
#include <stddef.h>

/* No message's objects may take more than this: the 64 MiB cap of SPEC §6, which also
 * bounds what hostile counts (each already checked against the bytes present) can cost. */
#define ARENA_LIMIT ((size_t)64 << 20)
#define ARENA_FIRST_BLOCK ((size_t)8 << 10)

struct arena_block;

struct arena {
    unsigned char *ptr; /* the next free byte of the newest block */
    size_t left;        /* free bytes after ptr */
    struct arena_block *blocks;
    size_t total;      /* bytes of all blocks */
    size_t first_size; /* size of the first block of the next message */
    bool reuse;
};

void arena_init(struct arena *a, bool reuse);
/* The end of a message: reset (reuse) or free everything (no reuse). */
void arena_release(struct arena *a);
/* Frees every block for good (the end of the program). */
void arena_destroy(struct arena *a);

/* Slow path of arena_alloc: a new block, or NULL beyond ARENA_LIMIT or when malloc fails. */
void *arena_grow(struct arena *a, size_t size);

/* `size` bytes aligned to 8 (every object here needs at most that), or NULL when the message
 * would pass ARENA_LIMIT. `size` comes from counts checked against a message's bytes, so it
 * is far from overflowing. */
static inline void *arena_alloc(struct arena *a, size_t size) {
    size = (size + 7) & ~(size_t)7;
    if (size <= a->left) {
        void *p = a->ptr;
        a->ptr += size;
        a->left -= size;
        return p;
    }
    return arena_grow(a, size);
}

/* For the client's own requests, whose sizes the generator bounds: failure can only be the
 * machine running out of memory, which ends the program (exit 1 with a message). */
void *arena_must(struct arena *a, size_t size);

/* Room for up to `max` bytes at the arena's end without taking them yet; arena_commit then
 * takes the `used` bytes actually written (a string built before its length is known). */
char *arena_reserve(struct arena *a, size_t max);
static inline void arena_commit(struct arena *a, size_t used) {
    used = (used + 7) & ~(size_t)7;
    a->ptr += used;
    a->left -= used;
}

#endif
