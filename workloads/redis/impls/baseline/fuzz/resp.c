/*
 * libFuzzer target `resp` (workloads/redis/fuzz/README.md): the input is the bytes of one
 * client, given to the floor's request scanner, scan(): the byte-level state machine that finds
 * where each request (multibulk or inline) ends and counts the replies owed, or reports a stream
 * that is not RESP. The floor parses nothing else (it answers every request +OK, and no command
 * is run here either).
 *
 * How it reaches the code: this file includes ../main.c itself (main() renamed), so the floor
 * keeps its one file and its release build is untouched; scan() needs no system call.
 *
 * Checked, a failure being an abort(): the input scanned whole and the same input cut into
 * pieces whose sizes are drawn from the input (one scan() per piece, on one connection's state,
 * as one read(2) each) end alike: both report the protocol error, or neither does and both
 * count the same requests, never more than the input has bytes, and stop in the same state
 * waiting for the same bytes.
 */
#define _GNU_SOURCE /* as main.c: accept4 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define main redis_baseline_main
#include "../main.c"
#undef main

/* What a scan of the whole input leaves: the requests counted, or -1 for a protocol error. */
struct result {
    long requests;
    struct conn conn;
};

static struct result scan_pieces(const uint8_t *data, size_t size, uint64_t rng) {
    struct result r = {.requests = 0, .conn = {.state = REQ_START, .open = 1}};
    size_t at = 0;
    while (at < size) {
        size_t piece = size - at;
        if (rng != 0) {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            size_t most = 1 + (size_t)(rng >> 8) % (rng & 16 ? 4 : 200);
            if (piece > most)
                piece = most;
        }
        long n = scan(&r.conn, (const char *)data + at, piece);
        if (n < 0 || (size_t)n > piece) {
            r.requests = n < 0 ? -1 : LONG_MAX; /* more requests than bytes: a finding below */
            return r;
        }
        r.requests += n;
        at += piece;
    }
    return r;
}

/* The same wait for more bytes: the fields that say what the scanner expects next. */
static int same_state(const struct conn *a, const struct conn *b) {
    if (a->state != b->state)
        return 0;
    switch (a->state) {
    case MB_COUNT:
        return a->number == b->number && a->negative == b->negative;
    case BULK_LEN:
        return a->number == b->number && a->negative == b->negative && a->bulks == b->bulks;
    case BULK_HEADER:
        return a->bulks == b->bulks;
    case BULK_BODY:
        return a->skip == b->skip && a->bulks == b->bulks;
    default:
        return 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* The pieces' sizes: FNV-1a of the input, never 0 (0 means one piece). */
    uint64_t seed = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        seed = (seed ^ data[i]) * 0x100000001b3ull;
    seed |= 1;

    struct result whole = scan_pieces(data, size, 0);
    struct result split = scan_pieces(data, size, seed);
    if (whole.requests == LONG_MAX || split.requests == LONG_MAX)
        abort();
    if ((whole.requests < 0) != (split.requests < 0))
        abort();
    if (whole.requests >= 0 &&
        (whole.requests != split.requests || !same_state(&whole.conn, &split.conn)))
        abort();
    return 0;
}
