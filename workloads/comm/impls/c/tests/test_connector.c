/*
 * The Connector against the real listener, in one process on a free port: echo, the three
 * ways to end a session, a body far larger than any buffer, many clients at once, the cap,
 * a stop with clients still connected, and a listener on another address than 127.0.0.1.
 */
#include "check.h"
#include "connector.h"
#include "frame.h"
#include "listener.h"
#include "options.h"
#include "pattern.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

static uint16_t port;

static struct in_addr ipv4(const char *text) {
    struct in_addr a = {0};
    CHECK(options_parse_ipv4(text, &a) == 0);
    return a;
}

static struct connector *open_client(void) {
    char err[200] = "";
    struct connector *c = connector_open("127.0.0.1", port, err, sizeof err);
    if (!c)
        fprintf(stderr, "connector_open: %s\n", err);
    CHECK(c != NULL);
    return c;
}

static struct comm_message make(uint8_t type, const unsigned char *table, uint64_t c, uint64_t m,
                                size_t size) {
    struct comm_message msg = {.type = type, .len = size};
    if (size) {
        msg.body = malloc(size);
        memcpy(msg.body, table + pattern_offset(c, m), size);
    }
    return msg;
}

/* Posts n messages, ends the session `how`, and checks every reply and the end. */
static void round_trip(uint64_t client, int n, size_t size, enum connector_end how) {
    unsigned char *table = pattern_table(size);
    struct connector *c = open_client();
    if (!c)
        return;
    for (int m = 0; m < n; m++) {
        struct comm_message msg = make((uint8_t)(m % 3), table, client, (uint64_t)m, size);
        CHECK(connector_post(c, &msg) == 0);
    }
    connector_close(c, how);
    for (int m = 0; m < n; m++) {
        struct comm_message r;
        int rc = connector_get(c, &r);
        CHECK(rc == 1);
        if (rc != 1)
            break;
        CHECK(r.type == FRAME_REPLY);
        CHECK(r.len == size);
        CHECK(r.len == 0 || memcmp(r.body, table + pattern_offset(client, (uint64_t)m), size) == 0);
        message_free(&r);
    }
    struct comm_message r;
    CHECK(connector_get(c, &r) == 0);
    CHECK(connector_error(c)[0] == '\0');
    connector_free(c);
    free(table);
}

static void test_end(void) {
    round_trip(0, 100, 4096, CONNECTOR_END);
}

static void test_quit(void) {
    round_trip(1, 100, 100, CONNECTOR_QUIT);
}

static void test_eof(void) {
    round_trip(2, 100, 1, CONNECTOR_EOF);
}

static void test_empty_bodies(void) {
    round_trip(3, 50, 0, CONNECTOR_END);
}

static void test_sixteen_mib_body(void) {
    round_trip(4, 2, 16u << 20, CONNECTOR_END);
}

static void *client_thread(void *arg) {
    round_trip((uint64_t)(uintptr_t)arg, 200, 1024, CONNECTOR_END);
    return NULL;
}

static void test_many_clients_at_once(void) {
    enum { N = 64 };
    pthread_t t[N];
    for (uintptr_t i = 0; i < N; i++)
        pthread_create(&t[i], NULL, client_thread, (void *)i);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
}

static void test_cap_closes_only_that_connection(void) {
    struct connector *bad = open_client(), *good = open_client();
    if (!bad || !good)
        return;
    struct comm_message big = {.type = FRAME_DEFAULT, .len = 5000, .body = calloc(1, 5000)};
    CHECK(connector_post(bad, &big) == 0);
    struct comm_message r;
    CHECK(connector_get(bad, &r) <= 0); /* closed without a reply */
    connector_close(bad, CONNECTOR_END);
    connector_free(bad);
    round_trip(5, 10, 4000, CONNECTOR_END); /* under the cap: fine */
    connector_close(good, CONNECTOR_END);
    CHECK(connector_get(good, &r) == 0);
    connector_free(good);
}

static void test_stop_with_clients_connected(void) {
    struct listener *l = listener_start(ipv4("127.0.0.1"), 0, 2, 1000);
    CHECK(l != NULL);
    if (!l)
        return;
    uint16_t saved = port;
    port = listener_port(l);
    struct connector *c = open_client();
    struct comm_message msg = {.type = FRAME_TEXT, .len = 2, .body = malloc(2)};
    memcpy(msg.body, "hi", 2);
    CHECK(connector_post(c, &msg) == 0);
    struct comm_message r;
    CHECK(connector_get(c, &r) == 1);
    message_free(&r);
    listener_stop(l); /* must not wait for the client */
    CHECK(connector_get(c, &r) == 0);
    connector_close(c, CONNECTOR_END);
    connector_free(c);
    port = saved;
}

/* --host: a listener on 127.0.0.2 (Linux routes all of 127/8 to loopback) answers there and
 * nowhere else. */
static void test_listens_only_on_its_host(void) {
    struct listener *l = listener_start(ipv4("127.0.0.2"), 0, 1, 1000);
    CHECK(l != NULL);
    if (!l)
        return;
    char err[200] = "";
    struct connector *there = connector_open("127.0.0.2", listener_port(l), err, sizeof err);
    CHECK(there != NULL);
    if (there) {
        struct comm_message msg = {.type = FRAME_TEXT, .len = 2, .body = malloc(2)};
        memcpy(msg.body, "hi", 2);
        CHECK(connector_post(there, &msg) == 0);
        struct comm_message r = {0};
        CHECK(connector_get(there, &r) == 1 && r.type == FRAME_REPLY && r.len == 2);
        message_free(&r);
        connector_close(there, CONNECTOR_END);
        CHECK(connector_get(there, &r) == 0);
        connector_free(there);
    }
    struct connector *elsewhere = connector_open("127.0.0.1", listener_port(l), err, sizeof err);
    CHECK(elsewhere == NULL); /* refused */
    if (elsewhere)
        connector_free(elsewhere);
    listener_stop(l);
}

int main(void) {
    alarm(50);
    signal(SIGPIPE, SIG_IGN);
    struct listener *l = listener_start(ipv4("127.0.0.1"), 0, 3, 4096);
    CHECK(l != NULL);
    if (!l)
        return 1;
    port = listener_port(l);
    /* The 16 MiB test needs its own server: this one caps bodies at 4096 for the cap test. */
    RUN(test_end);
    RUN(test_quit);
    RUN(test_eof);
    RUN(test_empty_bodies);
    RUN(test_many_clients_at_once);
    RUN(test_cap_closes_only_that_connection);
    listener_stop(l);

    l = listener_start(ipv4("127.0.0.1"), 0, 2, FRAME_DEFAULT_MAX_BODY);
    port = listener_port(l);
    RUN(test_sixteen_mib_body);
    listener_stop(l);

    RUN(test_stop_with_clients_connected);
    RUN(test_listens_only_on_its_host);
    return check_failures ? 1 : 0;
}
