/*
 * The send thread gathers every message waiting in the send queue (up to SEND_BATCH) into one
 * sendmsg(2): headers and bodies side by side in an iovec array, no copy. The receive thread
 * reads 256 KiB at a time, cuts the stream into messages (a body bigger than the buffer is
 * read straight into its own allocation) and hands them over a batch per read.
 */
#define _GNU_SOURCE
#include "connector.h"

#include "bounded_queue.h"
#include "frame.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define QUEUE_CAPACITY 256 /* messages per direction */
#define SEND_BATCH 64
#define RECV_BUFFER (256 * 1024)
#define RECV_BATCH 256
#define THREAD_STACK (256 * 1024)

struct connector {
    int fd;
    pthread_t send_thread, recv_thread;
    struct msg_queue sendq, recvq;
    enum connector_end end_how; /* set by connector_close before the send queue closes */
    bool closed;                /* connector_close or connector_abort was called */
    pthread_mutex_t error_lock;
    char error[160];
    atomic_bool failed;
    /* get's own batch, taken from the receive queue in one go (one consumer only) */
    struct comm_message taken[RECV_BATCH];
    size_t taken_len, taken_pos;
};

static void set_error(struct connector *c, const char *what, int err) {
    pthread_mutex_lock(&c->error_lock);
    if (!c->error[0]) {
        if (err)
            snprintf(c->error, sizeof c->error, "%s: %s", what, strerror(err));
        else
            snprintf(c->error, sizeof c->error, "%s", what);
    }
    atomic_store(&c->failed, true);
    pthread_mutex_unlock(&c->error_lock);
}

const char *connector_error(struct connector *c) {
    pthread_mutex_lock(&c->error_lock);
    const char *e = c->error;
    pthread_mutex_unlock(&c->error_lock);
    return e;
}

/* Sends the whole iovec array, resuming after partial writes. */
static int send_all(int fd, struct iovec *iov, int n) {
    while (n > 0) {
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)n};
        ssize_t put = sendmsg(fd, &mh, MSG_NOSIGNAL);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        size_t left = (size_t)put;
        while (n > 0 && left >= iov->iov_len) {
            left -= iov->iov_len;
            iov++;
            n--;
        }
        if (n > 0) {
            iov->iov_base = (char *)iov->iov_base + left;
            iov->iov_len -= left;
        }
    }
    return 0;
}

static void *send_main(void *arg) {
    struct connector *c = arg;
    struct comm_message batch[SEND_BATCH];
    unsigned char headers[SEND_BATCH][FRAME_HEADER_SIZE];
    struct iovec iov[2 * SEND_BATCH];
    size_t n;
    while ((n = mq_pop(&c->sendq, batch, SEND_BATCH)) > 0) {
        int k = 0;
        for (size_t i = 0; i < n; i++) {
            frame_encode(headers[i], batch[i].type, batch[i].len);
            iov[k++] = (struct iovec){headers[i], FRAME_HEADER_SIZE};
            if (batch[i].len > 0)
                iov[k++] = (struct iovec){batch[i].body, (size_t)batch[i].len};
        }
        int rc = send_all(c->fd, iov, k);
        int err = errno;
        for (size_t i = 0; i < n; i++)
            message_free(&batch[i]);
        if (rc != 0) {
            set_error(c, "send", err);
            /* Posters must not wait for a thread that is gone: close, then drop the rest. */
            mq_close(&c->sendq);
            while ((n = mq_pop(&c->sendq, batch, SEND_BATCH)) > 0)
                for (size_t i = 0; i < n; i++)
                    message_free(&batch[i]);
            return NULL;
        }
    }
    /* The queue was closed by connector_close (or abort): everything posted is out. */
    if (c->end_how == CONNECTOR_EOF)
        shutdown(c->fd, SHUT_WR);
    return NULL;
}

