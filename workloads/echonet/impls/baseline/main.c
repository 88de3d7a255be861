/*
 * echonet-baseline-node: the floor every echonet node is measured against.
 *
 *   echonet-baseline-node [--bind IPV4] [--ifaddr IPV4] [--port N]
 *
 * It answers only what the benchmark asks of a node (SPEC §6, §8): the 12 one-property Gets of
 * the node profile 0x0EF001 and the 12-property Get, from replies computed once at start. A
 * request is recognised by comparing its bytes with the few shapes the benchmark sends (no
 * decoding); its reply is two pieces: the request's own first 10 bytes, rewritten in place (TID
 * kept, SEOJ = 0x0EF001, DEOJ = the request's SEOJ), and the precomputed rest. Anything else is
 * dropped and counted: malformed or format 2 by its header, every other datagram as ignored.
 *
 * The command line, READY, the start INF, the group join and the JSON counters on SIGTERM are
 * those of every node (SPEC §7), so the driver and the harness treat it like any other.
 */
#define _GNU_SOURCE /* recvmmsg, sendmmsg, IP_MULTICAST_ALL */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define USAGE "usage: echonet-baseline-node [--bind IPV4] [--ifaddr IPV4] [--port N]\n"
#define GROUP "224.0.23.0"
#define BATCH 32
#define RECV_BUFFER 65536 /* any IPv4 datagram whole (SPEC §2) */
#define HEAD 10           /* EHD1 .. DEOJ: the part of a reply taken from its request */

/* The node profile's 12 properties in the benchmark's order, their EDTs, and ADDR's place. */
static const uint8_t epcs[12] = {0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E,
                                 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7};
static const uint8_t edts[12][18] = {
    {1, 0x30},
    {4, 0x01, 0x0E, 0x01, 0x00},
    {17, 0xFE, 0xFF, 0xFF, 0xFF}, /* nine zeros, then ADDR (filled in at start) */
    {3, 0xFF, 0xFF, 0xFF},
    {3, 0x02, 0x80, 0xD5},
    {1, 0x00},
    {13, 0x0C, 0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7},
    {3, 0x00, 0x00, 0x01},
    {2, 0x00, 0x02},
    {4, 0x01, 0x01, 0x30, 0x01},
    {4, 0x01, 0x01, 0x30, 0x01},
    {3, 0x01, 0x01, 0x30},
};

/* Reply tails (from ESV on): one per one-property Get, indexed by EPC, and the 12-property one. */
struct tail {
    uint8_t len;
    uint8_t bytes[3 + 19];
};
static struct tail one[256];
static uint8_t all[3 + 12 * 2 + 60];
static size_t all_len;
/* The 12-property Get from ESV on: ESV 0x62, OPC 12, each EPC with PDC 0. */
static uint8_t get_all[2 + 12 * 2];

struct counters {
    uint64_t received, requests, replies, ignored, dropped_malformed, dropped_format2, send_errors;
};

static volatile sig_atomic_t stop_requested;
static int node_fd = -1;

/* A flag ends the loop; no SA_RESTART, so a blocked receive returns EINTR, and shutting the
 * socket for reading covers a signal that lands just before the receive is entered. */
static void on_stop(int sig) {
    (void)sig;
    int saved = errno;
    stop_requested = 1;
    if (node_fd >= 0)
        shutdown(node_fd, SHUT_RD);
    errno = saved;
}

static void precompute(const uint8_t addr[4]) {
    uint8_t edt[12][18];
    memcpy(edt, edts, sizeof edt);
    memcpy(&edt[2][14], addr, 4); /* 0x83 = FE FF FF FF + nine 00 + ADDR */
    size_t at = 0;
    all[at++] = 0x72;
    all[at++] = 12;
    get_all[0] = 0x62;
    get_all[1] = 12;
    for (int k = 0; k < 12; k++) {
        uint8_t pdc = edt[k][0];
        struct tail *t = &one[epcs[k]];
        t->bytes[0] = 0x72;
        t->bytes[1] = 1;
        t->bytes[2] = epcs[k];
        memcpy(t->bytes + 3, edt[k], 1 + pdc);
        t->len = (uint8_t)(4 + pdc);
        all[at++] = epcs[k];
        memcpy(all + at, edt[k], 1 + pdc);
        at += 1 + pdc;
        get_all[2 + 2 * k] = epcs[k];
    }
    all_len = at;
}

