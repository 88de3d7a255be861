/*
 * libFuzzer target `server` (workloads/comm/fuzz/README.md): the input is the bytes of one
 * client, read by one connection of the floor with --max-body 1 MiB (so that the cap is within
 * reach of a small input).
 *
 * How it reaches the code: this file includes ../main.c itself, so the floor keeps its one file
 * and its release build is untouched (not a line of it differs). Before the include, the system
 * calls a connection makes (accept4, setsockopt, epoll_ctl, read, write, shutdown, close) are
 * macros for the stand-ins below, which serve the input as the socket's incoming bytes and
 * collect what is written; main() is renamed. One connection is then accepted by accept_all()
 * and driven as main()'s loop drives it: on_writable() while EPOLLOUT is armed, on_readable()
 * otherwise, until it is closed. Twice per input: once with every read and write taking all it
 * may, once with reads and writes cut into pieces whose sizes are drawn from the input, with
 * EINTR and EAGAIN (a full socket: EPOLLOUT, then on_writable) now and then. The one
 * difference from the program: a connection's first buffer (BUF_SIZE) is 64 bytes instead of
 * 128 KiB, so that inputs of a few KiB reach the buffer's growth to a frame's size and the echo
 * of frames larger than the first buffer.
 *
 * Checked, a failure being an abort(): what the connection writes is what a walk over the input
 * that shares no code with the floor expects (SPEC §1-2): every complete frame echoed in order
 * with type REPLY and its own length and body; at END or QUIT one header-only END after them,
 * then FIN (shutdown) and nothing more; a length above the cap ends the session after the
 * replies before it; EOF inside a frame or between frames sends nothing more. The connection is
 * always closed in the end, its memory freed. The one leeway: after a length above the cap the
 * floor gives the replies before it a single try, so if the socket was ever full (EAGAIN) the
 * output need only be a prefix of those replies.
 */
#define _GNU_SOURCE /* as main.c: accept4 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

static int fuzz_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags);
static int fuzz_setsockopt(int fd, int level, int name, const void *value, socklen_t len);
static int fuzz_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev);
static ssize_t fuzz_read(int fd, void *buf, size_t n);
static ssize_t fuzz_write(int fd, const void *buf, size_t n);
static int fuzz_shutdown(int fd, int how);
static int fuzz_close(int fd);

#define accept4(fd, addr, len, flags) fuzz_accept4(fd, addr, len, flags)
#define setsockopt(fd, level, name, value, len) fuzz_setsockopt(fd, level, name, value, len)
#define epoll_ctl(epfd, op, fd, ev) fuzz_epoll_ctl(epfd, op, fd, ev)
#define read(fd, buf, n) fuzz_read(fd, buf, n)
#define write(fd, buf, n) fuzz_write(fd, buf, n)
#define shutdown(fd, how) fuzz_shutdown(fd, how)
#define close(fd) fuzz_close(fd)
#define main comm_baseline_main
#define BUF_SIZE 64 /* a connection's first buffer: 128 KiB in the program (see above) */
#include "../main.c"
#undef main
#undef close
#undef shutdown
#undef write
#undef read
#undef epoll_ctl
#undef setsockopt
#undef accept4

#define CAP (1u << 20) /* --max-body in this target */
#define LISTENER 3
#define SOCKET 7 /* the one connection's descriptor */

/* ---- one connection's socket, in memory ------------------------------------------------------ */

struct bytes {
    unsigned char *p;
    size_t len, cap;
};

