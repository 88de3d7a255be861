/* Unit tests of the controller: TIDs, reply matching by TID, source and ESV, bounded retries,
 * discovery. Fake nodes are plain sockets; their answers are queued before the request is made,
 * so every test runs in one thread. */
#include "check.h"
#include "controller.h"
#include "sockets.h"

static struct controller c;
static uint8_t buf[1024];

static void test_tids_start_at_1_and_skip_0(void) {
    c.next_tid = 1;
    CHECK(controller_next_tid(&c) == 1);
    CHECK(controller_next_tid(&c) == 2);
    c.next_tid = 0xFFFF;
    CHECK(controller_next_tid(&c) == 0xFFFF);
    CHECK(controller_next_tid(&c) == 1);
}

static void test_which_replies_answer(void) {
    CHECK(controller_answers(ESV_GET, ESV_GET_RES) && controller_answers(ESV_GET, ESV_GET_SNA));
    CHECK(!controller_answers(ESV_GET, ESV_SET_RES) && !controller_answers(ESV_GET, ESV_GET));
    CHECK(controller_answers(ESV_SETC, ESV_SET_RES) && controller_answers(ESV_SETC, ESV_SETC_SNA));
    CHECK(!controller_answers(ESV_SETC, ESV_SETI_SNA));
    CHECK(controller_answers(ESV_SETI, ESV_SETI_SNA) && !controller_answers(ESV_SETI, ESV_SET_RES));
    CHECK(controller_answers(ESV_SETGET, ESV_SETGET_RES));
    CHECK(controller_answers(ESV_SETGET, ESV_SETGET_SNA));
    CHECK(controller_answers(ESV_INF_REQ, ESV_INF) && controller_answers(ESV_INF_REQ, ESV_INF_SNA));
    CHECK(controller_answers(ESV_INFC, ESV_INFC_RES));
}

/* A controller on 127.0.10.20 and fake nodes on .21 (asked) and .22 (a stranger), one port. */
static int node_fd, stranger_fd;
static uint16_t port;

static int open_pair(unsigned timeout_ms, unsigned retries) {
    port = 0;
    node_fd = test_socket("127.0.10.21", &port);
    stranger_fd = test_socket("127.0.10.22", &port);
    struct controller_config cfg = {.bind = test_addr("127.0.10.20"),
                                    .ifaddr = test_addr("127.0.10.20"),
                                    .port = port,
                                    .timeout_ms = timeout_ms,
                                    .retries = retries};
    char err[160];
    if (node_fd < 0 || stranger_fd < 0 || controller_open(&c, &cfg, err, sizeof err)) {
        fprintf(stderr, "  cannot set up sockets\n");
        return -1;
    }
    return 0;
}

static void close_pair(void) {
    close(node_fd);
    close(stranger_fd);
    close(c.fd);
}

static void answer_from(int fd, const char *hex) {
    size_t len = hex_bytes(hex, buf);
    test_send(fd, "127.0.10.20", port, buf, len);
}

static void test_matches_tid_source_and_esv(void) {
    if (open_pair(500, 3))
        return;
    answer_from(stranger_fd, "10 81 00 01 0E F0 01 05 FF 01 72 01 80 01 30"); /* other host */
    answer_from(node_fd, "10 81 00 02 0E F0 01 05 FF 01 72 01 80 01 30");     /* other TID */
    answer_from(node_fd, "10 81 00 01 0E F0 01 05 FF 01 71 01 80 00");        /* other ESV */
    answer_from(node_fd, "10 81 00 01 0E F0 01 05 FF 01 72 01 80");           /* malformed */
    answer_from(node_fd, "10 81 00 01 0E F0 01 05 FF 01 72 01 80 01 30");     /* the reply */

    uint8_t req[32];
    size_t len = hex_bytes("10 81 00 01 05 FF 01 0E F0 01 62 01 80 00", req);
    CHECK(controller_next_tid(&c) == 1);
    unsigned attempts = 0;
    CHECK(controller_request(&c, test_addr("127.0.10.21"), req, len, 4, &attempts) ==
          CONTROLLER_ANSWERED);
    CHECK(attempts == 1 && c.ignored == 4 && c.resends == 0);
    CHECK(c.reply.tid == 1 && c.reply.esv == ESV_GET_RES && c.reply.opc == 1);
    CHECK(c.reply.props[0].pdc == 1 && c.reply.props[0].edt[0] == 0x30);
    /* The node got the request as it was encoded. */
    uint8_t got[64];
    ssize_t n = recv(node_fd, got, sizeof got, 0);
    CHECK(n == (ssize_t)len && memcmp(got, req, len) == 0);
    close_pair();
}

