/*
 * libFuzzer target `server` (workloads/comm/fuzz/README.md): the input is the bytes of one
 * client. handler.c's session (the frame decoder and the session rules the server runs per
 * connection) is driven as listener.c's worker drives it, with memory in place of the socket
 * and a --max-body of 1 MiB, so that both the cap and the streaming of frames larger than the
 * session buffer (128 KiB) are reachable.
 *
 * Run twice: once with every read and write taking all it may, once with reads cut into pieces
 * drawn from the input, a socket that takes a few bytes per writable event, and EAGAIN/EINTR now
 * and then. What the server sends is compared with what SPEC §1-§2 make of the input, computed
 * here from the headers alone (a failure is an abort()):
 * - each frame of any type but END/QUIT answered by a REPLY with its body, in order; END or QUIT
 *   answered by a header-only END, after which the session sends nothing, shuts its side down
 *   and reads until EOF; a length above the cap, or EOF, ends the replies;
 * - all of that exactly, except where the SPEC lets a session stop early: after a refused
 *   length ("one try" at the replies owed) and at EOF inside a frame ("close, nothing more"),
 *   what was sent while the socket was full is a prefix of it (this session stops early only
 *   inside a frame larger than its buffer: it reads on while replies wait, see handler.h);
 * - a session never writes after shutting down, never reads 0 bytes (read(2) would say EOF),
 *   and ends (no more than a bounded number of events).
 */
#include "frame.h"
#include "handler.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#define FUZZ_MAX_BODY (1u << 20)

struct bytes {
    unsigned char *p;
    size_t len, cap;
};

static void append(struct bytes *b, const void *p, size_t n) {
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 1024;
        while (cap - b->len < n)
            cap *= 2;
        unsigned char *bigger = realloc(b->p, cap);
        if (!bigger)
            abort();
        b->p = bigger;
        b->cap = cap;
    }
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
}

