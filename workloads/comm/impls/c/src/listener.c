/*
 * Ownership: a session belongs to exactly one worker thread, which creates it, runs it and
 * frees it; nothing else touches it. The accept thread only passes the socket over, through
 * the worker's inbox (a mutex-guarded array) and a wake-up on the worker's eventfd.
 */
#define _GNU_SOURCE /* accept4 */
#include "listener.h"

#include "handler.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#define LISTEN_BACKLOG 4096
#define EVENTS_PER_WAIT 256

struct worker {
    pthread_t thread;
    struct listener *owner;
    int epfd;
    int wakefd; /* eventfd: new sockets in the inbox, or stop */
    pthread_mutex_t inbox_lock;
    int *inbox;
    size_t inbox_len, inbox_cap;
    atomic_size_t sessions;
    struct session *list; /* this worker's sessions, for shutdown */
};

struct listener {
    int lfd;
    int stopfd; /* eventfd that wakes the accept thread to stop */
    uint16_t port;
    uint64_t max_body;
    atomic_bool stopping;
    pthread_t accept_thread;
    int pool;
    struct worker *workers;
};

static void worker_close_session(struct worker *w, struct session *s) {
    if (s->prev)
        s->prev->next = s->next;
    else
        w->list = s->next;
    if (s->next)
        s->next->prev = s->prev;
    close(s->fd); /* also leaves the epoll set */
    session_destroy(s);
    atomic_fetch_sub_explicit(&w->sessions, 1, memory_order_relaxed);
}

static void worker_adopt(struct worker *w, int fd) {
    struct session *s = session_create(fd, w->owner->max_body);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = s};
    if (!s || epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev) != 0) {
        if (s)
            session_destroy(s);
        close(fd);
        atomic_fetch_sub_explicit(&w->sessions, 1, memory_order_relaxed);
        return;
    }
    s->events = EPOLLIN;
    s->next = w->list;
    if (w->list)
        w->list->prev = s;
    w->list = s;
}

/* Takes the sockets the accept thread left in the inbox. */
static void worker_drain_inbox(struct worker *w) {
    uint64_t n;
    if (read(w->wakefd, &n, sizeof n) < 0 && errno != EAGAIN)
        perror("comm-c-server: eventfd");
    pthread_mutex_lock(&w->inbox_lock);
    int *fds = w->inbox;
    size_t len = w->inbox_len;
    w->inbox = NULL;
    w->inbox_len = w->inbox_cap = 0;
    pthread_mutex_unlock(&w->inbox_lock);
    for (size_t i = 0; i < len; i++)
        worker_adopt(w, fds[i]);
    free(fds);
}

/* Applies the handler's verdict: the events to wait for next, or the end of the session. */
static void worker_apply(struct worker *w, struct session *s, enum session_verdict v) {
    if (v == SESSION_CLOSE) {
        worker_close_session(w, s);
        return;
    }
    uint32_t events = v == SESSION_WANT_READ    ? EPOLLIN
                      : v == SESSION_WANT_WRITE ? EPOLLOUT
                                                : EPOLLIN | EPOLLOUT;
    if (events != s->events) {
        s->events = events;
        struct epoll_event ev = {.events = events, .data.ptr = s};
        epoll_ctl(w->epfd, EPOLL_CTL_MOD, s->fd, &ev);
    }
}

static void *worker_main(void *arg) {
    struct worker *w = arg;
    struct epoll_event events[EVENTS_PER_WAIT];
    while (!atomic_load_explicit(&w->owner->stopping, memory_order_acquire)) {
        int n = epoll_wait(w->epfd, events, EVENTS_PER_WAIT, -1);
        for (int i = 0; i < n; i++) {
            if (events[i].data.ptr == w) {
                worker_drain_inbox(w);
                continue;
            }
            /* A session is only closed while handling its own event, and epoll reports a
             * socket once per wait, so the pointer is live. */
            struct session *s = events[i].data.ptr;
            uint32_t got = events[i].events;
            /* Errors and hang-ups go to whichever side the session waits on, where the next
             * system call reports them. Output first: it frees the buffer. */
            bool out = (s->events & EPOLLOUT) && (got & (EPOLLOUT | EPOLLERR | EPOLLHUP));
            bool in = (s->events & EPOLLIN) && (got & (EPOLLIN | EPOLLERR | EPOLLHUP));
            if (!out && !in)
                continue;
            enum session_verdict v = out ? session_on_writable(s) : SESSION_WANT_READ;
            if (in && v != SESSION_CLOSE)
                v = session_on_readable(s);
            worker_apply(w, s, v);
        }
    }
    while (w->list)
        worker_close_session(w, w->list);
    return NULL;
}

/* The worker with the fewest sessions: a rough balance that also holds under churn. */
static struct worker *pick_worker(struct listener *l) {
    struct worker *best = &l->workers[0];
    size_t least = atomic_load_explicit(&best->sessions, memory_order_relaxed);
    for (int i = 1; i < l->pool && least > 0; i++) {
        size_t n = atomic_load_explicit(&l->workers[i].sessions, memory_order_relaxed);
        if (n < least) {
            least = n;
            best = &l->workers[i];
        }
    }
    return best;
}