/* Reads exactly n bytes into p (for bodies larger than the receive buffer). */
static int read_full(int fd, unsigned char *p, size_t n) {
    while (n > 0) {
        ssize_t got = read(fd, p, n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return got == 0 ? 0 : -1;
        p += got;
        n -= (size_t)got;
    }
    return 1;
}

/* Hands a batch to the receive queue; false if nobody will take it any more (abort). */
static bool deliver(struct connector *c, struct comm_message *batch, size_t n) {
    size_t pushed = mq_push(&c->recvq, batch, n);
    for (size_t i = pushed; i < n; i++)
        message_free(&batch[i]);
    return pushed == n;
}

static void *recv_main(void *arg) {
    struct connector *c = arg;
    unsigned char *buf = malloc(RECV_BUFFER);
    struct comm_message batch[RECV_BATCH];
    size_t len = 0, n = 0;
    if (!buf) {
        set_error(c, "out of memory", 0);
        goto done;
    }
    for (;;) {
        ssize_t got = read(c->fd, buf + len, RECV_BUFFER - len);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            set_error(c, "receive", errno);
            goto done;
        }
        if (got == 0) {
            if (len > 0)
                set_error(c, "connection closed inside a message", 0);
            goto done; /* EOF between frames: the session is over */
        }
        len += (size_t)got;
        size_t pos = 0;
        while (len - pos >= FRAME_HEADER_SIZE) {
            struct frame_header h = frame_decode(buf + pos);
            if (h.type == FRAME_END)
                goto done; /* the server's last word */
            if (!frame_body_allowed(h.body_len, FRAME_DEFAULT_MAX_BODY)) {
                set_error(c, "reply body above the 64 MiB cap", 0);
                goto done;
            }
            size_t have = len - pos - FRAME_HEADER_SIZE;
            if (have < h.body_len && h.body_len <= RECV_BUFFER - FRAME_HEADER_SIZE)
                break; /* the rest of this frame fits in the buffer: read on */
            struct comm_message m = {.type = h.type, .len = h.body_len};
            if (h.body_len > 0 && !(m.body = malloc((size_t)h.body_len))) {
                set_error(c, "out of memory", 0);
                goto done;
            }
            if (have >= h.body_len) {
                if (h.body_len > 0)
                    memcpy(m.body, buf + pos + FRAME_HEADER_SIZE, (size_t)h.body_len);
                pos += FRAME_HEADER_SIZE + (size_t)h.body_len;
            } else {
                /* Bigger than the buffer: the rest goes straight into the body. */
                memcpy(m.body, buf + pos + FRAME_HEADER_SIZE, have);
                int rc = read_full(c->fd, m.body + have, (size_t)h.body_len - have);
                if (rc <= 0) {
                    message_free(&m);
                    set_error(c, rc == 0 ? "connection closed inside a message" : "receive",
                              rc == 0 ? 0 : errno);
                    goto done;
                }
                pos = len;
            }
            batch[n++] = m;
            if (n == RECV_BATCH) {
                if (!deliver(c, batch, n))
                    goto quit;
                n = 0;
            }
        }
        if (n > 0) {
            if (!deliver(c, batch, n))
                goto quit;
            n = 0;
        }
        memmove(buf, buf + pos, len - pos);
        len -= pos;
    }
done:
    if (n > 0)
        deliver(c, batch, n);
quit:
    free(buf);
    mq_close(&c->recvq);
    return NULL;
}

static int start_thread(pthread_t *t, void *(*fn)(void *), void *arg) {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, THREAD_STACK);
    int rc = pthread_create(t, &attr, fn, arg);
    pthread_attr_destroy(&attr);
    return rc;
}

struct connector *connector_open(const char *host, uint16_t port, char *err, size_t errlen) {
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port)};
    if (inet_pton(AF_INET, host, &addr.sin_addr) != 1) {
        snprintf(err, errlen, "bad host %s (an IPv4 address is expected)", host);
        return NULL;
    }
    struct connector *c = calloc(1, sizeof *c);
    if (!c || mq_init(&c->sendq, QUEUE_CAPACITY) != 0) {
        snprintf(err, errlen, "out of memory");
        free(c);
        return NULL;
    }
    if (mq_init(&c->recvq, QUEUE_CAPACITY) != 0) {
        snprintf(err, errlen, "out of memory");
        mq_destroy(&c->sendq);
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->error_lock, NULL);
    c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        snprintf(err, errlen, "connect to %s:%u: %s", host, port, strerror(errno));
        goto fail;
    }
    int one = 1;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (start_thread(&c->recv_thread, recv_main, c) != 0) {
        snprintf(err, errlen, "cannot start the receive thread");
        goto fail;
    }
    if (start_thread(&c->send_thread, send_main, c) != 0) {
        snprintf(err, errlen, "cannot start the send thread");
        shutdown(c->fd, SHUT_RDWR);
        mq_close(&c->recvq);
        pthread_join(c->recv_thread, NULL);
        goto fail;
    }
    return c;

fail:
    if (c->fd >= 0)
        close(c->fd);
    mq_destroy(&c->sendq);
    mq_destroy(&c->recvq);
    pthread_mutex_destroy(&c->error_lock);
    free(c);
    return NULL;
}

int connector_post(struct connector *c, struct comm_message *msg) {
    if (mq_push(&c->sendq, msg, 1) == 1)
        return 0;
    message_free(msg);
    return -1;
}

int connector_get(struct connector *c, struct comm_message *out) {
    if (c->taken_pos == c->taken_len) {
        c->taken_pos = 0;
        c->taken_len = mq_pop(&c->recvq, c->taken, RECV_BATCH);
        if (c->taken_len == 0)
            return atomic_load(&c->failed) ? -1 : 0;
    }
    *out = c->taken[c->taken_pos++];
    return 1;
}

void connector_close(struct connector *c, enum connector_end how) {
    if (how != CONNECTOR_EOF) {
        struct comm_message end = {.type = how == CONNECTOR_QUIT ? FRAME_QUIT : FRAME_END};
        connector_post(c, &end);
    }
    c->end_how = how; /* read by the send thread after it sees the queue closed */
    c->closed = true;
    mq_close(&c->sendq);
}

void connector_abort(struct connector *c) {
    set_error(c, "aborted", 0);
    c->closed = true;
    shutdown(c->fd, SHUT_RDWR); /* wakes both threads out of their system calls */
    mq_close(&c->sendq);
    mq_close(&c->recvq);
}

void connector_free(struct connector *c) {
    if (!c->closed)
        connector_abort(c); /* nobody ended the session: do not wait for the server */
    /* Replies nobody will take any more must not keep the receive thread waiting. */
    mq_close(&c->recvq);
    pthread_join(c->send_thread, NULL);
    pthread_join(c->recv_thread, NULL);
    for (size_t i = c->taken_pos; i < c->taken_len; i++)
        message_free(&c->taken[i]);
    close(c->fd);
    mq_destroy(&c->sendq);
    mq_destroy(&c->recvq);
    pthread_mutex_destroy(&c->error_lock);
    free(c);
}