static uint64_t mix(uint64_t *state) {
    /* splitmix64: piece sizes and socket events of the cut run. */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* The memory socket: the client has sent the whole input and then closed its side. */
struct socket {
    const uint8_t *in;
    size_t in_len, in_pos;
    bool cut;
    uint64_t rng;
    size_t room; /* bytes the socket takes before it is full (until the client reads) */
    bool shut;   /* the session shut its sending side down */
    struct bytes out;
};

static struct socket *sock;

static ssize_t memory_read(int fd, void *buf, size_t n) {
    (void)fd;
    if (n == 0) {
        fprintf(stderr, "fuzz server: a read of 0 bytes (read(2) would report EOF)\n");
        abort();
    }
    size_t k = n;
    if (sock->cut) {
        uint64_t x = mix(&sock->rng);
        switch (x & 15) {
        case 0:
            errno = EAGAIN; /* a spurious wake-up */
            return -1;
        case 1:
            errno = EINTR;
            return -1;
        case 2:
        case 3:
        case 4:
            k = 1 + (x >> 8) % 9;
            break;
        case 5:
        case 6:
            k = 1 + (x >> 8) % 1024;
            break;
        default:
            break;
        }
    }
    size_t left = sock->in_len - sock->in_pos;
    if (k > n)
        k = n;
    if (k > left)
        k = left;
    memcpy(buf, sock->in + sock->in_pos, k);
    sock->in_pos += k;
    return (ssize_t)k;
}

static ssize_t memory_write(int fd, const void *buf, size_t n) {
    (void)fd;
    if (sock->shut) {
        fprintf(stderr, "fuzz server: a write after shutdown\n");
        abort();
    }
    if (sock->cut && (mix(&sock->rng) & 15) == 0) {
        errno = EINTR;
        return -1;
    }
    if (sock->room == 0) {
        errno = EAGAIN;
        return -1;
    }
    size_t k = n < sock->room ? n : sock->room;
    append(&sock->out, buf, k);
    sock->room -= k;
    return (ssize_t)k;
}

static int memory_shutdown(int fd, int how) {
    (void)fd;
    (void)how;
    if (sock->shut) {
        fprintf(stderr, "fuzz server: shut down twice\n");
        abort();
    }
    sock->shut = true;
    return 0;
}

static const struct session_io memory_io = {memory_read, memory_write, memory_shutdown};

/* listener.c's worker_main for one session: the events it waits for, then the handler's calls
 * in the worker's order. Here the client reads everything sent whenever the session waits to
 * write, and input (or EOF) is always there to read. */
static void run(struct socket *so) {
    sock = so;
    struct session *s = session_create(0, FUZZ_MAX_BODY);
    if (!s)
        abort();
    s->io = &memory_io;
    uint32_t events = EPOLLIN;
    size_t limit = 100000 + 64 * so->in_len;
    for (size_t turn = 0;; turn++) {
        if (turn == limit) {
            fprintf(stderr, "fuzz server: the session has not ended after %zu events\n", turn);
            abort();
        }
        bool out = events & EPOLLOUT, in = events & EPOLLIN;
        if (out) {
            if (!so->cut) {
                so->room = SIZE_MAX;
            } else {
                uint64_t x = mix(&so->rng);
                so->room = (x & 3) == 0 ? SIZE_MAX : 1 + (x >> 8) % 4096;
            }
        }
        enum session_verdict v = out ? session_on_writable(s) : SESSION_WANT_READ;
        if (in && v != SESSION_CLOSE)
            v = session_on_readable(s);
        if (v == SESSION_CLOSE)
            break;
        events = v == SESSION_WANT_READ    ? EPOLLIN
                 : v == SESSION_WANT_WRITE ? EPOLLOUT
                                           : EPOLLIN | EPOLLOUT;
        if (!so->cut)
            so->room = SIZE_MAX;
    }
    session_destroy(s);
    sock = NULL;
}

/* What the SPEC makes of the input. */
enum ending { END_EOF, END_REFUSED, END_SESSION, END_IN_FRAME };

struct expected {
    struct bytes out; /* everything a session that is never blocked sends */
    enum ending ending;
};

static void expect(const uint8_t *data, size_t size, struct expected *e) {
    size_t at = 0;
    for (;;) {
        size_t left = size - at;
        if (left < FRAME_HEADER_SIZE) {
            e->ending = left == 0 ? END_EOF : END_IN_FRAME;
            return;
        }
        struct frame_header h = frame_decode(data + at);
        unsigned char header[FRAME_HEADER_SIZE];
        if (h.body_len > FUZZ_MAX_BODY) {
            e->ending = END_REFUSED;
            return;
        }
        if (h.type == FRAME_END || h.type == FRAME_QUIT) {
            frame_encode(header, FRAME_END, 0);
            append(&e->out, header, sizeof header);
            e->ending = END_SESSION;
            return;
        }
        size_t have = left - FRAME_HEADER_SIZE;
        frame_encode(header, FRAME_REPLY, h.body_len);
        if (have < h.body_len) {
            e->ending = END_IN_FRAME;
            if (h.body_len > SESSION_BUFFER_SIZE - FRAME_HEADER_SIZE && have > 0) {
                /* Streamed: the header and the body bytes that came before EOF. */
                append(&e->out, header, sizeof header);
                append(&e->out, data + at + FRAME_HEADER_SIZE, have);
            }
            return;
        }
        append(&e->out, header, sizeof header);
        append(&e->out, data + at + FRAME_HEADER_SIZE, (size_t)h.body_len);
        at += FRAME_HEADER_SIZE + (size_t)h.body_len;
    }
}

static void check(const char *run_name, const struct socket *so, const struct expected *e,
                  bool prefix_allowed) {
    const struct bytes *got = &so->out;
    bool ok = got->len == e->out.len || (prefix_allowed && got->len < e->out.len);
    ok = ok && (got->len == 0 || memcmp(got->p, e->out.p, got->len) == 0);
    if (!ok) {
        size_t diff = 0;
        while (diff < got->len && diff < e->out.len && got->p[diff] == e->out.p[diff])
            diff++;
        fprintf(stderr,
                "fuzz server: %s run sent %zu bytes, %s %zu, first difference at byte %zu\n",
                run_name, got->len, prefix_allowed ? "at most" : "want", e->out.len, diff);
        abort();
    }
    if (so->shut != (e->ending == END_SESSION && got->len == e->out.len)) {
        fprintf(stderr, "fuzz server: %s run %s its side down\n", run_name,
                so->shut ? "shut" : "did not shut");
        abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct expected e = {0};
    expect(data, size, &e);

    struct socket whole = {.in = data, .in_len = size, .room = SIZE_MAX};
    run(&whole);
    check("whole", &whole, &e, false);

    uint64_t seed = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < size; i++)
        seed = (seed ^ data[i]) * 0x100000001B3ull;
    struct socket cut = {.in = data, .in_len = size, .cut = true, .rng = seed};
    run(&cut);
    check("cut", &cut, &e, e.ending == END_REFUSED || e.ending == END_IN_FRAME);

    free(whole.out.p);
    free(cut.out.p);
    free(e.out.p);
    return 0;
}
