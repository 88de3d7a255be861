/*
 * Unit tests of the session rules (handler.c) over a socketpair: the test plays the client on
 * one end and drives the session on the other the way a worker does, calling it when the
 * socket is readable or writable and obeying its verdict. A drive that never ends would hang:
 * alarm() turns that into a failed test.
 */
#define _GNU_SOURCE
#include "check.h"
#include "frame.h"
#include "handler.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CAP 100000

struct bytes {
    unsigned char *p;
    size_t len, cap;
    bool reset; /* the reading ended with an error (ECONNRESET) rather than EOF */
};

static void append(struct bytes *b, const void *p, size_t n) {
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = realloc(b->p, b->cap);
    }
    memcpy(b->p + b->len, p, n);
    b->len += n;
}

static void append_frame(struct bytes *b, uint8_t type, const void *body, size_t n) {
    unsigned char h[FRAME_HEADER_SIZE];
    frame_encode(h, type, n);
    append(b, h, sizeof h);
    append(b, body, n);
}

struct pair {
    int client, server;
    struct session *s;
    enum session_verdict v; /* what the session waits for */
};

static struct pair open_pair(uint64_t max_body) {
    int fds[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) == 0);
    fcntl(fds[1], F_SETFL, O_NONBLOCK);
    struct pair p = {.client = fds[0],
                     .server = fds[1],
                     .s = session_create(fds[1], max_body),
                     .v = SESSION_WANT_READ};
    CHECK(p.s != NULL);
    return p;
}

/* Runs the session as a worker would until it wants input that is not there, or ends.
 * Returns the last verdict; closes the server end when the session is over. */
static enum session_verdict drive(struct pair *p, int timeout_ms) {
    if (!p->s)
        return SESSION_CLOSE; /* ended already */
    enum session_verdict v = p->v;
    for (;;) {
        p->v = v;
        short want = v == SESSION_WANT_READ    ? POLLIN
                     : v == SESSION_WANT_WRITE ? POLLOUT
                                               : POLLIN | POLLOUT;
        struct pollfd pf = {.fd = p->server, .events = want};
        if (poll(&pf, 1, timeout_ms) == 0)
            return v; /* nothing more to do for now */
        bool out = (want & POLLOUT) && (pf.revents & (POLLOUT | POLLERR | POLLHUP));
        bool in = (want & POLLIN) && (pf.revents & (POLLIN | POLLERR | POLLHUP));
        if (out)
            v = session_on_writable(p->s);
        if (v != SESSION_CLOSE && in && !(out && v == SESSION_WANT_WRITE))
            v = session_on_readable(p->s);
        if (v == SESSION_CLOSE) {
            p->v = v;
            session_destroy(p->s);
            p->s = NULL;
            close(p->server);
            return v;
        }
    }
}

static void close_pair(struct pair *p) {
    if (p->s) {
        session_destroy(p->s);
        close(p->server);
    }
    if (p->client >= 0)
        close(p->client);
}

/* Everything the server sent, until EOF (or until nothing came for a while). */
static struct bytes read_output(int fd, int timeout_ms) {
    struct bytes out = {0};
    unsigned char buf[65536];
    for (;;) {
        struct pollfd pf = {.fd = fd, .events = POLLIN};
        if (poll(&pf, 1, timeout_ms) == 0)
            break;
        ssize_t got = read(fd, buf, sizeof buf);
        if (got <= 0) {
            out.reset = got < 0;
            break;
        }
        append(&out, buf, (size_t)got);
    }
    return out;
}

static bool same(const struct bytes *a, const struct bytes *b) {
    return a->len == b->len && (a->len == 0 || memcmp(a->p, b->p, a->len) == 0);
}

static void send_bytes(int fd, const struct bytes *b) {
    CHECK(write(fd, b->p, b->len) == (ssize_t)b->len);
}

