/*
 * redis-baseline: the floor that every redis implementation is measured against. It speaks
 * just enough RESP2 to find where each request ends (a `*N` multibulk of N `$len` bulks, or an
 * inline line ended by `\n`) and answers every request with the fixed reply `+OK\r\n`. No
 * keyspace, no command table, no argument is ever copied: what it costs is what this machine's
 * kernel, sockets and one epoll loop cost for this traffic.
 *
 * The scanner is a byte-level state machine that keeps a few integers per connection instead
 * of buffering partial requests, so a request split across any number of reads costs nothing
 * extra. Replies need no buffer either: the output is `+OK\r\n` repeated, so a connection only
 * owes a byte count, written from a static block of repeated replies.
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

#define READ_CHUNK (16 * 1024)
#define REPLY "+OK\r\n"
#define REPLY_LEN 5
#define REPLIES_PER_BLOCK 3277         /* ~16 KiB of replies per write(2) */
#define MAX_OWED (64ull * 1024 * 1024) /* like the lab's output-buffer cap */

enum scan_state { REQ_START, INLINE, MB_COUNT, BULK_HEADER, BULK_LEN, BULK_BODY };

struct conn {
    uint8_t state;    /* enum scan_state */
    uint8_t negative; /* the number being read had a '-' */
    uint8_t open;
    int64_t number;   /* digits of the `*N` or `$len` line read so far */
    int64_t bulks;    /* bulks still to come in the current multibulk */
    int64_t skip;     /* body bytes (plus CRLF) of the current bulk still to come */
    uint64_t owed;    /* reply bytes not yet written */
    uint64_t written; /* reply bytes written so far: the phase within "+OK\r\n" */
};

static struct conn *conns;
static size_t nconns;
static int epfd;
static char replies[REPLIES_PER_BLOCK * REPLY_LEN + REPLY_LEN];

/* Counts the requests that end in buf[0..len); -1 on a stream that is not RESP. */
static long scan(struct conn *c, const char *buf, size_t len) {
    long done = 0;
    for (size_t i = 0; i < len; i++) {
        char ch = buf[i];
        switch (c->state) {
        case REQ_START:
            if (ch == '*') {
                c->state = MB_COUNT;
                c->number = 0;
                c->negative = 0;
            } else if (ch != '\r' && ch != '\n') {
                c->state = INLINE; /* empty lines are no request */
            }
            break;
        case INLINE: {
            const char *nl = memchr(buf + i, '\n', len - i);
            if (!nl)
                return done;
            i = (size_t)(nl - buf);
            c->state = REQ_START;
            done++;
            break;
        }
        case MB_COUNT:
        case BULK_LEN:
            if (ch >= '0' && ch <= '9') {
                if (c->number > (INT64_MAX - 9) / 10)
                    return -1;
                c->number = c->number * 10 + (ch - '0');
            } else if (ch == '-') {
                c->negative = 1;
            } else if (ch == '\n') {
                if (c->state == MB_COUNT) {
                    if (c->negative || c->number == 0) {
                        c->state = REQ_START; /* `*0` and `*-1` get no reply */
                    } else {
                        c->bulks = c->number;
                        c->state = BULK_HEADER;
                    }
                } else {
                    if (c->negative)
                        return -1;
                    c->skip = c->number + 2;
                    c->state = BULK_BODY;
                }
            } else if (ch != '\r') {
                return -1;
            }
            break;
        case BULK_HEADER:
            if (ch != '$')
                return -1;
            c->state = BULK_LEN;
            c->number = 0;
            c->negative = 0;
            break;
        case BULK_BODY: {
            size_t avail = len - i;
            if ((uint64_t)c->skip > avail) {
                c->skip -= (int64_t)avail;
                return done;
            }
            i += (size_t)c->skip - 1;
            if (--c->bulks > 0) {
                c->state = BULK_HEADER;
            } else {
                c->state = REQ_START;
                done++;
            }
            break;
        }
        }
    }
    return done;
}

static void conn_close(int fd) {
    conns[fd].open = 0;
    close(fd); /* also removes it from the epoll set */
}

