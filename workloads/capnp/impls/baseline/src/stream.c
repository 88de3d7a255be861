#include "stream.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cce.h"

#define READ_BUFFER (64 * 1024) /* a pipe's default capacity: one read takes all it holds */
#define PACKED_WORD_MAX 10      /* tag, 8 bytes, run count */

/* Grows *buf to at least `need` bytes, doubling so that a growing sequence of messages costs
 * a few reallocs in the warm-up and none afterwards; never doubling past the message cap, so
 * that a hostile message near the cap costs its own size, not twice that. */
static bool reserve(uint8_t **buf, size_t *cap, size_t need) {
    if (need <= *cap)
        return true;
    size_t want = *cap * 2;
    if (want < need || want > STREAM_MESSAGE_LIMIT)
        want = need;
    uint8_t *p = realloc(*buf, want);
    if (p == NULL)
        return false;
    *buf = p;
    *cap = want;
    return true;
}

void writer_init(struct writer *w) {
    *w = (struct writer){0};
}

void writer_destroy(struct writer *w) {
    free(w->frame);
    free(w->packed);
}

uint8_t *writer_begin(struct writer *w, size_t len) {
    if (len > STREAM_MESSAGE_LIMIT)
        return NULL;
    size_t padded = (4 + len + 7) & ~(size_t)7;
    if (!reserve(&w->frame, &w->frame_cap, padded))
        return NULL;
    /* Zero the last word first: the body overwrites its front, the padding stays zero. */
    memset(w->frame + padded - 8, 0, 8);
    put_u32(w->frame, (uint32_t)len);
    w->frame_len = 4 + len;
    return w->frame + 4;
}

const uint8_t *writer_finish(struct writer *w, bool packed, size_t *len) {
    if (!packed) {
        *len = w->frame_len;
        return w->frame;
    }
    size_t words = (w->frame_len + 7) / 8;
    if (!reserve(&w->packed, &w->packed_cap, words * PACKED_WORD_MAX + 16))
        return NULL;
    *len = stream_pack(w->frame, words, w->packed);
    return w->packed;
}

bool write_all(int fd, const uint8_t *bytes, size_t len) {
    while (len > 0) {
        ssize_t n = write(fd, bytes, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return false;
        }
        bytes += n;
        len -= (size_t)n;
    }
    return true;
}

/* A word's zero bytes, as the top bit of each byte: set exactly where the byte is zero (the
 * low seven bits are added so that any nonzero one carries into the top bit). */
static uint64_t zero_flags(uint64_t w) {
    const uint64_t low7 = 0x7F7F7F7F7F7F7F7Full;
    return ~(((w & low7) + low7) | w | low7);
}

/* The top bit of each byte, gathered into one bit per byte: the packing's tag. */
static unsigned gather_flags(uint64_t flags) {
    return (unsigned)(((flags >> 7) * 0x0102040810204080ull) >> 56);
}

size_t stream_pack(const uint8_t *in, size_t words, uint8_t *out) {
    const uint8_t *end = in + words * 8;
    uint8_t *o = out;
    while (in < end) {
        uint64_t w = load_u64(in);
        unsigned tag = gather_flags(~zero_flags(w) & 0x8080808080808080ull);
        *o++ = (uint8_t)tag;
        /* Every byte is stored, from the word in a register, and kept (the output advanced)
         * only when nonzero: no branch per byte. The output has room for the stray store. */
#pragma GCC unroll 8
        for (unsigned i = 0; i < 8; i++) {
            *o = (uint8_t)(w >> 8 * i);
            o += tag >> i & 1;
        }
        in += 8;
        if (tag == 0x00 || tag == 0xFF) {
            /* The run that follows, at most 255 words: zero words after a zero word; after a
             * word with no zero byte, the words with at most one zero byte (from two zeros on
             * packing them wins), copied as they are. */
            const uint8_t *limit = (size_t)(end - in) > 255 * 8 ? in + 255 * 8 : end;
            const uint8_t *run = in;
            if (tag == 0x00) {
                while (in < limit && load_u64(in) == 0)
                    in += 8;
            } else {
                while (in < limit && __builtin_popcountll(zero_flags(load_u64(in))) < 2)
                    in += 8;
            }
            size_t n = (size_t)(in - run);
            *o++ = (uint8_t)(n / 8);
            if (tag == 0xFF) {
                memcpy(o, run, n);
                o += n;
            }
        }
    }
    return (size_t)(o - out);
}

