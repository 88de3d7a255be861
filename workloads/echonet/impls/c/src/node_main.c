/*
 * echonet-c-node: the ECHONET Lite node (SPEC §7).
 *
 *   echonet-c-node [--bind IPV4] [--ifaddr IPV4] [--port N]
 *
 * One thread, one socket, one loop: each recvmmsg takes every datagram already queued (blocking
 * for the first), each is decoded and answered into the batch's reply arena, and the replies go
 * out with one sendmmsg before the next read. Nothing is allocated after start.
 */
#include "frame.h"
#include "objects.h"
#include "options.h"
#include "responder.h"
#include "transport.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define USAGE "usage: echonet-c-node [--bind IPV4] [--ifaddr IPV4] [--port N]\n"

struct counters {
    uint64_t received, requests, replies, ignored, dropped_malformed, dropped_format2, send_errors;
};

static volatile sig_atomic_t stop_requested;
static int node_fd = -1;

/* The flag ends the loop; the receive returns EINTR because the handler is installed without
 * SA_RESTART. A signal that lands after the loop checked the flag but before it entered
 * recvmmsg would still leave it blocked until the next datagram, so the handler also shuts the
 * socket for reading (shutdown is async-signal-safe), which makes that receive return at once:
 * Linux marks even an unconnected UDP socket shut, and its reads return 0 once the queue is
 * empty. */
static void on_stop(int sig) {
    (void)sig;
    int saved = errno;
    stop_requested = 1;
    if (node_fd >= 0)
        shutdown(node_fd, SHUT_RD);
    errno = saved;
}

static int usage_error(const char *what, const char *value) {
    if (value)
        fprintf(stderr, "echonet-c-node: %s: %s\n" USAGE, what, value);
    else
        fprintf(stderr, "echonet-c-node: %s\n" USAGE, what);
    return 2;
}

static void print_counters(const struct counters *c) {
    printf("{\"received\": %" PRIu64 ", \"requests\": %" PRIu64 ", \"replies\": %" PRIu64
           ", \"ignored\": %" PRIu64 ", \"dropped_malformed\": %" PRIu64
           ", \"dropped_format2\": %" PRIu64 ", \"send_errors\": %" PRIu64 "}\n",
           c->received, c->requests, c->replies, c->ignored, c->dropped_malformed,
           c->dropped_format2, c->send_errors);
    fflush(stdout);
}

/* Decodes and answers datagram i of the batch, queueing its reply. */
static void handle(int fd, struct node_objects *node, struct transport_batch *b, unsigned i,
                   struct frame *req, struct counters *c) {
    c->received++;
    if (transport_truncated(b, i)) {
        c->dropped_malformed++;
        return;
    }
    switch (frame_decode(b->rx[i], transport_datagram_len(b, i), req)) {
    case FRAME_MALFORMED:
        c->dropped_malformed++;
        return;
    case FRAME_UNSUPPORTED:
        c->dropped_format2++;
        return;
    case FRAME_OK:
        break;
    }
    size_t cap, len = 0;
    uint8_t *out = transport_reply_space(fd, b, responder_reply_bound(req), &cap, &c->replies,
                                         &c->send_errors);
    switch (responder_handle(node, req, out, cap, &len)) {
    case RESPONDER_REPLY:
        c->requests++;
        transport_queue_reply(b, i, len);
        break;
    case RESPONDER_NO_REPLY:
        c->requests++;
        break;
    case RESPONDER_TOO_LARGE:
        c->requests++;
        c->send_errors++;
        break;
    case RESPONDER_IGNORED:
        c->ignored++;
        break;
    }
}

/* Errors that would recur on every call: the loop cannot go on. */
static int fatal_socket_error(int e) {
    return e == EBADF || e == ENOTSOCK || e == EFAULT || e == EINVAL;
}

