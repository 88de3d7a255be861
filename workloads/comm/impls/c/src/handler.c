/*
 * Until the replies are written the input buffer is not compacted, so reading pauses while
 * output is pending: a client that stops reading its replies is no longer read from either
 * (TCP flow control does the rest) - except for the rest of a large frame the client is still
 * sending (see handler.h).
 */
#include "handler.h"

#include "frame.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

const struct session_io session_syscalls = {read, write, shutdown};

struct session *session_create(int fd, uint64_t max_body) {
    struct session *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->in = malloc(SESSION_BUFFER_SIZE);
    if (!s->in) {
        free(s);
        return NULL;
    }
    s->cap = SESSION_BUFFER_SIZE;
    s->fd = fd;
    s->io = &session_syscalls;
    s->max_body = max_body;
    return s;
}

void session_destroy(struct session *s) {
    free(s->in);
    free(s);
}

static bool output_pending(const struct session *s) {
    return s->out_head < s->parsed;
}

/* Moves the input (everything from offset 0 to len) to a buffer of `cap` bytes. */
static int move_input(struct session *s, size_t cap) {
    unsigned char *to = malloc(cap);
    if (!to)
        return -1;
    memcpy(to, s->in, s->len);
    free(s->in);
    s->in = to;
    s->cap = cap;
    return 0;
}

/* Turns the frames read into replies, in place. */
static void parse(struct session *s) {
    while (s->state == SESSION_OPEN) {
        size_t avail = s->len - s->parsed;
        if (s->stream_left > 0) {
            size_t n = avail < s->stream_left ? avail : (size_t)s->stream_left;
            s->parsed += n;
            s->stream_left -= n;
            if (s->stream_left > 0)
                return;
            continue;
        }
        if (avail < FRAME_HEADER_SIZE)
            return;
        unsigned char *at = s->in + s->parsed;
        struct frame_header h = frame_decode(at);
        if (!frame_body_allowed(h.body_len, s->max_body)) {
            /* Refused before anything is allocated; the replies already owed still go out,
             * then the connection closes. */
            fprintf(stderr, "comm-c-server: body of %llu bytes above --max-body %llu: closing\n",
                    (unsigned long long)h.body_len, (unsigned long long)s->max_body);
            s->len = s->parsed;
            s->state = SESSION_REFUSED;
            return;
        }
        if (frame_ends_session(h.type)) {
            /* The END reply takes the place of the END frame's header; its body (if any) and
             * whatever follows are never answered. */
            frame_encode(at, FRAME_END, 0);
            s->parsed += FRAME_HEADER_SIZE;
            s->len = s->parsed;
            s->state = SESSION_ENDING;
            return;
        }
        size_t have = avail - FRAME_HEADER_SIZE;
        if (have >= h.body_len) {
            frame_encode(at, FRAME_REPLY, h.body_len); /* complete: header and body go together */
            s->parsed += FRAME_HEADER_SIZE + (size_t)h.body_len;
        } else if (h.body_len > SESSION_BUFFER_SIZE - FRAME_HEADER_SIZE && have > 0) {
            /* It can never be whole in the buffer: stream it, the header going out with the
             * first piece of the body. */
            frame_encode(at, FRAME_REPLY, h.body_len);
            s->parsed = s->len;
            s->stream_left = h.body_len - have;
            return;
        } else {
            return; /* wait for the rest of the frame */
        }
    }
}

/* The bytes of a large frame (one that cannot be whole in a normal buffer) the peer has still
 * to send, when it is in the middle of one; 0 otherwise. Only such a frame can outgrow the
 * socket buffers and deadlock a client that reads only after writing it. */
static uint64_t large_frame_rest(const struct session *s) {
    if (s->state != SESSION_OPEN)
        return 0;
    size_t avail = s->len - s->parsed;
    if (s->stream_left > 0)
        return s->stream_left > avail ? s->stream_left - avail : 0;
    if (avail < FRAME_HEADER_SIZE)
        return 0;
    struct frame_header h = frame_decode(s->in + s->parsed);
    if (!frame_body_allowed(h.body_len, s->max_body) ||
        h.body_len <= SESSION_BUFFER_SIZE - FRAME_HEADER_SIZE)
        return 0;
    return h.body_len - (avail - FRAME_HEADER_SIZE);
}

