/*
 * comm-baseline: the floor every comm server is measured against. It honours the wire format
 * and the session rules of SPEC.md and does nothing else: one thread, one epoll loop, and the
 * echo done in place. Each connection owns one buffer; bytes are read into it, every complete
 * frame header has its type byte overwritten with REPLY, and the same bytes are written back
 * from the same buffer. No body is ever copied in user space, and a whole batch of replies goes
 * out in one write(2).
 *
 * Why one thread: the driver pins the server to one CPU. A second thread (or one thread per
 * connection) could only add context switches and wake-ups on that CPU; one loop serving
 * every ready socket in turn is the least the kernel can be asked to do for this traffic.
 * --pool is accepted for command-line compatibility and ignored for that reason.
 *
 * A frame larger than the buffer is read whole: the buffer grows to hold it (bounded by
 * --max-body) and keeps that size for the rest of the connection. Frames are echoed only when
 * complete, so EOF inside one sends nothing. After END the socket is half-closed and drained
 * rather than closed, so input sent after END cannot turn the close into an RST.
 */
#define _GNU_SOURCE /* accept4 */
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

/* Per connection to start with: 32 replies of 4 KiB per write. (fuzz/server.c sets a smaller
 * one, so that its small inputs reach the buffer's growth.) */
#ifndef BUF_SIZE
#define BUF_SIZE (128 * 1024)
#endif
#define HEADER 9
#define T_REPLY 2
#define T_END 4
#define T_QUIT 8

enum conn_state {
    OPEN,
    ENDING,   /* END/QUIT seen: its END reply (written in place) is the last output */
    DRAINING, /* END reply and FIN sent: input dropped until the peer closes, because closing
                 with unread input sends RST, which can destroy replies still in flight */
    REFUSED,  /* a length above the cap: one try at the replies owed, then close */
};
#define DRAIN_LIMIT (16u << 20)

struct conn {
    int fd;
    int state;    /* enum conn_state */
    size_t head;  /* buf[head..ready) is echo not yet written */
    size_t ready; /* end of the bytes parsed and ready to go back */
    size_t len;   /* end of the bytes read */
    size_t cap;   /* size of buf */
    unsigned char *buf;
};

static int epfd;
static uint64_t max_body = 64ull * 1024 * 1024;

static void conn_close(struct conn *c) {
    close(c->fd); /* also leaves the epoll set */
    free(c->buf);
    free(c);
}

/* Walks the frames in buf[ready..len), marking what is ready to go back. */
static void parse(struct conn *c) {
    if (c->state != OPEN)
        return;
    for (;;) {
        size_t avail = c->len - c->ready;
        if (avail < HEADER)
            return;
        unsigned char *h = c->buf + c->ready;
        uint64_t body = 0;
        for (int i = 1; i < HEADER; i++)
            body = body << 8 | h[i];
        if (body > max_body) {
            fprintf(stderr, "comm-baseline: body of %llu bytes above --max-body %llu: closing\n",
                    (unsigned long long)body, (unsigned long long)max_body);
            c->len = c->ready; /* the replies before it get one try, then close */
            c->state = REFUSED;
            return;
        }
        if (h[0] == T_END || h[0] == T_QUIT) {
            /* The END reply is written over the END frame's own header; anything after it
             * (its body, later frames) is dropped. */
            memset(h + 1, 0, HEADER - 1);
            h[0] = T_END;
            c->ready += HEADER;
            c->len = c->ready;
            c->state = ENDING;
            return;
        }
        if (avail - HEADER < body) {
            /* Incomplete. It moves to the front of the buffer once the replies before it
             * are written; if it would not fit even there, the buffer grows to its size
             * (within the cap). */
            size_t need = HEADER + (size_t)body;
            if (need > c->cap) {
                unsigned char *bigger = realloc(c->buf, need);
                if (!bigger) {
                    c->len = c->ready; /* out of memory: answer what came before, close */
                    c->state = REFUSED;
                    return;
                }
                c->buf = bigger;
                c->cap = need;
            }
            return;
        }
        h[0] = T_REPLY; /* complete: echo it whole */
        c->ready += HEADER + (size_t)body;
    }
}

/* Writes the pending echo; 1 when it all went, 0 when the socket is full (EPOLLOUT armed,
 * reading paused), -1 when the connection is over (peer gone, or a refused length). */
static int flush(struct conn *c) {
    while (c->head < c->ready) {
        ssize_t put = write(c->fd, c->buf + c->head, c->ready - c->head);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN || c->state == REFUSED)
                return -1;
            struct epoll_event ev = {.events = EPOLLOUT, .data.ptr = c};
            epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
            return 0;
        }
        c->head += (size_t)put;
    }
    if (c->state == REFUSED)
        return -1;
    if (c->state == ENDING) {
        shutdown(c->fd, SHUT_WR); /* FIN after the END reply */
        c->state = DRAINING;
        c->head = c->ready = c->len = 0;
        return 1;
    }
    /* All written: keep only an incomplete frame, moved to the front. */
    if (c->head > 0) {
        memmove(c->buf, c->buf + c->head, c->len - c->head);
        c->len -= c->head;
        c->ready -= c->head;
        c->head = 0;
    }
    return 1;
}

