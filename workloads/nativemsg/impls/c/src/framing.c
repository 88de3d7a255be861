#include "framing.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * 64 KiB is the default capacity of a Linux pipe: one read(2) can drain a full pipe, and a
 * session of small requests never needs more.
 */
#define READ_CHUNK (64u * 1024u)

/*
 * After a frame larger than this, the buffer is given back once it is empty: a persistent host
 * lives as long as the browser port, and should not keep 64 MiB because of one large request.
 * Echo traffic up to the 1 MiB reply limit keeps its buffer.
 */
#define KEEP_CAP (FRAME_HEADER_SIZE + FRAME_MAX_REPLY + READ_CHUNK)

const struct frame_io frame_syscalls = {read, write};

int frame_reader_init(struct frame_reader *r, int fd) {
    r->io = &frame_syscalls;
    r->fd = fd;
    r->buf = malloc(READ_CHUNK);
    r->cap = r->buf ? READ_CHUNK : 0;
    r->start = 0;
    r->end = 0;
    r->claimed = 0;
    return r->buf ? 0 : -1;
}

void frame_reader_free(struct frame_reader *r) {
    free(r->buf);
    r->buf = NULL;
    r->cap = 0;
    r->start = 0;
    r->end = 0;
}

/* Makes room for `need` bytes counted from r->start, moving or growing the buffer. */
static int make_room(struct frame_reader *r, size_t need) {
    if (r->cap - r->start >= need)
        return 0;
    size_t have = r->end - r->start;
    memmove(r->buf, r->buf + r->start, have);
    r->start = 0;
    r->end = have;
    if (r->cap >= need)
        return 0;
    /* Exactly the frame plus one chunk, so the next header can arrive with the body's tail. */
    size_t cap = need + READ_CHUNK;
    unsigned char *buf = realloc(r->buf, cap);
    if (!buf)
        return -1;
    r->buf = buf;
    r->cap = cap;
    return 0;
}

/* Called when the buffer is empty: rewind, and drop a buffer grown for one huge frame. */
static void reset_empty(struct frame_reader *r) {
    r->start = 0;
    r->end = 0;
    if (r->cap > KEEP_CAP) {
        unsigned char *buf = realloc(r->buf, READ_CHUNK);
        if (buf) {
            r->buf = buf;
            r->cap = READ_CHUNK;
        }
    }
}

enum frame_status frame_read(struct frame_reader *r, const unsigned char **body, uint32_t *len) {
    if (r->start == r->end)
        reset_empty(r);
    for (;;) {
        size_t have = r->end - r->start;
        size_t need = FRAME_HEADER_SIZE;
        if (have >= FRAME_HEADER_SIZE) {
            uint32_t n;
            /* Native byte order, exactly as the browser wrote it. memcpy: no unaligned load. */
            memcpy(&n, r->buf + r->start, sizeof n);
            r->claimed = n;
            /* Checked before any allocation or read: the body of a bad prefix never arrives. */
            if (n > FRAME_MAX_REQUEST)
                return FRAME_TOO_LARGE;
            need = FRAME_HEADER_SIZE + (size_t)n;
            if (have >= need) {
                *body = r->buf + r->start + FRAME_HEADER_SIZE;
                *len = n;
                r->start += need;
                return FRAME_OK;
            }
        }
        if (make_room(r, need) != 0)
            return FRAME_NO_MEMORY;
        ssize_t got = r->io->read(r->fd, r->buf + r->end, r->cap - r->end);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return FRAME_READ_ERROR;
        }
        if (got == 0) {
            if (have == 0)
                return FRAME_EOF;
            return have < FRAME_HEADER_SIZE ? FRAME_EOF_HEADER : FRAME_EOF_BODY;
        }
        r->end += (size_t)got;
    }
}

const char *frame_status_text(enum frame_status status) {
    switch (status) {
    case FRAME_OK:
        return "ok";
    case FRAME_EOF:
        return "end of input";
    case FRAME_EOF_HEADER:
        return "end of input inside a length prefix";
    case FRAME_EOF_BODY:
        return "end of input inside a message body";
    case FRAME_TOO_LARGE:
        return "length prefix above the 64 MiB request limit";
    case FRAME_READ_ERROR:
        return "read error on stdin";
    case FRAME_NO_MEMORY:
        return "out of memory for a request";
    }
    return "unknown framing error";
}

int frame_write(int fd, unsigned char *frame, size_t body_len) {
    return frame_write_io(&frame_syscalls, fd, frame, body_len);
}

int frame_write_io(const struct frame_io *io, int fd, unsigned char *frame, size_t body_len) {
    if (body_len > FRAME_MAX_REPLY) {
        errno = EMSGSIZE;
        return -1;
    }
    uint32_t n = (uint32_t)body_len;
    memcpy(frame, &n, sizeof n);
    size_t left = FRAME_HEADER_SIZE + body_len;
    const unsigned char *p = frame;
    while (left > 0) {
        ssize_t put = io->write(fd, p, left);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += put;
        left -= (size_t)put;
    }
    return 0;
}
