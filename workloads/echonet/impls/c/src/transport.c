#include "transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct in_addr transport_group(void) {
    struct in_addr g;
    inet_pton(AF_INET, TRANSPORT_GROUP, &g);
    return g;
}

static struct sockaddr_in sockaddr_of(struct in_addr addr, uint16_t port) {
    return (struct sockaddr_in){.sin_family = AF_INET, .sin_port = htons(port), .sin_addr = addr};
}

enum transport_error transport_open(const struct transport_config *cfg, int *fd, char *err,
                                    size_t errlen, char *warn, size_t warnlen) {
    char where[INET_ADDRSTRLEN + 8];
    char addr[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &cfg->bind, addr, sizeof addr);
    snprintf(where, sizeof where, "%s:%u", addr, cfg->port);
    warn[0] = '\0';
    *fd = -1;

    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (s < 0) {
        snprintf(err, errlen, "socket: %s", strerror(errno));
        return TRANSPORT_FAILED;
    }
    /* SPEC §2: a wildcard bind shares port 3610 with the host's other stacks (they set it too);
     * a unicast bind does not, so a second program on the same address and port is refused. */
    int reuse = 1;
    if (cfg->bind.s_addr == htonl(INADDR_ANY) &&
        setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &reuse, sizeof reuse) != 0) {
        snprintf(err, errlen, "SO_REUSEADDR: %s", strerror(errno));
        close(s);
        return TRANSPORT_FAILED;
    }
    struct sockaddr_in sa = sockaddr_of(cfg->bind, cfg->port);
    if (bind(s, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        snprintf(err, errlen, "cannot bind %s: %s", where, strerror(e));
        close(s);
        return e == EADDRINUSE ? TRANSPORT_IN_USE : TRANSPORT_FAILED;
    }
    /* Multicast leaves on --ifaddr's interface only, never past the first router, and comes back
     * to this host's other stacks (each ignores its own). */
    unsigned char ttl = 1, loop = 1;
    int all = 0;
    if (setsockopt(s, IPPROTO_IP, IP_MULTICAST_IF, &cfg->ifaddr, sizeof cfg->ifaddr) != 0 ||
        setsockopt(s, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl) != 0 ||
        setsockopt(s, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop) != 0 ||
        /* Only the groups this socket joined: Linux otherwise delivers any group's datagrams for
         * this port to a socket bound to 0.0.0.0 once some socket of the host joined it. */
        setsockopt(s, IPPROTO_IP, IP_MULTICAST_ALL, &all, sizeof all) != 0) {
        snprintf(err, errlen, "multicast options on %s: %s", where, strerror(errno));
        close(s);
        return TRANSPORT_FAILED;
    }
    if (cfg->join) {
        struct ip_mreq mreq = {.imr_multiaddr = transport_group(), .imr_interface = cfg->ifaddr};
        if (setsockopt(s, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof mreq) != 0) {
            char ifaddr[INET_ADDRSTRLEN];
            inet_ntop(AF_INET, &cfg->ifaddr, ifaddr, sizeof ifaddr);
            snprintf(warn, warnlen, "cannot join %s on %s: %s (unicast only)", TRANSPORT_GROUP,
                     ifaddr, strerror(errno));
        }
    }
    *fd = s;
    return TRANSPORT_OK;
}

int transport_send(int fd, struct in_addr addr, uint16_t port, const void *buf, size_t len) {
    struct sockaddr_in to = sockaddr_of(addr, port);
    for (;;) {
        ssize_t n = sendto(fd, buf, len, 0, (struct sockaddr *)&to, sizeof to);
        if (n >= 0)
            return 0;
        if (errno != EINTR)
            return -1;
    }
}

size_t transport_start_inf(uint8_t out[32], const uint8_t instance_list[4]) {
    struct frame_writer w;
    frame_writer_begin(&w, out, 32, 1, EOJ_NODE_PROFILE, EOJ_NODE_PROFILE, ESV_INF);
    frame_writer_list(&w);
    frame_writer_prop(&w, 0xD5, 4, instance_list);
    return frame_writer_end(&w);
}

int transport_send_start_inf(int fd, uint16_t port, const uint8_t instance_list[4]) {
    uint8_t buf[32];
    size_t len = transport_start_inf(buf, instance_list);
    return transport_send(fd, transport_group(), port, buf, len);
}

int transport_batch_init(struct transport_batch *b) {
    memset(b, 0, sizeof *b);
    /* Pages are touched only as datagrams and replies fill them, so the size costs little. */
    b->rx = malloc(TRANSPORT_BATCH * sizeof *b->rx);
    b->arena = malloc(TRANSPORT_ARENA);
    if (!b->rx || !b->arena) {
        free(b->rx);
        free(b->arena);
        return -1;
    }
    for (unsigned i = 0; i < TRANSPORT_BATCH; i++)
        b->in_iov[i] = (struct iovec){.iov_base = b->rx[i], .iov_len = sizeof b->rx[i]};
    return 0;
}

int transport_receive(int fd, struct transport_batch *b) {
    for (unsigned i = 0; i < TRANSPORT_BATCH; i++) {
        /* recvmmsg writes back the lengths and flags, so each call sets them again. */
        b->in[i].msg_hdr = (struct msghdr){
            .msg_name = &b->from[i],
            .msg_namelen = sizeof b->from[i],
            .msg_iov = &b->in_iov[i],
            .msg_iovlen = 1,
        };
    }
    /* MSG_WAITFORONE: block for the first datagram, then take only what is already queued. */
    return recvmmsg(fd, b->in, TRANSPORT_BATCH, MSG_WAITFORONE, NULL);
}

uint8_t *transport_reply_space(int fd, struct transport_batch *b, size_t bound, size_t *cap,
                               uint64_t *sent, uint64_t *errors) {
    size_t need = bound < FRAME_MAX_DATAGRAM ? bound : FRAME_MAX_DATAGRAM;
    if (TRANSPORT_ARENA - b->arena_used < need)
        *sent += transport_flush(fd, b, errors);
    size_t room = TRANSPORT_ARENA - b->arena_used;
    *cap = room < FRAME_MAX_DATAGRAM ? room : FRAME_MAX_DATAGRAM;
    return b->arena + b->arena_used;
}

void transport_queue_reply(struct transport_batch *b, unsigned i, size_t len) {
    unsigned k = b->replies++;
    b->out_iov[k] = (struct iovec){.iov_base = b->arena + b->arena_used, .iov_len = len};
    b->arena_used += len;
    b->out[k].msg_hdr = (struct msghdr){
        .msg_name = &b->from[i],
        .msg_namelen = sizeof b->from[i],
        .msg_iov = &b->out_iov[k],
        .msg_iovlen = 1,
    };
}

unsigned transport_flush(int fd, struct transport_batch *b, uint64_t *errors) {
    unsigned sent = 0, at = 0;
    while (at < b->replies) {
        int n = sendmmsg(fd, b->out + at, b->replies - at, 0);
        if (n > 0) {
            sent += (unsigned)n;
            at += (unsigned)n;
        } else if (n < 0 && errno == EINTR) {
            continue;
        } else {
            /* sendmmsg fails only on the first message it could not send: count that one and
             * go on with the rest, so one bad destination costs one reply. */
            ++*errors;
            at++;
        }
    }
    b->replies = 0;
    b->arena_used = 0;
    return sent;
}