/* Writes the pending replies: 1 when all of them went, 0 when the socket is full, -1 when the
 * peer is gone. Once all is written, the unparsed rest of the input (at most one incomplete
 * frame) moves to the front of a buffer of the normal size. */
static int flush(struct session *s) {
    while (output_pending(s)) {
        ssize_t put = s->io->write(s->fd, s->in + s->out_head, s->parsed - s->out_head);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return errno == EAGAIN || errno == EWOULDBLOCK ? 0 : -1;
        }
        s->out_head += (size_t)put;
    }
    size_t rest = s->len - s->parsed;
    if (s->cap > SESSION_BUFFER_SIZE && rest <= SESSION_BUFFER_SIZE) {
        /* Done absorbing: back to the normal size (kept as is if memory is short). */
        unsigned char *small = malloc(SESSION_BUFFER_SIZE);
        if (small) {
            memcpy(small, s->in + s->parsed, rest);
            free(s->in);
            s->in = small;
            s->cap = SESSION_BUFFER_SIZE;
            s->out_head = s->parsed = 0;
            s->len = rest;
        }
    }
    if (s->parsed > 0) {
        memmove(s->in, s->in + s->parsed, rest);
        s->out_head = s->parsed = 0;
        s->len = rest;
    }
    return 1;
}

/* What to wait for while output is pending. */
static enum session_verdict blocked(const struct session *s) {
    if (s->state == SESSION_REFUSED)
        return SESSION_CLOSE; /* "at once": no waiting for a peer that may not read */
    return large_frame_rest(s) > 0 ? SESSION_WANT_BOTH : SESSION_WANT_WRITE;
}

/* Everything owed is written: what comes next. */
static enum session_verdict written(struct session *s) {
    switch (s->state) {
    case SESSION_ENDING:
        /* FIN after the END reply; the peer's close ends the draining. */
        s->io->shutdown(s->fd, SHUT_WR);
        s->state = SESSION_DRAINING;
        return SESSION_WANT_READ;
    case SESSION_REFUSED:
        return SESSION_CLOSE;
    default:
        return SESSION_WANT_READ;
    }
}

/* Parses and writes what has been read, until the socket is full or the session ends. */
static enum session_verdict pump(struct session *s) {
    parse(s);
    int r = flush(s);
    if (r < 0)
        return SESSION_CLOSE;
    return r == 0 ? blocked(s) : written(s);
}

static enum session_verdict drain(struct session *s) {
    ssize_t got = s->io->read(s->fd, s->in, s->cap);
    if (got < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? SESSION_WANT_READ
                                                                         : SESSION_CLOSE;
    s->drained += (uint64_t)got;
    return got == 0 || s->drained > SESSION_DRAIN_LIMIT ? SESSION_CLOSE : SESSION_WANT_READ;
}

enum session_verdict session_on_readable(struct session *s) {
    if (s->state == SESSION_DRAINING)
        return drain(s);
    size_t want = s->cap - s->len;
    if (output_pending(s)) {
        /* The buffer still holds replies being written: read only to take in the rest of a
         * large frame the peer is still sending, into a larger buffer if need be, and
         * nothing beyond it. */
        uint64_t rest = large_frame_rest(s);
        if (rest == 0)
            return SESSION_WANT_WRITE;
        if (want == 0 && (rest > SIZE_MAX - s->len || move_input(s, s->len + (size_t)rest) != 0))
            return SESSION_WANT_WRITE; /* out of memory: wait for the peer to read */
        want = s->cap - s->len;
        if (want > rest)
            want = (size_t)rest;
    } else if (want == 0) {
        return SESSION_CLOSE; /* cannot happen: a full buffer always holds a whole reply */
    }
    /* One read per event: level-triggered epoll comes back for the rest, so one busy client
     * cannot starve the others of the same worker. */
    ssize_t got = s->io->read(s->fd, s->in + s->len, want);
    if (got < 0) {
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return SESSION_CLOSE;
        return output_pending(s) ? blocked(s) : SESSION_WANT_READ;
    }
    if (got == 0) {
        /* EOF. Between frames everything has been answered already (nothing complete is
         * left unparsed), inside one there is nothing more to say. */
        return SESSION_CLOSE;
    }
    s->len += (size_t)got;
    return pump(s);
}

enum session_verdict session_on_writable(struct session *s) {
    return pump(s); /* the rest of the replies, and any frame completed meanwhile */
}
