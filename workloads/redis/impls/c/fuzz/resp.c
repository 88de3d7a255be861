/*
 * libFuzzer target `resp` (workloads/redis/fuzz/README.md): the input is the bytes of one client.
 * protocol.c's request parser takes them as the connection does (connection.c: parse from the
 * start of the pending request, call again with the same bytes and more after PARSE_MORE) until
 * it needs more bytes or reports a protocol error. Commands are not run.
 *
 * Run twice: the input whole, and cut into pieces whose sizes are drawn from the input, the
 * pending bytes moved to a new buffer of exactly their size before every call (as the
 * connection moves them to a client buffer; a read past the bytes given is then an ASan
 * report). Checked, a failure being an abort():
 * - both runs give the same transcript: every request's arguments, every empty request, the
 *   error message, and whether the input ended inside a request;
 * - each argument of a request lies inside the bytes the request took;
 * - parser_wants, when it knows, asks for more than the bytes at hand;
 * - the error reply the connection would send (reply_errorf) is one "-..." line.
 *
 * An inline line or a header line longer than PROTO_INLINE_MAX is refused when the bytes read
 * so far hold no line end, so its fate depends on where reads end (in redis too): the runs are
 * compared only for inputs of at most that size.
 */
#include "protocol.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct transcript {
    char *text;
    size_t len, cap;
};

static void put(struct transcript *t, const void *p, size_t n) {
    if (t->cap - t->len < n) {
        size_t cap = t->cap ? t->cap : 256;
        while (cap - t->len < n)
            cap *= 2;
        char *bigger = realloc(t->text, cap);
        if (!bigger)
            abort();
        t->text = bigger;
        t->cap = cap;
    }
    if (n)
        memcpy(t->text + t->len, p, n);
    t->len += n;
}

/* One parse_request result into the transcript. Returns false when parsing is over (an error
 * or more bytes needed). */
static bool record(struct transcript *t, struct parser *p, enum parse_status st, const char *buf,
                   size_t len) {
    switch (st) {
    case PARSE_MORE: {
        size_t wants = parser_wants(p);
        if (wants != 0 && wants <= len) {
            fprintf(stderr, "fuzz resp: PARSE_MORE with %zu bytes, wants %zu\n", len, wants);
            abort();
        }
        return false;
    }
    case PARSE_ERROR: {
        put(t, "!", 1);
        put(t, p->error, strlen(p->error));
        /* What the connection sends before it closes: one error line. */
        struct outbuf o = {0};
        reply_errorf(&o, "%s", p->error);
        if (o.len < 3 || o.buf[0] != '-' || memcmp(o.buf + o.len - 2, "\r\n", 2) != 0 ||
            memchr(o.buf, '\r', o.len - 2) || memchr(o.buf, '\n', o.len - 2)) {
            fprintf(stderr, "fuzz resp: error reply is not one line: %.*s\n", (int)o.len, o.buf);
            abort();
        }
        free(o.buf);
        return false;
    }
    case PARSE_EMPTY:
        if (p->used == 0 || p->used > len)
            abort();
        put(t, "-;", 2);
        return true;
    case PARSE_REQUEST:
        if (p->used == 0 || p->used > len || p->argc <= 0)
            abort();
        for (int i = 0; i < p->argc; i++) {
            const char *a = p->argv[i].p;
            size_t n = p->argv[i].len;
            if (a < buf || a > buf + p->used || n > (size_t)(buf + p->used - a)) {
                fprintf(stderr, "fuzz resp: argument %d outside its request\n", i);
                abort();
            }
            char head[32];
            int k = snprintf(head, sizeof head, "%zu:", n);
            put(t, head, (size_t)k);
            put(t, a, n);
        }
        put(t, ";", 1);
        return true;
    }
    abort();
}

static void parse_whole(const uint8_t *data, size_t size, struct transcript *t) {
    struct parser p;
    parser_init(&p);
    char *buf = malloc(size ? size : 1);
    if (!buf)
        abort();
    memcpy(buf, data, size);
    size_t pos = 0;
    bool done = false;
    while (pos < size && !done) {
        enum parse_status st = parse_request(&p, buf + pos, size - pos);
        done = !record(t, &p, st, buf + pos, size - pos);
        if (st == PARSE_MORE)
            put(t, "...", 3);
        if (!done)
            pos += p.used;
    }
    free(buf);
    parser_free(&p);
}

static uint64_t mix(uint64_t *state) {
    /* splitmix64: the piece sizes. */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static void parse_pieces(const uint8_t *data, size_t size, struct transcript *t) {
    uint64_t rng = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < size; i++)
        rng = (rng ^ data[i]) * 0x100000001B3ull;
    struct parser p;
    parser_init(&p);
    char *pending = NULL;
    size_t have = 0, fed = 0;
    bool failed = false, more = false;
    while (fed < size && !failed) {
        uint64_t x = mix(&rng);
        size_t n = (x & 3) == 0 ? 1 + (x >> 8) % 256 : 1 + (x >> 8) % 8;
        if (n > size - fed)
            n = size - fed;
        /* The pending bytes and the new piece, in a buffer of exactly their size. */
        char *buf = malloc(have + n);
        if (!buf)
            abort();
        if (have)
            memcpy(buf, pending, have);
        memcpy(buf + have, data + fed, n);
        free(pending);
        pending = buf;
        have += n;
        fed += n;
        size_t pos = 0;
        more = false;
        while (pos < have) {
            enum parse_status st = parse_request(&p, pending + pos, have - pos);
            if (!record(t, &p, st, pending + pos, have - pos)) {
                failed = st == PARSE_ERROR;
                more = st == PARSE_MORE;
                break;
            }
            pos += p.used;
        }
        parser_shrink(&p);
        /* What is left is the start of a request: the next call starts there. */
        memmove(pending, pending + pos, have - pos);
        have -= pos;
    }
    if (more)
        put(t, "...", 3);
    free(pending);
    parser_free(&p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct transcript whole = {0}, pieces = {0};
    parse_whole(data, size, &whole);
    parse_pieces(data, size, &pieces);
    if (size <= PROTO_INLINE_MAX &&
        (whole.len != pieces.len || (whole.len && memcmp(whole.text, pieces.text, whole.len)))) {
        fprintf(stderr, "fuzz resp: whole and in pieces differ\n  whole:  %.*s\n  pieces: %.*s\n",
                (int)(whole.len < 2000 ? whole.len : 2000), whole.text,
                (int)(pieces.len < 2000 ? pieces.len : 2000), pieces.text);
        abort();
    }
    free(whole.text);
    free(pieces.text);
    return 0;
}
