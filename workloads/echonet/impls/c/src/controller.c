#include "controller.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static int64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

enum transport_error controller_open(struct controller *c, const struct controller_config *cfg,
                                     char *err, size_t errlen) {
    c->port = cfg->port;
    c->timeout_ms = cfg->timeout_ms;
    c->retries = cfg->retries;
    c->next_tid = 1;
    c->ignored = 0;
    c->resends = 0;
    c->timeo_us = 0; /* the socket's default: block */
    c->send_errno = 0;
    /* A controller joins no group: discovery answers come back by unicast. */
    struct transport_config tc = {
        .bind = cfg->bind, .ifaddr = cfg->ifaddr, .port = cfg->port, .join = false};
    char warn[8];
    return transport_open(&tc, &c->fd, err, errlen, warn, sizeof warn);
}

uint16_t controller_next_tid(struct controller *c) {
    uint16_t tid = c->next_tid++;
    if (c->next_tid == 0)
        c->next_tid = 1;
    return tid;
}

bool controller_answers(uint8_t request_esv, uint8_t reply_esv) {
    switch (request_esv) {
    case ESV_GET:
        return reply_esv == ESV_GET_RES || reply_esv == ESV_GET_SNA;
    case ESV_SETC:
        return reply_esv == ESV_SET_RES || reply_esv == ESV_SETC_SNA;
    case ESV_SETI:
        return reply_esv == ESV_SETI_SNA;
    case ESV_SETGET:
        return reply_esv == ESV_SETGET_RES || reply_esv == ESV_SETGET_SNA;
    case ESV_INF_REQ:
        return reply_esv == ESV_INF || reply_esv == ESV_INF_SNA;
    case ESV_INFC:
        return reply_esv == ESV_INFC_RES;
    default:
        return false;
    }
}

/*
 * Waits for one datagram until `deadline` (µs, monotonic). The wait is SO_RCVTIMEO on a blocking
 * recvfrom, so a request costs one sendto and one recvfrom; the option is set again only when
 * the time left changes, which in the common case (the first datagram is the reply) it does not.
 * 1: a datagram of *len bytes from *from; 0: the deadline passed; -1: the socket failed.
 */
static int receive_until(struct controller *c, int64_t deadline, bool first, size_t *len,
                         struct in_addr *from, bool *truncated) {
    for (;;) {
        long want = first ? (long)c->timeout_ms * 1000 : (long)(deadline - now_us());
        first = false;
        if (want <= 0) /* a zero SO_RCVTIMEO would mean "wait forever" */
            return 0;
        if (want != c->timeo_us) {
            struct timeval tv = {.tv_sec = want / 1000000, .tv_usec = want % 1000000};
            if (setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv) != 0)
                return -1;
            c->timeo_us = want;
        }
        struct sockaddr_in sa;
        socklen_t salen = sizeof sa;
        ssize_t n = recvfrom(c->fd, c->rx, sizeof c->rx, MSG_TRUNC, (struct sockaddr *)&sa, &salen);
        if (n >= 0) {
            *truncated = (size_t)n > sizeof c->rx; /* MSG_TRUNC: the real length */
            *len = *truncated ? sizeof c->rx : (size_t)n;
            *from = sa.sin_addr;
            return 1;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return 0;
        /* EINTR, or an ICMP error of an earlier send: wait on for the time left. */
        if (errno != EINTR && errno != ECONNREFUSED && errno != EHOSTUNREACH &&
            errno != ENETUNREACH)
            return -1;
    }
}

enum controller_result controller_request(struct controller *c, struct in_addr host,
                                          const uint8_t *req, size_t len, unsigned max_attempts,
                                          unsigned *attempts) {
    uint16_t tid = (uint16_t)(req[2] << 8 | req[3]);
    uint8_t esv = req[10];
    for (unsigned attempt = 1; attempt <= max_attempts; attempt++) {
        *attempts = attempt;
        if (attempt > 1)
            c->resends++;
        /* A send the network refused is treated as a lost datagram: its attempt waits out its
         * timeout like any other, so retries keep their pace. */
        if (transport_send(c->fd, host, c->port, req, len) != 0)
            c->send_errno = errno;
        int64_t deadline = now_us() + (int64_t)c->timeout_ms * 1000;
        for (bool first = true;; first = false) {
            size_t n;
            struct in_addr from;
            bool truncated;
            int r = receive_until(c, deadline, first, &n, &from, &truncated);
            if (r < 0)
                return CONTROLLER_FAILED;
            if (r == 0)
                break;
            if (!truncated && frame_decode(c->rx, n, &c->reply) == FRAME_OK &&
                c->reply.tid == tid && from.s_addr == host.s_addr &&
                controller_answers(esv, c->reply.esv))
                return CONTROLLER_ANSWERED;
            c->ignored++;
        }
    }
    return CONTROLLER_NO_REPLY;
}