/* The precomputed rest of the reply to this datagram, or NULL (and the datagram counted). */
static const uint8_t *answer(const uint8_t *d, size_t len, size_t *tail_len, struct counters *c) {
    if (len < 12 || d[0] != 0x10 || (d[1] != 0x81 && d[1] != 0x82)) {
        c->dropped_malformed++;
        return 0;
    }
    if (d[1] == 0x82) {
        c->dropped_format2++;
        return 0;
    }
    /* DEOJ 0x0EF001 or 0x0EF000 (every instance). */
    if (d[7] == 0x0E && d[8] == 0xF0 && (d[9] == 0x01 || d[9] == 0x00)) {
        if (len == 14 && d[10] == 0x62 && d[11] == 1 && d[13] == 0 && one[d[12]].len) {
            c->requests++;
            *tail_len = one[d[12]].len;
            return one[d[12]].bytes;
        }
        if (len == HEAD + sizeof get_all && memcmp(d + HEAD, get_all, sizeof get_all) == 0) {
            c->requests++;
            *tail_len = all_len;
            return all;
        }
    }
    c->ignored++;
    return 0;
}

/* The reply's first HEAD bytes, written over the request's own: TID kept, SEOJ = 0x0EF001,
 * DEOJ = the request's SEOJ. */
static void reply_head(uint8_t *d) {
    memcpy(d + 7, d + 4, 3); /* DEOJ = the request's SEOJ */
    d[4] = 0x0E, d[5] = 0xF0, d[6] = 0x01;
}

static int usage_error(const char *what, const char *value) {
    fprintf(stderr, "echonet-baseline-node: %s: %s\n" USAGE, what, value ? value : "(missing)");
    return 2;
}

/* "--name VALUE" or "--name=VALUE": 1 and *value, 0 for another word, -1 without a value. */
static int option(int argc, char **argv, int *i, const char *name, const char **value) {
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return 0;
    if (argv[*i][n] == '=') {
        *value = argv[*i] + n + 1;
        return 1;
    }
    if (argv[*i][n] != '\0')
        return 0;
    if (*i + 1 >= argc)
        return -1;
    *value = argv[++*i];
    return 1;
}

