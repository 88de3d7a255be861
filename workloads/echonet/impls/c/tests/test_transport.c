/* Unit tests of the transport: the start INF, binding, and the node's batched receive and
 * send over real loopback sockets. */
#include "check.h"
#include "sockets.h"
#include "transport.h"

static void test_start_inf_bytes(void) {
    uint8_t out[32];
    size_t len = transport_start_inf(out, (const uint8_t[]){0x01, 0x01, 0x30, 0x01});
    CHECK(bytes_equal(out, len, "10 81 00 01 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01"));
}

static void test_address_in_use(void) {
    struct transport_config cfg = {.bind = test_addr("127.0.10.30"),
                                   .ifaddr = test_addr("127.0.10.30")};
    char err[160], warn[160];
    int a, b;
    CHECK(transport_open(&cfg, &a, err, sizeof err, warn, sizeof warn) == TRANSPORT_OK);
    struct sockaddr_in sa;
    socklen_t len = sizeof sa;
    getsockname(a, (struct sockaddr *)&sa, &len);
    cfg.port = ntohs(sa.sin_port);
    CHECK(transport_open(&cfg, &b, err, sizeof err, warn, sizeof warn) == TRANSPORT_IN_USE);
    CHECK(b == -1 && strstr(err, "127.0.10.30") != 0);
    close(a);
}

static void test_batch_receive_and_reply(void) {
    struct transport_config cfg = {.bind = test_addr("127.0.10.31"),
                                   .ifaddr = test_addr("127.0.10.31")};
    char err[160], warn[160];
    int fd;
    static struct transport_batch b;
    CHECK(transport_batch_init(&b) == 0);
    CHECK(transport_open(&cfg, &fd, err, sizeof err, warn, sizeof warn) == TRANSPORT_OK);
    struct sockaddr_in sa;
    socklen_t salen = sizeof sa;
    getsockname(fd, (struct sockaddr *)&sa, &salen);
    uint16_t node_port = ntohs(sa.sin_port), client_port = 0;
    int client = test_socket("127.0.10.32", &client_port);

    static uint8_t big[FRAME_MAX_DATAGRAM];
    memset(big, 0xAB, sizeof big);
    test_send(client, "127.0.10.31", node_port, "one", 3);
    test_send(client, "127.0.10.31", node_port, "", 0);
    test_send(client, "127.0.10.31", node_port, big, sizeof big); /* the largest: read whole */
    test_send(client, "127.0.10.31", node_port, "four", 4);
    int n = transport_receive(fd, &b);
    CHECK(n == 4);
    CHECK(transport_datagram_len(&b, 0) == 3 && memcmp(b.rx[0], "one", 3) == 0);
    CHECK(transport_datagram_len(&b, 1) == 0);
    CHECK(transport_datagram_len(&b, 2) == sizeof big && !transport_truncated(&b, 2));
    CHECK(memcmp(b.rx[2], big, sizeof big) == 0);
    CHECK(b.from[0].sin_port == htons(client_port));

    /* Replies go to each source; one that cannot be sent costs only itself. */
    uint64_t sent = 0, errors = 0;
    size_t cap;
    const char *texts[] = {"r0", "r1", 0, "r3"};
    for (unsigned i = 0; i < 4; i++) {
        if (!texts[i])
            continue;
        uint8_t *out = transport_reply_space(fd, &b, 40, &cap, &sent, &errors);
        CHECK(cap == FRAME_MAX_DATAGRAM && sent == 0);
        memcpy(out, texts[i], 2);
        if (i == 1)
            b.from[1].sin_port = 0; /* no such destination */
        transport_queue_reply(&b, i, 2);
    }
    CHECK(b.arena_used == 6);
    CHECK(transport_flush(fd, &b, &errors) == 2 && errors == 1 && b.arena_used == 0);
    char got[8];
    CHECK(recv(client, got, sizeof got, 0) == 2 && memcmp(got, "r0", 2) == 0);
    CHECK(recv(client, got, sizeof got, 0) == 2 && memcmp(got, "r3", 2) == 0);

    /* A reply that might not fit after those queued sends them first. */
    b.from[0].sin_port = htons(client_port);
    static char large[FRAME_RECV_BUFFER];
    for (unsigned k = 0; k < 3; k++) {
        uint8_t *out = transport_reply_space(fd, &b, 65000, &cap, &sent, &errors);
        CHECK(cap == FRAME_MAX_DATAGRAM);
        CHECK(sent == (k == 2 ? 2 : 0));    /* two replies of 65000 bytes fit, not three */
        for (unsigned r = 0; r < sent; r++) /* read as they come: a socket buffer holds few */
            CHECK(recv(client, large, sizeof large, 0) == 65000 && large[64999] == 'a' + (int)r);
        memset(out, 'a' + (int)k, 65000);
        transport_queue_reply(&b, 0, 65000);
    }
    CHECK(transport_flush(fd, &b, &errors) == 1 && errors == 1);
    CHECK(recv(client, large, sizeof large, 0) == 65000 && large[64999] == 'c');
    close(client);
    close(fd);
}

int main(void) {
    RUN(test_start_inf_bytes);
    RUN(test_address_in_use);
    RUN(test_batch_receive_and_reply);
    return check_failures ? 1 : 0;
}