int main(int argc, char **argv) {
    struct transport_config cfg = {.bind = {htonl(INADDR_ANY)}, .port = TRANSPORT_PORT};
    int have_ifaddr = 0;
    for (int i = 1; i < argc; i++) {
        const char *value = 0;
        int m;
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            fputs(USAGE "An ECHONET Lite node: the node profile 0x0EF001 and a home air "
                        "conditioner 0x013001 over UDP.\n"
                        "  --bind IPV4    address to bind (default 0.0.0.0: unicast and "
                        "multicast 224.0.23.0)\n"
                        "  --ifaddr IPV4  interface for multicast and the address in 0x83 "
                        "(default: --bind)\n"
                        "  --port N       UDP port (default 3610)\n"
                        "Prints READY when bound, its counters as JSON on SIGTERM/SIGINT.\n",
                  stdout);
            return 0;
        } else if ((m = options_match(argc, argv, &i, "--bind", &value)) != 0) {
            if (m < 0 || options_parse_ipv4(value, &cfg.bind))
                return usage_error("bad --bind address", value);
        } else if ((m = options_match(argc, argv, &i, "--ifaddr", &value)) != 0) {
            if (m < 0 || options_parse_ipv4(value, &cfg.ifaddr))
                return usage_error("bad --ifaddr address", value);
            have_ifaddr = 1;
        } else if ((m = options_match(argc, argv, &i, "--port", &value)) != 0) {
            uint64_t port;
            if (m < 0 || options_parse_u64(value, 1, 65535, &port))
                return usage_error("bad --port (1-65535)", value);
            cfg.port = (uint16_t)port;
        } else {
            return usage_error(argv[i][0] == '-' ? "unknown option" : "unexpected argument",
                               argv[i]);
        }
    }
    if (!have_ifaddr)
        cfg.ifaddr = cfg.bind;
    /* A socket bound to a unicast address receives no multicast: only 0.0.0.0 joins. */
    cfg.join = cfg.bind.s_addr == htonl(INADDR_ANY);

    static struct node_objects node;
    objects_init(&node, (const uint8_t *)&cfg.ifaddr.s_addr);

    static struct transport_batch batch;
    if (transport_batch_init(&batch) != 0) {
        fprintf(stderr, "echonet-c-node: out of memory\n");
        return 1;
    }
    char err[160], warn[160];
    if (transport_open(&cfg, &node_fd, err, sizeof err, warn, sizeof warn) != TRANSPORT_OK) {
        fprintf(stderr, "echonet-c-node: %s\n", err);
        return 1;
    }
    if (warn[0])
        fprintf(stderr, "echonet-c-node: %s\n", warn);

    /* Installed before READY, so a driver may signal as soon as it reads the line. */
    struct sigaction sa = {.sa_handler = on_stop}; /* no SA_RESTART: the receive returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, 0);
    sigaction(SIGINT, &sa, 0);
    signal(SIGPIPE, SIG_IGN);

    struct counters c = {0};
    const struct property *instances = object_get(&node.list[0], 0xD5);
    if (transport_send_start_inf(node_fd, cfg.port, instances->edt) != 0) {
        c.send_errors++;
        fprintf(stderr, "echonet-c-node: start INF to %s:%u not sent: %s\n", TRANSPORT_GROUP,
                cfg.port, strerror(errno));
    }
    fputs("READY\n", stdout);
    fflush(stdout);

    static struct frame req;
    int status = 0;
    while (!stop_requested) {
        int n = transport_receive(node_fd, &batch);
        if (n < 0) {
            /* EINTR (a signal), ECONNREFUSED and the like (an earlier send's ICMP) are no reason
             * to stop serving. */
            if (!stop_requested && fatal_socket_error(errno)) {
                fprintf(stderr, "echonet-c-node: receive: %s\n", strerror(errno));
                status = 1;
                break;
            }
            continue;
        }
        for (unsigned i = 0; i < (unsigned)n; i++) {
            /* After the stop, the shut socket reads as empty datagrams once its queue is
             * drained: the end of the stream, not datagrams to count. */
            if (stop_requested && transport_datagram_len(&batch, i) == 0)
                break;
            handle(node_fd, &node, &batch, i, &req, &c);
        }
        c.replies += transport_flush(node_fd, &batch, &c.send_errors);
    }
    print_counters(&c);
    return status;
}