bool reader_init(struct reader *r, int fd) {
    *r = (struct reader){.fd = fd};
    if (fd >= 0) {
        r->own = malloc(READ_BUFFER);
        if (r->own == NULL)
            return false;
        r->own_cap = READ_BUFFER;
        r->data = r->own;
    }
    return true;
}

void reader_destroy(struct reader *r) {
    free(r->own);
    free(r->msg);
}

void reader_set_memory(struct reader *r, const uint8_t *bytes, size_t len) {
    r->data = bytes;
    r->pos = 0;
    r->end = len;
    r->taken += len;
}

static enum read_status fail(struct reader *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static enum read_status fail(struct reader *r, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
    return READ_ERROR;
}

/* One read(2) into the buffer's free space; 0 at the end of input or after an error. */
static size_t read_some(struct reader *r) {
    for (;;) {
        ssize_t n = read(r->fd, r->own + r->end, r->own_cap - r->end);
        if (n >= 0) {
            r->end += (size_t)n;
            r->taken += (size_t)n;
            return (size_t)n;
        }
        if (errno != EINTR) {
            r->read_errno = errno;
            return 0;
        }
    }
}

/* At least `n` (a few) unread bytes; false at the end of input or on a read error. */
static bool fill(struct reader *r, size_t n) {
    if (r->end - r->pos >= n)
        return true;
    if (r->fd < 0)
        return false;
    size_t have = r->end - r->pos;
    memmove(r->own, r->own + r->pos, have);
    r->pos = 0;
    r->end = have;
    while (r->end < n)
        if (read_some(r) == 0)
            return false;
    return true;
}

/* What a message that cannot be completed ran into. */
static enum read_status cut_short(struct reader *r, const char *where) {
    if (r->read_errno != 0)
        return fail(r, "reading %s: %s", where, strerror(r->read_errno));
    return fail(r, "the input ends inside a message (%s)", where);
}

/* Exactly `n` bytes into `out`: first what is buffered, then straight from the descriptor. */
static bool take(struct reader *r, uint8_t *out, size_t n) {
    size_t have = r->end - r->pos < n ? r->end - r->pos : n;
    memcpy(out, r->data + r->pos, have);
    r->pos += have;
    out += have;
    n -= have;
    if (n > 0 && r->fd < 0)
        return false;
    while (n > 0) {
        ssize_t got = read(r->fd, out, n);
        if (got > 0) {
            r->taken += (size_t)got;
            out += got;
            n -= (size_t)got;
        } else if (got == 0) {
            return false;
        } else if (errno != EINTR) {
            r->read_errno = errno;
            return false;
        }
    }
    return true;
}

static enum read_status too_long(struct reader *r, uint32_t len) {
    return fail(r, "a message of %u bytes is over the cap of %zu (64 MiB)", len,
                STREAM_MESSAGE_LIMIT);
}

static enum read_status next_framed(struct reader *r, const uint8_t **body, size_t *len) {
    if (!fill(r, 4)) {
        if (r->pos == r->end && r->read_errno == 0)
            return READ_END;
        return cut_short(r, "its length");
    }
    uint32_t n = load_u32(r->data + r->pos);
    if (n > STREAM_MESSAGE_LIMIT)
        return too_long(r, n);
    r->pos += 4;
    *len = n;
    if (r->end - r->pos >= n) { /* whole in the buffer: read in place */
        *body = r->data + r->pos;
        r->pos += n;
        return READ_MESSAGE;
    }
    if (!reserve(&r->msg, &r->msg_cap, n))
        return fail(r, "no memory for a message of %u bytes", n);
    if (!take(r, r->msg, n))
        return cut_short(r, "its body");
    *body = r->msg;
    return READ_MESSAGE;
}

/* Expands one word from its tag and nonzero bytes at `p`, reading p[0 .. 8) whatever the tag
 * (the caller makes sure they are there) so that no byte costs a branch; past the word. The
 * word is put together in a register and stored once. */
static const uint8_t *expand(unsigned tag, const uint8_t *p, uint8_t *out) {
    uint64_t word = 0;
    const uint8_t *q = p;
#pragma GCC unroll 8
    for (unsigned i = 0; i < 8; i++) {
        uint64_t bit = tag >> i & 1;
        word |= (*q & -bit) << 8 * i;
        q += bit;
    }
    put_u64(out, word);
    return q;
}

/* One word's tag and nonzero bytes into out[0..8), however few bytes the buffer holds. */
static bool unpack_word(struct reader *r, uint8_t *out, unsigned *tag_out) {
    if (!fill(r, 1))
        return false;
    unsigned tag = r->data[r->pos++];
    unsigned n = (unsigned)__builtin_popcount(tag);
    if (!fill(r, n))
        return false;
    const uint8_t *p = r->data + r->pos;
    for (unsigned i = 0; i < 8; i++)
        out[i] = tag >> i & 1 ? *p++ : 0;
    r->pos += n;
    *tag_out = tag;
    return true;
}

/* The run after an all-zero or all-nonzero word: its count may not pass the message's end. */
static enum read_status unpack_run(struct reader *r, unsigned tag, size_t *filled, size_t words) {
    if (!fill(r, 1))
        return cut_short(r, "a packed run's count");
    size_t count = r->data[r->pos++];
    if (count > words - *filled)
        return fail(r, "a packed run of %zu words passes the message's end (%zu words left)", count,
                    words - *filled);
    uint8_t *out = r->msg + *filled * 8;
    if (tag == 0x00)
        memset(out, 0, count * 8);
    else if (!take(r, out, count * 8))
        return cut_short(r, "a packed run");
    *filled += count;
    return READ_MESSAGE;
}

static enum read_status next_packed(struct reader *r, const uint8_t **body, size_t *len) {
    /* The first word holds the length, which sizes the rest. */
    if (!fill(r, 1))
        return r->read_errno == 0 ? READ_END : cut_short(r, "a message's first word");
    uint8_t first[8];
    unsigned tag;
    if (!unpack_word(r, first, &tag))
        return cut_short(r, "its first word");
    uint32_t n = load_u32(first);
    if (n > STREAM_MESSAGE_LIMIT)
        return too_long(r, n);
    size_t words = (4 + (size_t)n + 7) / 8;
    if (!reserve(&r->msg, &r->msg_cap, words * 8))
        return fail(r, "no memory for a message of %u bytes", n);
    memcpy(r->msg, first, 8);
    size_t filled = 1;
    for (;;) {
        if (tag == 0x00 || tag == 0xFF) {
            enum read_status s = unpack_run(r, tag, &filled, words);
            if (s != READ_MESSAGE)
                return s;
        }
        if (filled == words)
            break;
        uint8_t *out = r->msg + filled * 8;
        if (r->end - r->pos > 8) {
            /* The usual case: the tag and all 8 bytes expand() may read are buffered. */
            const uint8_t *p = r->data + r->pos;
            tag = *p;
            r->pos = (size_t)(expand(tag, p + 1, out) - r->data);
        } else if (!unpack_word(r, out, &tag)) {
            return cut_short(r, "a packed word");
        }
        filled++;
    }
    *body = r->msg + 4;
    *len = n;
    return READ_MESSAGE;
}

enum read_status reader_next(struct reader *r, bool packed, const uint8_t **body, size_t *len) {
    return packed ? next_packed(r, body, len) : next_framed(r, body, len);
}