static void on_readable(struct conn *c) {
    if (c->state == DRAINING) {
        ssize_t got = read(c->fd, c->buf, c->cap);
        if (got < 0 && (errno == EAGAIN || errno == EINTR))
            return;
        c->len += got > 0 ? (size_t)got : 0; /* counts the bytes dropped */
        if (got <= 0 || c->len > DRAIN_LIMIT)
            conn_close(c);
        return;
    }
    ssize_t got = read(c->fd, c->buf + c->len, c->cap - c->len);
    if (got < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (got <= 0) { /* EOF (between frames or inside one) or error: nothing more to say */
        conn_close(c);
        return;
    }
    c->len += (size_t)got;
    parse(c);
    if (flush(c) < 0)
        conn_close(c);
}

static void on_writable(struct conn *c) {
    int r = flush(c);
    if (r < 0) {
        conn_close(c);
        return;
    }
    if (r == 0)
        return;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
    epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev);
    /* Frames already buffered behind the ones just written. */
    parse(c);
    if (flush(c) < 0)
        conn_close(c);
}

static void accept_all(int lfd) {
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or out of descriptors: try again on the next event */
        struct conn *c = malloc(sizeof *c);
        unsigned char *buf = malloc(BUF_SIZE);
        if (!c || !buf) {
            free(c);
            free(buf);
            close(fd);
            continue;
        }
        *c = (struct conn){.fd = fd, .cap = BUF_SIZE, .buf = buf};
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct epoll_event ev = {.events = EPOLLIN, .data.ptr = c};
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
            conn_close(c);
    }
}

static int usage(const char *why) {
    fprintf(stderr,
            "comm-baseline: %s (usage: comm-baseline --port PORT [--host ADDR] [--pool N] "
            "[--max-body BYTES])\n",
            why);
    return 2;
}

static int parse_number(const char *s, unsigned long long lo, unsigned long long hi,
                        unsigned long long *out) {
    char *end;
    errno = 0;
    if (*s < '0' || *s > '9')
        return -1;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

int main(int argc, char **argv) {
    unsigned long long port = 0, pool, cap;
    struct in_addr host = {.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            return usage("missing value");
        if (strcmp(argv[i], "--port") == 0) {
            if (parse_number(argv[i + 1], 1, 65535, &port))
                return usage("bad --port");
        } else if (strcmp(argv[i], "--host") == 0) {
            /* An IPv4 literal only: "" would otherwise be taken as "any address". */
            if (inet_pton(AF_INET, argv[i + 1], &host) != 1)
                return usage("bad --host (an IPv4 address is expected)");
        } else if (strcmp(argv[i], "--pool") == 0) {
            if (parse_number(argv[i + 1], 1, 4096, &pool))
                return usage("bad --pool");
        } else if (strcmp(argv[i], "--max-body") == 0) {
            if (parse_number(argv[i + 1], 0, UINT64_MAX, &cap))
                return usage("bad --max-body");
            max_body = cap;
        } else {
            return usage("unknown argument");
        }
    }
    if (port == 0)
        return usage("--port is required");

    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    /* SIGTERM/SIGINT arrive through a signalfd in the same epoll set: no async handler. */
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    signal(SIGPIPE, SIG_IGN);
    int sfd = signalfd(-1, &stop, SFD_NONBLOCK | SFD_CLOEXEC);

    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = host};
    if (bind(lfd, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(lfd, 4096) != 0) {
        perror("comm-baseline: listen");
        return 1;
    }
    epfd = epoll_create1(EPOLL_CLOEXEC);
    /* The listener and the signalfd are told apart from connections by their data.ptr. */
    static int lfd_tag, sfd_tag;
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &lfd_tag};
    epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
    ev.data.ptr = &sfd_tag;
    epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev);

    struct epoll_event events[256];
    for (;;) {
        int n = epoll_wait(epfd, events, 256, -1);
        for (int i = 0; i < n; i++) {
            void *p = events[i].data.ptr;
            if (p == &sfd_tag)
                return 0; /* exit closes every socket */
            if (p == &lfd_tag) {
                accept_all(lfd);
                continue;
            }
            /* A connection is only ever closed by its own event, so p is live here. */
            struct conn *c = p;
            if (events[i].events & EPOLLOUT)
                on_writable(c);
            else
                on_readable(c);
        }
    }
}