static void test_every_type_is_echoed_as_reply(void) {
    struct pair p = open_pair(CAP);
    struct bytes in = {0}, want = {0};
    const uint8_t types[] = {FRAME_DEFAULT, FRAME_TEXT,   FRAME_REPLY, FRAME_FLUSH,
                             FRAME_STRING,  FRAME_BINARY, 3,           255};
    for (size_t i = 0; i < sizeof types; i++) {
        char body[32];
        int n = snprintf(body, sizeof body, "message %zu", i);
        append_frame(&in, types[i], body, (size_t)n);
        append_frame(&want, FRAME_REPLY, body, (size_t)n);
    }
    append_frame(&in, FRAME_DEFAULT, "", 0); /* empty bodies too */
    append_frame(&want, FRAME_REPLY, "", 0);
    send_bytes(p.client, &in);
    CHECK(drive(&p, 50) == SESSION_WANT_READ);
    struct bytes out = read_output(p.client, 50);
    CHECK(same(&out, &want));
    close_pair(&p);
    free(in.p), free(want.p), free(out.p);
}

static void session_end_test(uint8_t ender) {
    struct pair p = open_pair(CAP);
    struct bytes in = {0}, want = {0};
    append_frame(&in, FRAME_DEFAULT, "one", 3);
    append_frame(&in, FRAME_TEXT, "two", 3);
    append_frame(&in, ender, "", 0);
    append_frame(&in, FRAME_DEFAULT, "after the end", 13); /* never answered */
    append_frame(&want, FRAME_REPLY, "one", 3);
    append_frame(&want, FRAME_REPLY, "two", 3);
    append_frame(&want, FRAME_END, "", 0);
    send_bytes(p.client, &in);
    /* The END reply, then FIN; the session drains input until the peer closes. */
    CHECK(drive(&p, 50) == SESSION_WANT_READ);
    struct bytes out = read_output(p.client, 1000); /* ends at the FIN */
    CHECK(same(&out, &want));
    shutdown(p.client, SHUT_WR);
    CHECK(drive(&p, 1000) == SESSION_CLOSE);
    close_pair(&p);
    free(in.p), free(want.p), free(out.p);
}

static void test_end_replies_then_closes(void) {
    session_end_test(FRAME_END);
}

static void test_quit_is_end(void) {
    session_end_test(FRAME_QUIT);
}

static void test_eof_between_frames_closes_after_replies(void) {
    struct pair p = open_pair(CAP);
    struct bytes in = {0}, want = {0};
    append_frame(&in, FRAME_DEFAULT, "last words", 10);
    append_frame(&want, FRAME_REPLY, "last words", 10);
    send_bytes(p.client, &in);
    shutdown(p.client, SHUT_WR);
    CHECK(drive(&p, 1000) == SESSION_CLOSE);
    struct bytes out = read_output(p.client, 1000);
    CHECK(same(&out, &want));
    close_pair(&p);
    free(in.p), free(want.p), free(out.p);
}

static void eof_inside_frame_test(size_t cut) {
    struct pair p = open_pair(CAP);
    struct bytes in = {0}, want = {0};
    append_frame(&in, FRAME_DEFAULT, "whole", 5);
    append_frame(&want, FRAME_REPLY, "whole", 5);
    size_t whole = in.len;
    append_frame(&in, FRAME_DEFAULT, "cut short", 9);
    in.len = whole + cut;
    send_bytes(p.client, &in);
    shutdown(p.client, SHUT_WR);
    CHECK(drive(&p, 1000) == SESSION_CLOSE);
    struct bytes out = read_output(p.client, 1000);
    CHECK(same(&out, &want));
    close_pair(&p);
    free(in.p), free(want.p), free(out.p);
}

static void test_eof_inside_header_sends_nothing_more(void) {
    eof_inside_frame_test(4);
}

static void test_eof_inside_body_sends_nothing_more(void) {
    eof_inside_frame_test(FRAME_HEADER_SIZE + 3);
}

