/*
 * The event loop: one thread, one epoll set holding the listening socket, a signalfd for
 * SIGTERM/SIGINT, and every client.
 *
 * Level-triggered, as redis's ae: a readable client gets one read per loop turn and whatever
 * it did not send yet waits for the next turn, which is the fairness rule (no client can hold
 * the loop by pipelining), and no turn ends with an extra read(2) that only returns EAGAIN as
 * edge-triggered draining would need. Replies are written at the end of each client's batch;
 * EPOLLOUT is registered only while a client has output the socket did not take.
 *
 * Timers need no timerfd: epoll_wait's timeout is the time left to the next 100 ms tick
 * (active expiry and background rehashing, as redis's serverCron at hz 10).
 */
#define _GNU_SOURCE
#include "server.h"

#include "connection.h"
#include "store.h"
#include "util.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define TICK_MS 100
#define EXPIRE_BUDGET_MS 25 /* a quarter of a tick, as redis's slow expire cycle */
#define REHASH_BUDGET_MS 1
#define MAX_EVENTS 1024

struct server_stats server_stats;

static int listen_fd = -1;
static int spare_fd = -1; /* kept to accept-and-close when out of descriptors */
/* epoll data.ptr tags for the two non-client descriptors */
static char listener_tag, signal_tag;

bool server_listen(struct in_addr host, int port) {
    inet_ntop(AF_INET, &host, server_stats.host, sizeof server_stats.host);
    listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (listen_fd < 0) {
        perror("redis-c: socket");
        return false;
    }
    int one = 1;
    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = host};
    if (bind(listen_fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        fprintf(stderr, "redis-c: bind %s:%d: %s\n", server_stats.host, port, strerror(errno));
        return false;
    }
    /* Backlog: every redis-benchmark test reconnects all its clients at once. */
    if (listen(listen_fd, 4096) != 0) {
        perror("redis-c: listen");
        return false;
    }
    server_stats.port = port;
    struct rlimit rl;
    server_stats.maxclients = 10000;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur > 64 &&
        rl.rlim_cur - 32 < server_stats.maxclients)
        server_stats.maxclients = (unsigned long)(rl.rlim_cur - 32);
    spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return true;
}

static void refuse(int fd, const char *reply) {
    ssize_t ignored = write(fd, reply, strlen(reply));
    (void)ignored;
    close(fd);
}

static void accept_clients(void) {
    for (;;) {
        struct sockaddr_in peer;
        socklen_t len = sizeof peer;
        int fd = accept4(listen_fd, (struct sockaddr *)&peer, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            if ((errno == EMFILE || errno == ENFILE) && spare_fd >= 0) {
                /* Out of descriptors: the listener would stay readable forever. Use the spare
                 * to take the connection off the queue and close it. */
                close(spare_fd);
                fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd >= 0)
                    close(fd);
                spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
                server_stats.rejected_connections++;
            }
            return; /* EAGAIN: the queue is empty */
        }
        if (server_stats.connected_clients >= server_stats.maxclients) {
            server_stats.rejected_connections++;
            refuse(fd, "-ERR max number of clients reached\r\n");
            continue;
        }
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        connection_new(fd, &peer);
    }
}

static void tick(void) {
    store_active_expire(EXPIRE_BUDGET_MS);
    store_rehash(REHASH_BUDGET_MS);
}

int server_run(void) {
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    sigprocmask(SIG_BLOCK, &stop, NULL);
    int sig_fd = signalfd(-1, &stop, SFD_NONBLOCK | SFD_CLOEXEC);
    int epfd = epoll_create1(EPOLL_CLOEXEC);
    if (sig_fd < 0 || epfd < 0) {
        perror("redis-c: epoll/signalfd");
        return 1;
    }
    connection_init(epfd);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = &listener_tag};
    epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev);
    ev.data.ptr = &signal_tag;
    epoll_ctl(epfd, EPOLL_CTL_ADD, sig_fd, &ev);

    server_stats.started_ms = monotonic_ms();
    long long next_tick = server_stats.started_ms + TICK_MS;
    static struct epoll_event events[MAX_EVENTS];
    for (;;) {
        long long now = monotonic_ms();
        int timeout = next_tick > now ? (int)(next_tick - now) : 0;
        int n = epoll_wait(epfd, events, MAX_EVENTS, timeout);
        if (n < 0 && errno != EINTR) {
            perror("redis-c: epoll_wait");
            return 1;
        }
        for (int i = 0; i < n; i++) {
            void *tag = events[i].data.ptr;
            uint32_t what = events[i].events;
            if (tag == &listener_tag) {
                accept_clients();
            } else if (tag == &signal_tag) {
                /* SIGTERM/SIGINT: stop accepting, close every client, exit 0. */
                close(listen_fd);
                connection_close_all();
                return 0;
            } else {
                struct client *c = tag;
                if ((what & EPOLLOUT) && !connection_writable(c))
                    continue;
                if (what & (EPOLLIN | EPOLLHUP | EPOLLERR))
                    connection_readable(c);
            }
        }
        now = monotonic_ms();
        if (now >= next_tick) {
            tick();
            next_tick = now + TICK_MS;
        }
    }
}