/* Writes what the connection owes; -1 if the peer is gone. Waits for EPOLLOUT when full. */
static int conn_flush(int fd) {
    struct conn *c = &conns[fd];
    while (c->owed > 0) {
        size_t phase = c->written % REPLY_LEN;
        size_t n = c->owed < sizeof replies - phase ? c->owed : sizeof replies - phase;
        ssize_t put = write(fd, replies + phase, n);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                return -1;
            struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT, .data.fd = fd};
            epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
            return 0;
        }
        c->owed -= (uint64_t)put;
        c->written += (uint64_t)put;
    }
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
    epoll_ctl(epfd, EPOLL_CTL_MOD, fd, &ev);
    return 0;
}

/* One read per loop turn (level-triggered: the rest waits for the next turn, so a client with
 * a deep pipeline cannot starve the others), then one write for the whole batch. */
static void conn_readable(int fd) {
    static char buf[READ_CHUNK];
    struct conn *c = &conns[fd];
    ssize_t got = read(fd, buf, sizeof buf);
    if (got < 0 && (errno == EAGAIN || errno == EINTR))
        return;
    if (got <= 0) {
        conn_close(fd);
        return;
    }
    long n = scan(c, buf, (size_t)got);
    if (n < 0 || c->owed + (uint64_t)n * REPLY_LEN > MAX_OWED) {
        conn_close(fd);
        return;
    }
    int was_idle = c->owed == 0;
    c->owed += (uint64_t)n * REPLY_LEN;
    /* With output already pending, EPOLLOUT is armed and will carry the new bytes too. */
    if (was_idle && c->owed > 0 && conn_flush(fd) < 0)
        conn_close(fd);
}

static void accept_all(int lfd) {
    for (;;) {
        int fd = accept4(lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return; /* EAGAIN, or out of descriptors: try again on the next event */
        if ((size_t)fd >= nconns) {
            size_t n = nconns ? nconns : 1024;
            while (n <= (size_t)fd)
                n *= 2;
            struct conn *bigger = realloc(conns, n * sizeof *conns);
            if (!bigger) {
                close(fd);
                continue;
            }
            memset(bigger + nconns, 0, (n - nconns) * sizeof *conns);
            conns = bigger;
            nconns = n;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        conns[fd] = (struct conn){.state = REQ_START, .open = 1};
        struct epoll_event ev = {.events = EPOLLIN, .data.fd = fd};
        if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) != 0)
            conn_close(fd);
    }
}

static int usage(const char *why) {
    fprintf(stderr, "redis-baseline: %s (usage: redis-baseline --port PORT [--host ADDR])\n", why);
    return 2;
}

int main(int argc, char **argv) {
    long port = 0;
    struct in_addr host = {.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 1; i < argc; i += 2) {
        if (i + 1 >= argc)
            return usage("bad arguments");
        const char *val = argv[i + 1];
        if (strcmp(argv[i], "--port") == 0) {
            char *end;
            port = strtol(val, &end, 10);
            if (*val < '0' || *val > '9' || *end != '\0' || port < 1 || port > 65535)
                return usage("bad port");
        } else if (strcmp(argv[i], "--host") == 0) {
            /* An IPv4 literal only: "" would otherwise be taken as "any address". */
            if (inet_pton(AF_INET, val, &host) != 1)
                return usage("bad host (an IPv4 address is expected)");
        } else {
            return usage("bad arguments");
        }
    }
    if (port == 0)
        return usage("missing --port");

    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    for (size_t i = 0; i < sizeof replies; i += REPLY_LEN)
        memcpy(replies + i, REPLY, REPLY_LEN);

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
        perror("redis-baseline: listen");
        return 1;
    }
    epfd = epoll_create1(EPOLL_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.fd = lfd};
    epoll_ctl(epfd, EPOLL_CTL_ADD, lfd, &ev);
    ev.data.fd = sfd;
    epoll_ctl(epfd, EPOLL_CTL_ADD, sfd, &ev);

    struct epoll_event events[256];
    for (;;) {
        int n = epoll_wait(epfd, events, 256, -1);
        for (int i = 0; i < n; i++) {
            int fd = events[i].data.fd;
            if (fd == sfd) {
                for (size_t c = 0; c < nconns; c++)
                    if (conns[c].open)
                        close((int)c);
                return 0;
            }
            if (fd == lfd) {
                accept_all(lfd);
                continue;
            }
            if (!conns[fd].open)
                continue; /* closed earlier in this batch */
            if ((events[i].events & EPOLLOUT) && conn_flush(fd) < 0) {
                conn_close(fd);
                continue;
            }
            if (events[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
                conn_readable(fd);
        }
    }
}