static void test_body_above_cap_closes_at_once(void) {
    struct pair p = open_pair(1000);
    struct bytes in = {0}, want = {0};
    unsigned char body[1001] = {0};
    append_frame(&in, FRAME_DEFAULT, body, 1000); /* exactly the cap: fine */
    append_frame(&want, FRAME_REPLY, body, 1000);
    unsigned char h[FRAME_HEADER_SIZE];
    frame_encode(h, FRAME_DEFAULT, 1001);
    append(&in, h, sizeof h); /* the header alone is enough to refuse */
    send_bytes(p.client, &in);
    CHECK(drive(&p, 1000) == SESSION_CLOSE);
    struct bytes out = read_output(p.client, 1000);
    CHECK(same(&out, &want));
    close_pair(&p);
    free(in.p), free(want.p), free(out.p);
}

static void test_huge_announced_length_closes(void) {
    struct pair p = open_pair(FRAME_DEFAULT_MAX_BODY);
    unsigned char h[FRAME_HEADER_SIZE];
    frame_encode(h, FRAME_DEFAULT, UINT64_MAX);
    CHECK(write(p.client, h, sizeof h) == (ssize_t)sizeof h);
    CHECK(drive(&p, 1000) == SESSION_CLOSE);
    struct bytes out = read_output(p.client, 1000);
    CHECK(out.len == 0);
    close_pair(&p);
    free(out.p);
}

static void test_one_byte_at_a_time(void) {
    struct pair p = open_pair(CAP);
    struct bytes in = {0}, want = {0};
    append_frame(&in, FRAME_DEFAULT, "split", 5);
    append_frame(&in, FRAME_BINARY, "up", 2);
    append_frame(&in, FRAME_END, "", 0);
    append_frame(&want, FRAME_REPLY, "split", 5);
    append_frame(&want, FRAME_REPLY, "up", 2);
    append_frame(&want, FRAME_END, "", 0);
    enum session_verdict v = SESSION_WANT_READ;
    for (size_t i = 0; i < in.len; i++) {
        CHECK(v == SESSION_WANT_READ);
        CHECK(write(p.client, in.p + i, 1) == 1);
        v = drive(&p, 20);
    }
    CHECK(v == SESSION_WANT_READ); /* draining after END */
    struct bytes out = read_output(p.client, 1000);
    CHECK(same(&out, &want));
    close(p.client);
    p.client = -1;
    CHECK(drive(&p, 1000) == SESSION_CLOSE);
    close_pair(&p);
    free(in.p), free(want.p), free(out.p);
}

/* The client side of a big exchange: a writer thread sends, a reader thread collects. */
struct peer {
    int fd;
    const struct bytes *in;
    struct bytes out;
};

static void *peer_write(void *arg) {
    struct peer *pe = arg;
    for (size_t off = 0; off < pe->in->len;) {
        ssize_t put = write(pe->fd, pe->in->p + off, pe->in->len - off);
        if (put <= 0)
            break;
        off += (size_t)put;
    }
    shutdown(pe->fd, SHUT_WR); /* done: the session's draining ends at this EOF */
    return NULL;
}

static void *peer_read(void *arg) {
    struct peer *pe = arg;
    pe->out = read_output(pe->fd, 5000);
    return NULL;
}

/* Sends `in` and drives the session to its end while replies are read concurrently. */
static struct bytes exchange(struct pair *p, const struct bytes *in) {
    struct peer pe = {.fd = p->client, .in = in};
    pthread_t w, r;
    pthread_create(&w, NULL, peer_write, &pe);
    pthread_create(&r, NULL, peer_read, &pe);
    CHECK(drive(p, 5000) == SESSION_CLOSE);
    pthread_join(w, NULL);
    pthread_join(r, NULL);
    return pe.out;
}