int main(int argc, char **argv) {
    struct in_addr bind_addr = {htonl(INADDR_ANY)}, ifaddr;
    unsigned long port = 3610;
    int have_ifaddr = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = 0;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(USAGE "The floor: answers the benchmark's Gets of the node profile 0x0EF001 "
                        "from precomputed replies.\n",
                  stdout);
            return 0;
        } else if ((m = option(argc, argv, &i, "--bind", &v)) != 0) {
            if (m < 0 || inet_pton(AF_INET, v, &bind_addr) != 1)
                return usage_error("bad --bind address", v);
        } else if ((m = option(argc, argv, &i, "--ifaddr", &v)) != 0) {
            if (m < 0 || inet_pton(AF_INET, v, &ifaddr) != 1)
                return usage_error("bad --ifaddr address", v);
            have_ifaddr = 1;
        } else if ((m = option(argc, argv, &i, "--port", &v)) != 0) {
            char *end;
            if (m < 0 || v[0] < '0' || v[0] > '9' ||
                (errno = 0, port = strtoul(v, &end, 10), errno || *end || port < 1 || port > 65535))
                return usage_error("bad --port (1-65535)", v);
        } else {
            return usage_error(argv[i][0] == '-' ? "unknown option" : "unexpected argument",
                               argv[i]);
        }
    }
    if (!have_ifaddr)
        ifaddr = bind_addr;
    precompute((const uint8_t *)&ifaddr.s_addr);

    static uint8_t(*rx)[RECV_BUFFER];
    rx = malloc(BATCH * sizeof *rx); /* pages touched only as datagrams fill them */
    if (!rx) {
        fprintf(stderr, "echonet-baseline-node: out of memory\n");
        return 1;
    }
    node_fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    struct sockaddr_in sa = {
        .sin_family = AF_INET, .sin_port = htons((uint16_t)port), .sin_addr = bind_addr};
    if (node_fd < 0 || bind(node_fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        fprintf(stderr, "echonet-baseline-node: cannot bind %s:%lu: %s\n", inet_ntoa(bind_addr),
                port, strerror(errno));
        return 1;
    }
    unsigned char ttl = 1, loop = 1;
    int all_groups = 0;
    setsockopt(node_fd, IPPROTO_IP, IP_MULTICAST_IF, &ifaddr, sizeof ifaddr);
    setsockopt(node_fd, IPPROTO_IP, IP_MULTICAST_TTL, &ttl, sizeof ttl);
    setsockopt(node_fd, IPPROTO_IP, IP_MULTICAST_LOOP, &loop, sizeof loop);
    setsockopt(node_fd, IPPROTO_IP, IP_MULTICAST_ALL, &all_groups, sizeof all_groups);
    struct sockaddr_in group = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    inet_pton(AF_INET, GROUP, &group.sin_addr);
    if (bind_addr.s_addr == htonl(INADDR_ANY)) {
        struct ip_mreq mreq = {.imr_multiaddr = group.sin_addr, .imr_interface = ifaddr};
        if (setsockopt(node_fd, IPPROTO_IP, IP_ADD_MEMBERSHIP, &mreq, sizeof mreq) != 0)
            fprintf(stderr, "echonet-baseline-node: cannot join %s: %s (unicast only)\n", GROUP,
                    strerror(errno));
    }

    struct sigaction act = {.sa_handler = on_stop};
    sigemptyset(&act.sa_mask);
    sigaction(SIGTERM, &act, 0);
    sigaction(SIGINT, &act, 0);
    signal(SIGPIPE, SIG_IGN);

    struct counters c = {0};
    static const uint8_t inf[] = {0x10, 0x81, 0x00, 0x01, 0x0E, 0xF0, 0x01, 0x0E, 0xF0,
                                  0x01, 0x73, 0x01, 0xD5, 0x04, 0x01, 0x01, 0x30, 0x01};
    if (sendto(node_fd, inf, sizeof inf, 0, (struct sockaddr *)&group, sizeof group) < 0) {
        c.send_errors++;
        fprintf(stderr, "echonet-baseline-node: start INF not sent: %s\n", strerror(errno));
    }
    fputs("READY\n", stdout);
    fflush(stdout);

    static struct mmsghdr in[BATCH], out[BATCH];
    static struct iovec in_iov[BATCH], out_iov[BATCH][2];
    static struct sockaddr_in from[BATCH];
    for (int i = 0; i < BATCH; i++)
        in_iov[i] = (struct iovec){.iov_base = rx[i], .iov_len = RECV_BUFFER};
    while (!stop_requested) {
        for (int i = 0; i < BATCH; i++)
            in[i].msg_hdr = (struct msghdr){.msg_name = &from[i],
                                            .msg_namelen = sizeof from[i],
                                            .msg_iov = &in_iov[i],
                                            .msg_iovlen = 1};
        int n = recvmmsg(node_fd, in, BATCH, MSG_WAITFORONE, 0);
        if (n < 0) {
            if (!stop_requested && (errno == EBADF || errno == EFAULT || errno == EINVAL)) {
                fprintf(stderr, "echonet-baseline-node: receive: %s\n", strerror(errno));
                break;
            }
            continue;
        }
        int replies = 0;
        for (int i = 0; i < n; i++) {
            size_t len = in[i].msg_len, tail_len = 0;
            if (stop_requested && len == 0) /* the shut socket's end of stream */
                break;
            c.received++;
            if (in[i].msg_hdr.msg_flags & MSG_TRUNC) {
                c.dropped_malformed++;
                continue;
            }
            uint8_t *d = rx[i];
            const uint8_t *tail = answer(d, len, &tail_len, &c);
            if (!tail)
                continue;
            reply_head(d);
            out_iov[replies][0] = (struct iovec){.iov_base = d, .iov_len = HEAD};
            out_iov[replies][1] = (struct iovec){.iov_base = (void *)tail, .iov_len = tail_len};
            out[replies].msg_hdr = (struct msghdr){.msg_name = &from[i],
                                                   .msg_namelen = sizeof from[i],
                                                   .msg_iov = out_iov[replies],
                                                   .msg_iovlen = 2};
            replies++;
        }
        for (int at = 0; at < replies;) {
            int sent = sendmmsg(node_fd, out + at, (unsigned)(replies - at), 0);
            if (sent > 0) {
                c.replies += (uint64_t)sent;
                at += sent;
            } else if (!(sent < 0 && errno == EINTR)) {
                c.send_errors++; /* the first of the rest failed: skip it, send the others */
                at++;
            }
        }
    }
    printf("{\"received\": %" PRIu64 ", \"requests\": %" PRIu64 ", \"replies\": %" PRIu64
           ", \"ignored\": %" PRIu64 ", \"dropped_malformed\": %" PRIu64
           ", \"dropped_format2\": %" PRIu64 ", \"send_errors\": %" PRIu64 "}\n",
           c.received, c.requests, c.replies, c.ignored, c.dropped_malformed, c.dropped_format2,
           c.send_errors);
    fflush(stdout);
    return 0;
}
