/*
 * libFuzzer target `host` (workloads/nativemsg/fuzz/README.md): the input is what the browser
 * writes on the floor's stdin.
 *
 * How it reaches the code: this file includes ../main.c itself, so the floor keeps its one file
 * and its release build is untouched (not a line of it differs). Before the include, read(2)
 * and write(2) are macros for the stand-ins below, which serve stdin from the input and collect
 * stdout and stderr in memory, and main() is renamed. The loop then runs exactly as in the
 * program, twice per input: once with every read taking all it may, once with the reads cut
 * into pieces whose sizes are drawn from the input (with an EINTR now and then). Between runs
 * the floor's static buffer state is put back as at start-up. The one difference from the
 * program: the first buffer (CHUNK) is 64 bytes instead of 64 KiB, so that inputs of a few KiB
 * reach what only frames above 64 KiB reach in the program (moving the pending bytes down,
 * growing the buffer, and going back to the static one after a large frame).
 *
 * Checked, a failure being an abort():
 * - every reply frame announces at most 1 MiB and is the fixed pong, the fixed too-big error,
 *   or the request's own frame when its body starts with {"op":"echo" (SPEC §4);
 * - what both runs write and return is what a walk over the input that shares no code with the
 *   floor expects (SPEC §3-4): one reply per complete frame, in order, then exit status 0 at EOF
 *   on a frame boundary, or 1 and the floor's stderr line after EOF inside a frame or a length
 *   above 64 MiB.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static ssize_t fuzz_read(int fd, void *buf, size_t n);
static ssize_t fuzz_write(int fd, const void *buf, size_t n);

#define read(fd, buf, n) fuzz_read(fd, buf, n)
#define write(fd, buf, n) fuzz_write(fd, buf, n)
#define main nativemsg_baseline_main
#define CHUNK 64u /* the first buffer: 64 KiB in the program (see the top of this file) */
#include "../main.c"
#undef main
#undef write
#undef read

/* ---- memory in place of the process's stdin, stdout and stderr ----------------------------- */

struct bytes {
    unsigned char *p;
    size_t len, cap;
};

static void append(struct bytes *b, const void *data, size_t n) {
    if (b->cap - b->len < n) {
        size_t want = b->cap ? b->cap : 256;
        while (want - b->len < n)
            want *= 2;
        b->p = realloc(b->p, want);
        if (!b->p)
            abort();
        b->cap = want;
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static const unsigned char *in;
static size_t in_len, in_pos;
static uint64_t rng;   /* 0: reads take all they may */
static unsigned reads; /* calls of read(2) in this run */
static struct bytes out, err;

static uint64_t next_random(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

static ssize_t fuzz_read(int fd, void *buf, size_t n) {
    if (fd != STDIN_FILENO)
        abort();
    /* Each read moves a byte, ends the input or is an EINTR: more calls mean a loop that spins. */
    if (++reads > 4 * in_len + 64)
        abort();
    size_t left = in_len - in_pos, take = n < left ? n : left;
    if (rng != 0) {
        uint64_t r = next_random();
        if (r % 16 == 0) {
            errno = EINTR;
            return -1;
        }
        size_t piece = 1 + (size_t)(r >> 8) % (r & 16 ? 7 : 300);
        if (take > piece)
            take = piece;
    }
    memcpy(buf, in + in_pos, take);
    in_pos += take;
    return (ssize_t)take;
}

static ssize_t fuzz_write(int fd, const void *buf, size_t n) {
    if (fd == STDOUT_FILENO)
        append(&out, buf, n);
    else if (fd == STDERR_FILENO)
        append(&err, buf, n);
    else
        abort();
    return (ssize_t)n;
}

/* ---- what SPEC §3-4 says the floor answers, walked here without its code -------------------- */

struct outcome {
    int status;
    struct bytes out;
    const char *error; /* the stderr line's message, or NULL */
};

static void put_frame(struct bytes *b, const void *body, uint32_t n) {
    append(b, &n, 4); /* native byte order, like the floor */
    append(b, body, n);
}

static void expect(const unsigned char *d, size_t n, struct outcome *o) {
    static const char pong[] = "{\"op\":\"pong\"}";
    static const char too_big[] = "{\"error\":\"echo reply would exceed the 1 MiB reply limit\"}";
    static const char echo[] = "{\"op\":\"echo\"";
    size_t at = 0;
    for (;;) {
        size_t left = n - at;
        if (left == 0) {
            o->status = 0;
            return;
        }
        o->status = 1;
        if (left < 4) {
            o->error = "end of input inside a length prefix";
            return;
        }
        uint32_t len;
        memcpy(&len, d + at, 4);
        if (len > 64u << 20) {
            o->error = "length prefix above the 64 MiB request limit";
            return;
        }
        if (left - 4 < len) {
            o->error = "end of input inside a message body";
            return;
        }
        const unsigned char *body = d + at + 4;
        if (len >= sizeof echo - 1 && memcmp(body, echo, sizeof echo - 1) == 0) {
            if (len <= 1u << 20)
                put_frame(&o->out, body, len);
            else
                put_frame(&o->out, too_big, sizeof too_big - 1);
        } else {
            put_frame(&o->out, pong, sizeof pong - 1);
        }
        at += 4 + (size_t)len;
    }
}

/* Every frame on stdout whole and within the 1 MiB reply limit. */
static void check_frames(const struct bytes *b) {
    size_t at = 0;
    while (at < b->len) {
        uint32_t len;
        if (b->len - at < 4)
            abort();
        memcpy(&len, b->p + at, 4);
        if (len > 1u << 20 || b->len - at - 4 < len)
            abort();
        at += 4 + (size_t)len;
    }
}

/* The floor's state as at start-up: nothing buffered, the static chunk in use. */
static void reset_floor(void) {
    if (buf != chunk)
        free(buf);
    buf = chunk;
    cap = CHUNK;
    start = end = 0;
}

static void run(const unsigned char *data, size_t size, uint64_t seed, const struct outcome *want) {
    in = data;
    in_len = size;
    in_pos = 0;
    rng = seed;
    reads = 0;
    out.len = err.len = 0;
    reset_floor();
    int status = nativemsg_baseline_main();
    reset_floor();

    check_frames(&out);
    if (status != want->status || out.len != want->out.len ||
        (out.len != 0 && memcmp(out.p, want->out.p, out.len) != 0))
        abort();
    if (want->error == NULL) {
        if (err.len != 0)
            abort();
    } else {
        char line[160];
        int n = snprintf(line, sizeof line, "nativemsg-baseline: %s\n", want->error);
        if (err.len != (size_t)n || memcmp(err.p, line, err.len) != 0)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    struct outcome want = {0};
    expect(data, size, &want);

    /* The pieces' sizes: FNV-1a of the input, never 0 (0 means whole reads). */
    uint64_t seed = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        seed = (seed ^ data[i]) * 0x100000001b3ull;
    seed |= 1;

    run(data, size, 0, &want);
    run(data, size, seed, &want);
    free(want.out.p);
    return 0;
}