static void hand_over(struct worker *w, int fd) {
    atomic_fetch_add_explicit(&w->sessions, 1, memory_order_relaxed);
    pthread_mutex_lock(&w->inbox_lock);
    if (w->inbox_len == w->inbox_cap) {
        size_t cap = w->inbox_cap ? 2 * w->inbox_cap : 16;
        int *bigger = realloc(w->inbox, cap * sizeof *bigger);
        if (!bigger) {
            pthread_mutex_unlock(&w->inbox_lock);
            atomic_fetch_sub_explicit(&w->sessions, 1, memory_order_relaxed);
            close(fd);
            return;
        }
        w->inbox = bigger;
        w->inbox_cap = cap;
    }
    w->inbox[w->inbox_len++] = fd;
    pthread_mutex_unlock(&w->inbox_lock);
    uint64_t one = 1;
    if (write(w->wakefd, &one, sizeof one) < 0)
        perror("comm-c-server: eventfd");
}

static void *accept_main(void *arg) {
    struct listener *l = arg;
    struct pollfd fds[2] = {{.fd = l->lfd, .events = POLLIN}, {.fd = l->stopfd, .events = POLLIN}};
    for (;;) {
        if (poll(fds, 2, -1) < 0 && errno != EINTR)
            break;
        if (atomic_load_explicit(&l->stopping, memory_order_acquire))
            break;
        for (;;) {
            int fd = accept4(l->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0) {
                if (errno == EMFILE || errno == ENFILE) {
                    /* Out of descriptors: the queue stays readable, so back off briefly
                     * instead of spinning. */
                    poll(NULL, 0, 10);
                }
                break;
            }
            int one = 1;
            setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
            hand_over(pick_worker(l), fd);
        }
    }
    return NULL;
}

static void free_listener(struct listener *l, int started_workers) {
    for (int i = 0; i < started_workers; i++) {
        struct worker *w = &l->workers[i];
        close(w->epfd);
        close(w->wakefd);
        for (size_t j = 0; j < w->inbox_len; j++)
            close(w->inbox[j]);
        free(w->inbox);
        pthread_mutex_destroy(&w->inbox_lock);
    }
    free(l->workers);
    if (l->lfd >= 0)
        close(l->lfd);
    if (l->stopfd >= 0)
        close(l->stopfd);
    free(l);
}

static int open_socket(struct listener *l, struct in_addr host, uint16_t port) {
    l->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (l->lfd < 0)
        return -1;
    int one = 1;
    setsockopt(l->lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = host};
    socklen_t len = sizeof addr;
    if (bind(l->lfd, (struct sockaddr *)&addr, sizeof addr) != 0 ||
        listen(l->lfd, LISTEN_BACKLOG) != 0 ||
        getsockname(l->lfd, (struct sockaddr *)&addr, &len) != 0)
        return -1;
    l->port = ntohs(addr.sin_port);
    return 0;
}

/* The worker's descriptors and lock; its thread is started separately. */
static int worker_setup(struct listener *l, struct worker *w) {
    w->owner = l;
    atomic_init(&w->sessions, 0);
    w->epfd = epoll_create1(EPOLL_CLOEXEC);
    w->wakefd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    struct epoll_event ev = {.events = EPOLLIN, .data.ptr = w};
    if (w->epfd < 0 || w->wakefd < 0 || epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->wakefd, &ev) != 0) {
        if (w->epfd >= 0)
            close(w->epfd);
        if (w->wakefd >= 0)
            close(w->wakefd);
        return -1;
    }
    pthread_mutex_init(&w->inbox_lock, NULL);
    return 0;
}

/* Stops and joins the first `running` workers. */
static void stop_workers(struct listener *l, int running) {
    atomic_store_explicit(&l->stopping, true, memory_order_release);
    uint64_t one = 1;
    for (int i = 0; i < running; i++)
        if (write(l->workers[i].wakefd, &one, sizeof one) < 0)
            perror("comm-c-server: eventfd");
    for (int i = 0; i < running; i++)
        pthread_join(l->workers[i].thread, NULL);
}

struct listener *listener_start(struct in_addr host, uint16_t port, int pool, uint64_t max_body) {
    struct listener *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->lfd = l->stopfd = -1;
    l->max_body = max_body;
    l->pool = pool;
    atomic_init(&l->stopping, false);
    l->workers = calloc((size_t)pool, sizeof *l->workers);
    l->stopfd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (!l->workers || l->stopfd < 0 || open_socket(l, host, port) != 0) {
        int err = errno;
        char where[INET_ADDRSTRLEN] = "?";
        inet_ntop(AF_INET, &host, where, sizeof where);
        fprintf(stderr, "comm-c-server: cannot listen on %s:%u: %s\n", where, port, strerror(err));
        free_listener(l, 0);
        return NULL;
    }
    int ready = 0, running = 0;
    for (; ready < pool; ready++)
        if (worker_setup(l, &l->workers[ready]) != 0)
            goto fail;
    for (; running < pool; running++)
        if (pthread_create(&l->workers[running].thread, NULL, worker_main, &l->workers[running]) !=
            0)
            goto fail;
    if (pthread_create(&l->accept_thread, NULL, accept_main, l) != 0)
        goto fail;
    return l;

fail:
    fprintf(stderr, "comm-c-server: cannot start the server threads\n");
    stop_workers(l, running);
    free_listener(l, ready);
    return NULL;
}

uint16_t listener_port(const struct listener *l) {
    return l->port;
}

void listener_stop(struct listener *l) {
    atomic_store_explicit(&l->stopping, true, memory_order_release);
    uint64_t one = 1;
    if (write(l->stopfd, &one, sizeof one) < 0)
        perror("comm-c-server: eventfd");
    pthread_join(l->accept_thread, NULL);
    stop_workers(l, l->pool);
    free_listener(l, l->pool);
}