void controller_read_instances(const struct frame *f, struct controller_node *node) {
    node->count = 0;
    for (unsigned i = 0; i < f->opc; i++) {
        const struct frame_prop *p = &f->props[i];
        if (p->epc != 0xD6 || p->pdc == 0)
            continue;
        unsigned n = p->edt[0], present = (p->pdc - 1u) / 3;
        node->count = (uint8_t)(n < present ? n : present);
        for (unsigned k = 0; k < node->count; k++) {
            const uint8_t *e = p->edt + 1 + 3 * k;
            node->instances[k] = (uint32_t)e[0] << 16 | (uint32_t)e[1] << 8 | e[2];
        }
        return;
    }
}

static bool known(const struct controller_discovery *d, struct in_addr host) {
    for (size_t i = 0; i < d->count; i++)
        if (d->nodes[i].host.s_addr == host.s_addr)
            return true;
    return false;
}

static int by_address(const void *a, const void *b) {
    uint32_t x = ntohl(((const struct controller_node *)a)->host.s_addr);
    uint32_t y = ntohl(((const struct controller_node *)b)->host.s_addr);
    return (x > y) - (x < y);
}

int controller_discover(struct controller *c, unsigned expect, unsigned wait_ms,
                        struct controller_discovery *d) {
    *d = (struct controller_discovery){0};
    uint8_t req[16];
    struct frame_writer w;
    uint16_t tid = controller_next_tid(c);
    frame_writer_begin(&w, req, sizeof req, tid, EOJ_CONTROLLER, EOJ_NODE_PROFILE, ESV_GET);
    frame_writer_list(&w);
    frame_writer_prop(&w, 0xD6, 0, 0);
    size_t len = frame_writer_end(&w);

    unsigned rounds = expect ? 1 + c->retries : 1;
    unsigned round_ms = expect ? c->timeout_ms : wait_ms;
    int64_t start = now_us(), last = start;
    bool enough = false;
    for (unsigned round = 0; round < rounds && !enough; round++) {
        if (transport_send(c->fd, transport_group(), c->port, req, len) != 0)
            return -1;
        d->attempts++;
        int64_t deadline = now_us() + (int64_t)round_ms * 1000;
        for (;;) {
            size_t n;
            struct in_addr from;
            bool truncated;
            /* Each round's wait differs from the request timeout, so it is always computed. */
            int r = receive_until(c, deadline, false, &n, &from, &truncated);
            if (r < 0)
                return -1;
            if (r == 0)
                break;
            if (truncated || frame_decode(c->rx, n, &c->reply) != FRAME_OK || c->reply.tid != tid ||
                !controller_answers(ESV_GET, c->reply.esv) || known(d, from)) {
                c->ignored++;
                continue;
            }
            if (d->count == d->cap) {
                size_t cap = d->cap ? 2 * d->cap : 16;
                struct controller_node *nodes = realloc(d->nodes, cap * sizeof *nodes);
                if (!nodes)
                    return -1;
                d->nodes = nodes;
                d->cap = cap;
            }
            struct controller_node *node = &d->nodes[d->count++];
            node->host = from;
            node->eoj = c->reply.seoj;
            controller_read_instances(&c->reply, node);
            last = now_us();
            if (expect && d->count >= expect) {
                enough = true;
                break;
            }
        }
    }
    /* From the first send to the last node needed; with none, the whole wait. */
    d->elapsed_s = (double)((d->count ? last : now_us()) - start) / 1e6;
    if (d->count > 1)
        qsort(d->nodes, d->count, sizeof *d->nodes, by_address);
    return expect && !enough ? 1 : 0;
}