static void test_bodies_larger_than_the_buffer_stream_through(void) {
    struct pair p = open_pair(FRAME_DEFAULT_MAX_BODY);
    int small = 4096; /* small socket buffers: many partial writes and pauses */
    setsockopt(p.server, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    setsockopt(p.client, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    struct bytes in = {0}, want = {0};
    const size_t sizes[] = {3 * SESSION_BUFFER_SIZE + 17, 10, SESSION_BUFFER_SIZE - 9,
                            SESSION_BUFFER_SIZE - 8, 16u << 20};
    for (size_t k = 0; k < sizeof sizes / sizeof *sizes; k++) {
        unsigned char *body = malloc(sizes[k]);
        for (size_t i = 0; i < sizes[k]; i++)
            body[i] = (unsigned char)(i * 31 + k);
        append_frame(&in, FRAME_DEFAULT, body, sizes[k]);
        append_frame(&want, FRAME_REPLY, body, sizes[k]);
        free(body);
    }
    append_frame(&in, FRAME_END, "", 0);
    append_frame(&want, FRAME_END, "", 0);
    struct bytes out = exchange(&p, &in);
    CHECK(same(&out, &want));
    close_pair(&p);
    free(in.p), free(want.p), free(out.p);
}

/* A single-threaded client: writes a message far larger than the socket buffers, then reads.
 * The session must absorb the rest of that frame instead of waiting for the peer to read. */
static void test_client_that_reads_only_after_writing(void) {
    struct pair p = open_pair(FRAME_DEFAULT_MAX_BODY);
    int small = 4096;
    setsockopt(p.server, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    setsockopt(p.client, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    struct bytes in = {0}, want = {0};
    append_frame(&in, FRAME_TEXT, "before", 6);
    append_frame(&want, FRAME_REPLY, "before", 6);
    const size_t sizes[] = {8u << 20};
    for (size_t k = 0; k < 1; k++) {
        unsigned char *body = malloc(sizes[k]);
        for (size_t i = 0; i < sizes[k]; i++)
            body[i] = (unsigned char)(i * 7 + k);
        append_frame(&in, FRAME_BINARY, body, sizes[k]);
        append_frame(&want, FRAME_REPLY, body, sizes[k]);
        free(body);
    }
    append_frame(&in, FRAME_END, "", 0);
    append_frame(&want, FRAME_END, "", 0);
    struct peer pe = {.fd = p.client, .in = &in};
    pthread_t w;
    pthread_create(&w, NULL, peer_write, &pe);
    enum session_verdict v = SESSION_WANT_READ;
    /* Drive until the writer is done (at most ~5 s), reading nothing on the client side. */
    bool written = false;
    for (int rounds = 0; rounds < 250 && !written; rounds++) {
        v = drive(&p, 20);
        if (v == SESSION_CLOSE)
            break;
        written = pthread_tryjoin_np(w, NULL) == 0;
    }
    CHECK(written);
    if (!written) {
        shutdown(p.client, SHUT_RDWR); /* unblock the writer to end the test */
        pthread_join(w, NULL);
    }
    pthread_t r;
    pthread_create(&r, NULL, peer_read, &pe);
    if (v != SESSION_CLOSE)
        CHECK(drive(&p, 5000) == SESSION_CLOSE);
    pthread_join(r, NULL);
    CHECK(same(&pe.out, &want));
    close_pair(&p);
    free(in.p), free(want.p), free(pe.out.p);
}

static void test_many_small_frames(void) {
    struct pair p = open_pair(CAP);
    struct bytes in = {0}, want = {0};
    for (int i = 0; i < 20000; i++) {
        unsigned char body[8];
        memset(body, i, sizeof body);
        append_frame(&in, FRAME_DEFAULT, body, (size_t)(i % 9));
        append_frame(&want, FRAME_REPLY, body, (size_t)(i % 9));
    }
    append_frame(&in, FRAME_QUIT, "", 0);
    append_frame(&want, FRAME_END, "", 0);
    struct bytes out = exchange(&p, &in);
    CHECK(same(&out, &want));
    close_pair(&p);
    free(in.p), free(want.p), free(out.p);
}

/* Input after END, still unread when the END reply goes out, must not turn the close into a
 * reset (RST on TCP, ECONNRESET on this socketpair) that destroys the replies: every reply
 * and the END arrive, then a clean EOF. */
static void test_input_after_end_does_not_reset(void) {
    struct pair p = open_pair(CAP);
    int big = 1 << 20;
    setsockopt(p.client, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    struct bytes in = {0}, want = {0};
    unsigned char body[1000];
    memset(body, 'x', sizeof body);
    for (int i = 0; i < 50; i++) {
        append_frame(&in, FRAME_DEFAULT, body, sizeof body);
        append_frame(&want, FRAME_REPLY, body, sizeof body);
    }
    append_frame(&in, FRAME_END, "", 0);
    append_frame(&want, FRAME_END, "", 0);
    for (int i = 0; i < 150; i++) /* more than one read takes: unread at the END reply */
        append_frame(&in, FRAME_DEFAULT, body, sizeof body);
    send_bytes(p.client, &in);
    CHECK(drive(&p, 50) == SESSION_WANT_READ); /* draining */
    struct bytes out = read_output(p.client, 1000);
    CHECK(same(&out, &want));
    CHECK(!out.reset);
    shutdown(p.client, SHUT_WR);
    CHECK(drive(&p, 1000) == SESSION_CLOSE);
    close_pair(&p);
    free(in.p), free(want.p), free(out.p);
}

/* A refused length closes at once, even when the replies owed cannot all be written because
 * the peer reads nothing. */
static void test_refused_length_does_not_wait_for_the_peer(void) {
    struct pair p = open_pair(CAP);
    int small = 4096, big = 1 << 20;
    setsockopt(p.server, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
    setsockopt(p.client, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    struct bytes in = {0};
    unsigned char body[1000] = {0};
    for (int i = 0; i < 60; i++)
        append_frame(&in, FRAME_DEFAULT, body, sizeof body);
    unsigned char h[FRAME_HEADER_SIZE];
    frame_encode(h, FRAME_DEFAULT, CAP + 1);
    append(&in, h, sizeof h);
    send_bytes(p.client, &in);
    CHECK(drive(&p, 1000) == SESSION_CLOSE);
    close_pair(&p);
    free(in.p);
}

static void test_peer_gone_closes(void) {
    struct pair p = open_pair(CAP);
    struct bytes in = {0};
    append_frame(&in, FRAME_DEFAULT, "nobody listens", 14);
    send_bytes(p.client, &in);
    close(p.client);
    enum session_verdict v = drive(&p, 1000);
    CHECK(v == SESSION_CLOSE); /* the reply fails (EPIPE) or the read sees EOF */
    if (p.s) {
        session_destroy(p.s);
        close(p.server);
    }
    free(in.p);
}

int main(void) {
    alarm(50);
    signal(SIGPIPE, SIG_IGN);
    RUN(test_every_type_is_echoed_as_reply);
    RUN(test_end_replies_then_closes);
    RUN(test_quit_is_end);
    RUN(test_eof_between_frames_closes_after_replies);
    RUN(test_eof_inside_header_sends_nothing_more);
    RUN(test_eof_inside_body_sends_nothing_more);
    RUN(test_body_above_cap_closes_at_once);
    RUN(test_huge_announced_length_closes);
    RUN(test_one_byte_at_a_time);
    RUN(test_bodies_larger_than_the_buffer_stream_through);
    RUN(test_client_that_reads_only_after_writing);
    RUN(test_many_small_frames);
    RUN(test_input_after_end_does_not_reset);
    RUN(test_refused_length_does_not_wait_for_the_peer);
    RUN(test_peer_gone_closes);
    return check_failures ? 1 : 0;
}