static void test_bounded_retries_resend_the_same_datagram(void) {
    if (open_pair(30, 2))
        return;
    uint8_t req[32];
    size_t len = hex_bytes("10 81 00 07 05 FF 01 0E F0 01 62 01 80 00", req);
    unsigned attempts = 0;
    CHECK(controller_request(&c, test_addr("127.0.10.21"), req, len, 3, &attempts) ==
          CONTROLLER_NO_REPLY);
    CHECK(attempts == 3 && c.resends == 2);
    for (int i = 0; i < 3; i++) {
        uint8_t got[64];
        ssize_t n = recv(node_fd, got, sizeof got, MSG_DONTWAIT);
        CHECK(n == (ssize_t)len && memcmp(got, req, len) == 0);
    }
    CHECK(recv(node_fd, buf, sizeof buf, MSG_DONTWAIT) < 0); /* no fourth */
    close_pair();
}

static void test_discovery_collects_sorts_and_dedups(void) {
    if (open_pair(30, 1))
        return;
    uint16_t p = port;
    int a = test_socket("127.0.10.25", &p), b = test_socket("127.0.10.24", &p);
    c.next_tid = 9;
    const char *answer = "10 81 00 09 0E F0 01 05 FF 01 72 01 D6 07 02 01 30 01 02 88 01";
    answer_from(a, answer);
    answer_from(a, answer); /* a duplicate */
    answer_from(b, "10 81 00 09 0E F0 01 05 FF 01 72 01 D6 04 01 01 30 01");
    struct controller_discovery d;
    int r = controller_discover(&c, 2, 0, &d);
    if (r < 0) {
        fprintf(stderr, "  multicast send failed on this host: skipped\n");
    } else {
        CHECK(r == 0 && d.count == 2 && d.attempts == 1);
        CHECK(d.nodes[0].host.s_addr == test_addr("127.0.10.24").s_addr);
        CHECK(d.nodes[0].eoj == 0x0EF001 && d.nodes[0].count == 1);
        CHECK(d.nodes[0].instances[0] == 0x013001);
        CHECK(d.nodes[1].count == 2 && d.nodes[1].instances[1] == 0x028801);
        CHECK(c.ignored == 1); /* the duplicate */
        /* Without --expect: one send, then the whole wait. */
        free(d.nodes);
        r = controller_discover(&c, 0, 30, &d);
        CHECK(r == 0 && d.count == 0 && d.attempts == 1);
        CHECK(d.elapsed_s >= 0.025);
        /* Fewer than expected: every resend made, then status 1. */
        free(d.nodes);
        r = controller_discover(&c, 1, 0, &d);
        CHECK(r == 1 && d.count == 0 && d.attempts == 2);
    }
    free(d.nodes);
    close(a);
    close(b);
    close_pair();
}

/* A discovery answer's instance list: as many EOJs as its bytes hold, whatever N says. */
static void test_instance_list_trusts_only_the_bytes_present(void) {
    static struct frame f;
    static uint8_t dgram[512];
    struct controller_node node;
    /* N = 5 with two EOJs present; an empty 0xD6 before it is passed over. */
    size_t len =
        hex_bytes("10 81 00 01 0E F0 01 05 FF 01 72 02 D6 00 D6 07 05 01 30 01 02 88 01", dgram);
    CHECK(frame_decode(dgram, len, &f) == FRAME_OK);
    controller_read_instances(&f, &node);
    CHECK(node.count == 2 && node.instances[0] == 0x013001 && node.instances[1] == 0x028801);
    /* The largest EDT: N = 255 and 84 whole EOJs (the 85th is cut), the list's capacity. */
    len = hex_bytes("10 81 00 01 0E F0 01 05 FF 01 72 01 D6 FF FF", dgram);
    memset(dgram + len, 0x01, 254);
    len += 254;
    CHECK(frame_decode(dgram, len, &f) == FRAME_OK);
    controller_read_instances(&f, &node);
    CHECK(node.count == 84 && node.instances[83] == 0x010101);
    /* No 0xD6: no instances. */
    len = hex_bytes("10 81 00 01 0E F0 01 05 FF 01 72 01 80 01 30", dgram);
    CHECK(frame_decode(dgram, len, &f) == FRAME_OK);
    controller_read_instances(&f, &node);
    CHECK(node.count == 0);
}

int main(void) {
    RUN(test_tids_start_at_1_and_skip_0);
    RUN(test_which_replies_answer);
    RUN(test_matches_tid_source_and_esv);
    RUN(test_bounded_retries_resend_the_same_datagram);
    RUN(test_discovery_collects_sorts_and_dedups);
    RUN(test_instance_list_trusts_only_the_bytes_present);
    return check_failures ? 1 : 0;
}
