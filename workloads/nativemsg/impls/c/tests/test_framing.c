/*
 * Unit tests of framing.c. Each test feeds a byte stream into a pipe from a writer thread (in
 * one write, or one byte per write) and reads it back with frame_read. A reader that waits for
 * bytes that never come would hang: alarm() turns that into a failed test.
 */
#include "check.h"
#include "framing.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct feed {
    int fd;
    const unsigned char *data;
    size_t len;
    size_t chunk;   /* bytes per write(2) */
    bool keep_open; /* leave the write end open: EOF never comes */
};

static void *feed_thread(void *arg) {
    struct feed *f = arg;
    for (size_t off = 0; off < f->len;) {
        size_t n = f->len - off < f->chunk ? f->len - off : f->chunk;
        ssize_t put = write(f->fd, f->data + off, n);
        if (put < 0)
            break;
        off += (size_t)put;
        if (f->chunk < 16) {
            /* Let the reader drain the pipe so each read(2) sees a small piece. */
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    if (!f->keep_open)
        close(f->fd);
    return NULL;
}

struct session {
    struct feed feed;
    pthread_t thread;
    struct frame_reader reader;
};

static void session_start(struct session *s, const void *data, size_t len, size_t chunk,
                          bool keep_open) {
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(2);
    }
    s->feed = (struct feed){fds[1], data, len, chunk, keep_open};
    pthread_create(&s->thread, NULL, feed_thread, &s->feed);
    if (frame_reader_init(&s->reader, fds[0]) != 0)
        exit(2);
}

static void session_end(struct session *s) {
    int fd = s->reader.fd;
    frame_reader_free(&s->reader);
    close(fd); /* a writer still blocked on a full pipe gets EPIPE and stops */
    if (s->feed.keep_open)
        close(s->feed.fd);
    pthread_join(s->thread, NULL);
}

/* Appends a frame with a little-endian length, as the browser writes it on x86. */
static size_t put_frame(unsigned char *out, const char *body, size_t len) {
    out[0] = (unsigned char)(len & 0xff);
    out[1] = (unsigned char)((len >> 8) & 0xff);
    out[2] = (unsigned char)((len >> 16) & 0xff);
    out[3] = (unsigned char)((len >> 24) & 0xff);
    memcpy(out + 4, body, len);
    return 4 + len;
}

static bool next_is(struct frame_reader *r, const char *body, size_t len) {
    const unsigned char *got;
    uint32_t n;
    enum frame_status st = frame_read(r, &got, &n);
    return st == FRAME_OK && n == len && memcmp(got, body, len) == 0;
}

static const char *const BODIES[] = {
    "{\"op\":\"ping\"}", "{}",
    "{\"op\":\"echo\",\"data\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"}", ""};
#define NBODIES (sizeof BODIES / sizeof BODIES[0])

static size_t all_frames(unsigned char *out) {
    size_t n = 0;
    for (size_t i = 0; i < NBODIES; i++)
        n += put_frame(out + n, BODIES[i], strlen(BODIES[i]));
    return n;
}

static void frames_then_eof(size_t chunk) {
    unsigned char stream[256];
    size_t len = all_frames(stream);
    struct session s;
    session_start(&s, stream, len, chunk, false);
    for (size_t i = 0; i < NBODIES; i++)
        CHECK(next_is(&s.reader, BODIES[i], strlen(BODIES[i])));
    const unsigned char *body;
    uint32_t n;
    CHECK(frame_read(&s.reader, &body, &n) == FRAME_EOF);
    session_end(&s);
}

/* Many frames in one write: one read(2) returns them all, and each must come out whole. */
static void test_many_frames_in_one_write(void) {
    frames_then_eof(4096);
}

/* One byte per write: headers and bodies arrive split over many reads. */
static void test_one_byte_per_write(void) {
    frames_then_eof(1);
}

/* The length is 4 bytes, little-endian, counting bytes: a 2-byte body has header 02 00 00 00. */
static void test_length_is_four_le_bytes(void) {
    static const unsigned char stream[] = {2, 0, 0, 0, '{', '}', 1, 0, 0, 0, '7'};
    struct session s;
    session_start(&s, stream, sizeof stream, sizeof stream, false);
    CHECK(next_is(&s.reader, "{}", 2));
    CHECK(next_is(&s.reader, "7", 1));
    const unsigned char *body;
    uint32_t n;
    CHECK(frame_read(&s.reader, &body, &n) == FRAME_EOF);
    session_end(&s);
}

static enum frame_status status_of(const unsigned char *stream, size_t len, bool keep_open) {
    struct session s;
    session_start(&s, stream, len, len ? len : 1, keep_open);
    const unsigned char *body;
    uint32_t n;
    enum frame_status st = frame_read(&s.reader, &body, &n);
    session_end(&s);
    return st;
}

static void test_eof_rules(void) {
    static const unsigned char body_cut[] = {5, 0, 0, 0, '{', '}'};
    static const unsigned char header_cut[] = {5, 0};
    static const unsigned char empty_frame[] = {0, 0, 0, 0};
    CHECK(status_of(NULL, 0, false) == FRAME_EOF);
    CHECK(status_of(header_cut, sizeof header_cut, false) == FRAME_EOF_HEADER);
    CHECK(status_of(body_cut, sizeof body_cut, false) == FRAME_EOF_BODY);
    CHECK(status_of(empty_frame, sizeof empty_frame, false) == FRAME_OK);
}

/* Above the cap: refused at once, with the writer still open (no wait for the body). */
static void test_cap_checked_before_body(void) {
    static const unsigned char over[] = {0x01, 0x00, 0x00, 0x04}; /* 64 MiB + 1 */
    static const unsigned char top_bit[] = {0x00, 0x00, 0x00, 0x80};
    static const unsigned char all_ones[] = {0xff, 0xff, 0xff, 0xff}; /* -1 if read as signed */
    CHECK(status_of(over, sizeof over, true) == FRAME_TOO_LARGE);
    CHECK(status_of(top_bit, sizeof top_bit, true) == FRAME_TOO_LARGE);
    CHECK(status_of(all_ones, sizeof all_ones, true) == FRAME_TOO_LARGE);
    /* Exactly 64 MiB is allowed: with no body, that is EOF inside the body. */
    static const unsigned char at_cap[] = {0x00, 0x00, 0x00, 0x04};
    CHECK(status_of(at_cap, sizeof at_cap, false) == FRAME_EOF_BODY);
}

/* A 64 MiB body (the largest request) arrives over many reads, then a small frame. */
static void test_largest_request_then_small(void) {
    size_t big = FRAME_MAX_REQUEST;
    unsigned char *stream = malloc(big + 64);
    if (!stream)
        exit(2);
    memset(stream + 4, 'a', big);
    stream[0] = 0, stream[1] = 0, stream[2] = 0, stream[3] = 0x04;
    size_t len = 4 + big + put_frame(stream + 4 + big, "{}", 2);
    struct session s;
    session_start(&s, stream, len, 1 << 20, false);
    const unsigned char *body;
    uint32_t n;
    CHECK(frame_read(&s.reader, &body, &n) == FRAME_OK);
    CHECK(n == big && body[0] == 'a' && body[big - 1] == 'a');
    CHECK(next_is(&s.reader, "{}", 2));
    CHECK(frame_read(&s.reader, &body, &n) == FRAME_EOF);
    /* The buffer grown for 64 MiB is given back once it is empty. */
    CHECK(s.reader.cap < 1 << 20);
    session_end(&s);
    free(stream);
}

static size_t drain(int fd, unsigned char *out, size_t cap) {
    size_t n = 0;
    for (;;) {
        ssize_t got = read(fd, out + n, cap - n);
        if (got <= 0)
            return n;
        n += (size_t)got;
    }
}

/* The writer puts the byte count (not the character count) in front, little-endian. */
static void test_write_counts_bytes(void) {
    int fds[2];
    CHECK(pipe(fds) == 0);
    const char *body = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"; /* 3 characters, 9 bytes */
    unsigned char frame[4 + 9];
    memcpy(frame + 4, body, 9);
    CHECK(frame_write(fds[1], frame, 9) == 0);
    close(fds[1]);
    unsigned char got[32];
    CHECK(drain(fds[0], got, sizeof got) == 13);
    CHECK(got[0] == 9 && got[1] == 0 && got[2] == 0 && got[3] == 0);
    CHECK(memcmp(got + 4, body, 9) == 0);
    close(fds[0]);
}

/* Exactly 1 MiB goes out whole; one byte more is refused and nothing is written. */
static void test_write_reply_cap(void) {
    static unsigned char frame[4 + FRAME_MAX_REPLY + 1];
    static unsigned char got[4 + FRAME_MAX_REPLY + 16];
    memset(frame + 4, 'x', FRAME_MAX_REPLY + 1);
    FILE *tmp = tmpfile();
    CHECK(tmp != NULL);
    int fd = fileno(tmp);
    errno = 0;
    CHECK(frame_write(fd, frame, FRAME_MAX_REPLY + 1) == -1 && errno == EMSGSIZE);
    CHECK(lseek(fd, 0, SEEK_END) == 0);
    CHECK(frame_write(fd, frame, FRAME_MAX_REPLY) == 0);
    CHECK(lseek(fd, 0, SEEK_SET) == 0);
    CHECK(drain(fd, got, sizeof got) == 4 + FRAME_MAX_REPLY);
    CHECK(got[0] == 0 && got[1] == 0 && got[2] == 0x10 && got[3] == 0);
    fclose(tmp);
}

/*
 * The frame_io seam the fuzz target (fuzz/host.c) serves memory through: short reads and
 * writes of a few bytes and EINTR in between give the same frames as whole ones.
 */
static struct {
    const unsigned char *in;
    size_t in_len, in_pos;
    unsigned char out[64];
    size_t out_len;
    unsigned calls;
} mem;

static ssize_t mem_read(int fd, void *buf, size_t n) {
    (void)fd;
    if (++mem.calls % 3 == 0) {
        errno = EINTR;
        return -1;
    }
    size_t k = n < 2 ? n : 2;
    if (k > mem.in_len - mem.in_pos)
        k = mem.in_len - mem.in_pos;
    memcpy(buf, mem.in + mem.in_pos, k);
    mem.in_pos += k;
    return (ssize_t)k;
}

static ssize_t mem_write(int fd, const void *buf, size_t n) {
    (void)fd;
    if (++mem.calls % 3 == 0) {
        errno = EINTR;
        return -1;
    }
    size_t k = n < 3 ? n : 3;
    if (k > sizeof mem.out - mem.out_len)
        k = sizeof mem.out - mem.out_len;
    memcpy(mem.out + mem.out_len, buf, k);
    mem.out_len += k;
    return (ssize_t)k;
}

static void test_io_in_pieces(void) {
    static const struct frame_io io = {mem_read, mem_write};
    unsigned char stream[64];
    size_t len = put_frame(stream, "{\"op\":\"ping\"}", 13);
    len += put_frame(stream + len, "{}", 2);
    mem.in = stream;
    mem.in_len = len;
    struct frame_reader r;
    CHECK(frame_reader_init(&r, -1) == 0);
    r.io = &io;
    CHECK(next_is(&r, "{\"op\":\"ping\"}", 13));
    CHECK(next_is(&r, "{}", 2));
    const unsigned char *body;
    uint32_t n;
    CHECK(frame_read(&r, &body, &n) == FRAME_EOF);
    frame_reader_free(&r);
    unsigned char frame[4 + 13];
    memcpy(frame + 4, "{\"op\":\"pong\"}", 13);
    CHECK(frame_write_io(&io, -1, frame, 13) == 0);
    CHECK(mem.out_len == 17 && mem.out[0] == 13 &&
          memcmp(mem.out + 4, "{\"op\":\"pong\"}", 13) == 0);
}

int main(void) {
    alarm(30);
    RUN(test_many_frames_in_one_write);
    RUN(test_one_byte_per_write);
    RUN(test_length_is_four_le_bytes);
    RUN(test_eof_rules);
    RUN(test_cap_checked_before_body);
    RUN(test_largest_request_then_small);
    RUN(test_write_counts_bytes);
    RUN(test_write_reply_cap);
    RUN(test_io_in_pieces);
    return check_failures ? 1 : 0;
}
