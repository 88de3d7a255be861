/*
 * The UDP socket of both programs (SPEC §2): bound to one address and port, multicast sent on
 * the interface of --ifaddr with TTL 1, the group 224.0.23.0 joined by a node bound to 0.0.0.0;
 * the node's start INF; and the batched receive and send of the node's loop.
 */
#ifndef ECHONET_TRANSPORT_H
#define ECHONET_TRANSPORT_H

#include "frame.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#define TRANSPORT_PORT 3610
#define TRANSPORT_GROUP "224.0.23.0"

struct transport_config {
    struct in_addr bind;   /* network order; INADDR_ANY receives multicast too */
    struct in_addr ifaddr; /* interface for IP_MULTICAST_IF and the group join */
    uint16_t port;
    bool join; /* join 224.0.23.0 on ifaddr's interface (a node bound to 0.0.0.0) */
};

enum transport_error {
    TRANSPORT_OK,
    TRANSPORT_IN_USE, /* the address and port are taken */
    TRANSPORT_FAILED, /* anything else; the message says what */
};

/* Opens the socket; on failure *fd is -1 and err holds a message naming the address. A failed
 * group join is not fatal (unicast still works): it is described in warn (empty otherwise). */
enum transport_error transport_open(const struct transport_config *cfg, int *fd, char *err,
                                    size_t errlen, char *warn, size_t warnlen);

/* 224.0.23.0 in network order. */
struct in_addr transport_group(void);

/* One datagram to addr:port; 0, or -1 with errno. */
int transport_send(int fd, struct in_addr addr, uint16_t port, const void *buf, size_t len);

/* The node's announcement at start (SPEC §6): INF of 0xD5 (the instance list) from and to the
 * node profile. Encodes it into out and returns its length (18). */
size_t transport_start_inf(uint8_t out[32], const uint8_t instance_list[4]);

/* Sends the start INF to 224.0.23.0:port. 0, or -1 with errno. */
int transport_send_start_inf(int fd, uint16_t port, const uint8_t instance_list[4]);

/*
 * The node's batches. One recvmmsg reads every datagram waiting (up to TRANSPORT_BATCH), blocking
 * only for the first; the replies to them go out with one sendmmsg. Under a flood this divides
 * the syscalls per request by the batch size (measured: ~15% less node CPU per request with 8
 * or 64 clients than one datagram per call); with one request outstanding it costs what
 * recvfrom/sendto cost. Replies are packed one after the other into one arena, so a batch of
 * small replies touches a page or two of it; the receive buffers must each hold 64 KiB.
 * Buffers are allocated once.
 */
#define TRANSPORT_BATCH 32
#define TRANSPORT_ARENA (2 * FRAME_RECV_BUFFER)

struct transport_batch {
    struct mmsghdr in[TRANSPORT_BATCH];
    struct iovec in_iov[TRANSPORT_BATCH];
    struct sockaddr_in from[TRANSPORT_BATCH];
    struct mmsghdr out[TRANSPORT_BATCH];
    struct iovec out_iov[TRANSPORT_BATCH];
    unsigned replies;
    size_t arena_used;
    uint8_t (*rx)[FRAME_RECV_BUFFER]; /* TRANSPORT_BATCH receive buffers */
    uint8_t *arena;                   /* TRANSPORT_ARENA bytes: the replies of the batch */
};

/* Allocates the buffers; 0, or -1 when out of memory. */
int transport_batch_init(struct transport_batch *b);

/* Receives 1 to TRANSPORT_BATCH datagrams, blocking until the first; returns how many, or -1
 * with errno (EINTR when a signal arrived). Datagram i: rx[i], length datagram_len(b, i). */
int transport_receive(int fd, struct transport_batch *b);

static inline size_t transport_datagram_len(const struct transport_batch *b, unsigned i) {
    return b->in[i].msg_len;
}

/* True when datagram i did not fit its buffer (it cannot, on IPv4; if it did, it is bad). */
static inline bool transport_truncated(const struct transport_batch *b, unsigned i) {
    return (b->in[i].msg_hdr.msg_flags & MSG_TRUNC) != 0;
}

/* Where the next reply goes, for a reply of at most `bound` bytes: the replies queued so far
 * are sent first if it might not fit after them. *cap is what the reply may use: at least
 * min(bound, FRAME_MAX_DATAGRAM), never more than FRAME_MAX_DATAGRAM. */
uint8_t *transport_reply_space(int fd, struct transport_batch *b, size_t bound, size_t *cap,
                               uint64_t *sent, uint64_t *errors);

/* Queues the len bytes just written at transport_reply_space as the reply to datagram i, to
 * its source address and port. */
void transport_queue_reply(struct transport_batch *b, unsigned i, size_t len);

/* Sends every queued reply; returns how many went out and adds the failed ones to *errors. */
unsigned transport_flush(int fd, struct transport_batch *b, uint64_t *errors);

#endif
