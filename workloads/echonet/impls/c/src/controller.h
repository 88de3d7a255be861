/*
 * The controller's side of the protocol (SPEC §8): requests sent from the controller's own
 * port, each reply matched to its request by TID, source address and ESV, a bounded number of
 * attempts each waiting --timeout-ms, and multicast discovery.
 */
#ifndef ECHONET_CONTROLLER_H
#define ECHONET_CONTROLLER_H

#include "frame.h"
#include "transport.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

struct controller_config {
    struct in_addr bind;
    struct in_addr ifaddr;
    uint16_t port; /* the controller's and the nodes' */
    unsigned timeout_ms;
    unsigned retries;
};

struct controller {
    int fd;
    uint16_t port;
    unsigned timeout_ms;
    unsigned retries;
    uint16_t next_tid;
    uint64_t ignored;   /* datagrams that answered no request */
    uint64_t resends;   /* attempts after the first */
    long timeo_us;      /* the SO_RCVTIMEO in force */
    int send_errno;     /* the last failed send, for the error message */
    struct frame reply; /* the last reply matched; its EDTs point into rx */
    uint8_t rx[FRAME_RECV_BUFFER];
};

/* Opens and binds the controller's socket (the caller provides the large struct). */
enum transport_error controller_open(struct controller *c, const struct controller_config *cfg,
                                     char *err, size_t errlen);

/* TIDs start at 1, go up by one per request and skip 0 when they wrap. */
uint16_t controller_next_tid(struct controller *c);

/* Whether reply_esv answers a request of request_esv (0x72 and 0x52 answer a Get, ...). */
bool controller_answers(uint8_t request_esv, uint8_t reply_esv);

enum controller_result {
    CONTROLLER_ANSWERED, /* c->reply holds the reply */
    CONTROLLER_NO_REPLY, /* every attempt timed out */
    CONTROLLER_FAILED,   /* the socket failed; errno says why */
};

/* Sends the encoded request req (its TID and ESV are read from it) to host:port up to
 * max_attempts times, the same datagram each time, until a reply matches. *attempts is the
 * number of sends made. */
enum controller_result controller_request(struct controller *c, struct in_addr host,
                                          const uint8_t *req, size_t len, unsigned max_attempts,
                                          unsigned *attempts);

/* A node found by discovery: its address, the EOJ that answered and its instance list. */
struct controller_node {
    struct in_addr host;
    uint32_t eoj;
    uint8_t count;
    uint32_t instances[84]; /* a PDC of at most 255: 1 + 3 x 84 */
};

/* The instance list of a discovery answer (EPC 0xD6: N, then N EOJs) into node->count and
 * node->instances, as many as are present. */
void controller_read_instances(const struct frame *f, struct controller_node *node);

struct controller_discovery {
    struct controller_node *nodes; /* sorted by address */
    size_t count;
    size_t cap;
    unsigned attempts;
    double elapsed_s;
};

/* Multicasts Get 0xD6 to 0x0EF001 and collects the answers. expect > 0: until that many nodes
 * answered, resending every timeout_ms, at most `retries` times; expect == 0: one send, then
 * wait_ms. 0 when done (with expect: that many answered), 1 when fewer than expected answered,
 * -1 when the socket failed (errno) or memory ran out. The caller frees d->nodes. */
int controller_discover(struct controller *c, unsigned expect, unsigned wait_ms,
                        struct controller_discovery *d);

#endif