static void append(struct bytes *b, const void *data, size_t n) {
    if (n == 0)
        return;
    if (b->cap - b->len < n) {
        size_t want = b->cap ? b->cap : 256;
        while (want - b->len < n)
            want *= 2;
        b->p = realloc(b->p, want);
        if (!b->p)
            abort();
        b->cap = want;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static struct {
    const unsigned char *in;
    size_t in_len, in_pos;
    uint64_t rng;      /* 0: every call takes all it may */
    int accepted;      /* accept4 has handed out SOCKET */
    int closed, fin;   /* close(SOCKET), shutdown(SOCKET, SHUT_WR) */
    int eagain;        /* a write has answered EAGAIN (a full socket) */
    int last_eagain;   /* the previous read or write did: the next one makes progress */
    unsigned calls;    /* reads and writes, bounded: a loop that never ends is a finding */
    uint32_t events;   /* what epoll_ctl last armed */
    struct conn *conn; /* its data.ptr */
    struct bytes out;
} sock;

static uint64_t next_random(void) {
    sock.rng ^= sock.rng << 13;
    sock.rng ^= sock.rng >> 7;
    sock.rng ^= sock.rng << 17;
    return sock.rng;
}

/* How many of `n` bytes this call moves, or -1 with errno EINTR or EAGAIN. */
static ssize_t piece(size_t n) {
    if (++sock.calls > 8 * sock.in_len + 64)
        abort();
    if (sock.rng == 0 || n == 0)
        return (ssize_t)n;
    uint64_t r = next_random();
    if (!sock.last_eagain && r % 8 == 0) {
        sock.last_eagain = 1;
        errno = r & 8 ? EINTR : EAGAIN;
        return -1;
    }
    sock.last_eagain = 0;
    size_t most = 1 + (size_t)(r >> 8) % (r & 16 ? 5 : 500);
    return (ssize_t)(n < most ? n : most);
}

static int fuzz_accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags) {
    (void)addr, (void)len, (void)flags;
    if (fd != LISTENER)
        abort();
    if (sock.accepted) {
        errno = EAGAIN;
        return -1;
    }
    sock.accepted = 1;
    return SOCKET;
}

static int fuzz_setsockopt(int fd, int level, int name, const void *value, socklen_t len) {
    (void)level, (void)name, (void)value, (void)len;
    if (fd != SOCKET)
        abort();
    return 0;
}

static int fuzz_epoll_ctl(int epfd, int op, int fd, struct epoll_event *ev) {
    (void)epfd;
    if (fd != SOCKET || sock.closed || (op != EPOLL_CTL_ADD && op != EPOLL_CTL_MOD))
        abort();
    sock.events = ev->events;
    sock.conn = ev->data.ptr;
    return 0;
}

static ssize_t fuzz_read(int fd, void *buf, size_t n) {
    if (fd != SOCKET || sock.closed)
        abort();
    size_t left = sock.in_len - sock.in_pos;
    ssize_t take = piece(n < left ? n : left);
    if (take > 0) {
        memcpy(buf, sock.in + sock.in_pos, (size_t)take);
        sock.in_pos += (size_t)take;
    }
    return take;
}

static ssize_t fuzz_write(int fd, const void *buf, size_t n) {
    if (fd != SOCKET || sock.closed || sock.fin)
        abort();
    ssize_t put = piece(n);
    if (put < 0 && errno == EAGAIN)
        sock.eagain = 1;
    if (put > 0)
        append(&sock.out, buf, (size_t)put);
    return put;
}

static int fuzz_shutdown(int fd, int how) {
    if (fd != SOCKET || sock.closed || how != SHUT_WR)
        abort();
    sock.fin = 1;
    return 0;
}

static int fuzz_close(int fd) {
    if (fd != SOCKET || sock.closed)
        abort();
    sock.closed = 1;
    return 0;
}

/* ---- what SPEC §1-2 says the session answers, walked here without the floor's code --------- */

struct session {
    struct bytes out;
    int end;     /* END or QUIT: the END reply, then FIN */
    int refused; /* a length above the cap */
};

static void expect(const unsigned char *d, size_t n, struct session *s) {
    size_t at = 0;
    while (n - at >= 9) {
        uint64_t len = 0;
        for (int i = 1; i < 9; i++)
            len = len << 8 | d[at + i];
        if (len > CAP) {
            s->refused = 1;
            return;
        }
        if (d[at] == 4 || d[at] == 8) { /* END or QUIT: its body need not have come */
            static const unsigned char end[9] = {4};
            append(&s->out, end, sizeof end);
            s->end = 1;
            return;
        }
        if (n - at - 9 < len)
            return; /* EOF inside the body */
        unsigned char type = 2;
        append(&s->out, &type, 1);
        append(&s->out, d + at + 1, 8 + (size_t)len);
        at += 9 + (size_t)len;
    }
}

static void run(const unsigned char *data, size_t size, uint64_t seed, const struct session *want) {
    struct bytes out = sock.out;
    out.len = 0;
    memset(&sock, 0, sizeof sock);
    sock.in = data;
    sock.in_len = size;
    sock.rng = seed;
    sock.out = out;
    max_body = CAP;

    accept_all(LISTENER);
    if (!sock.accepted || sock.conn == NULL || sock.events != EPOLLIN)
        abort();
    while (!sock.closed) {
        if (sock.events & EPOLLOUT)
            on_writable(sock.conn);
        else
            on_readable(sock.conn);
    }

    const struct bytes *got = &sock.out;
    size_t need = want->out.len;
    if (want->refused && sock.eagain) /* one try at the replies before the refused frame */
        need = got->len;
    if (got->len != need || got->len > want->out.len ||
        (got->len != 0 && memcmp(got->p, want->out.p, got->len) != 0))
        abort();
    if (sock.fin != want->end)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct session want = {0};
    expect(data, size, &want);

    /* The pieces' sizes: FNV-1a of the input, never 0 (0 means whole reads and writes). */
    uint64_t seed = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        seed = (seed ^ data[i]) * 0x100000001b3ull;
    seed |= 1;

    run(data, size, 0, &want);
    run(data, size, seed, &want);
    free(want.out.p);
    return 0;
}
