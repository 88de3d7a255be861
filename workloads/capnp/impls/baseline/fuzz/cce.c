/*
 * libFuzzer target `cce` (workloads/capnp/fuzz/README.md): byte 0 the case (modulo 3: carsales,
 * catrank, eval), byte 1 flags (bit 0 packed; bit 1 reuse, this target's own use of a spare bit:
 * the arenas of SPEC §4's two REUSE settings are different code), the rest what the floor's
 * `server` mode reads on stdin: messages framed as a u32 length and a CCE body (SPEC §3.5, §7),
 * packed or not.
 *
 * How it reaches the code: this file includes ../src/stream.c and ../src/modes.c themselves, so
 * the floor's release build is untouched (not a line of it differs). Before the includes, read(2)
 * and write(2) are macros for stand-ins that serve the input from memory and collect what is
 * written, and in modes.c exit() returns here with longjmp and fputs() keeps the error line:
 * modes_fail(), the floor's one error path (a line on stderr, exit status 1), ends the run as it
 * ends the program. The server then runs what modes_server() runs, on a static `struct server`
 * so that it is destroyed whichever way the run ends: server_read() (the reader on a descriptor
 * with the SPEC §6 limits), server_answer() (decode, serve, encode, frame, pack) and write_all(),
 * until the end of the input or the error. The other sources (arena.c, cce.c and the cases) are
 * linked as they are.
 *
 * Checked, a failure being an abort():
 * - the input read whole and read in pieces whose sizes are drawn from the input (with an EINTR
 *   now and then) gives the same responses, byte for byte, and the same end: the end of input at
 *   a message boundary, or the same error line;
 * - the responses written, read back by the client's reader and decode_response() for the case,
 *   are that many well-formed messages and nothing else.
 * The same input is also given to the client's reader and decode_response() (the response
 * decoders are not the request decoders) until its end or the first error.
 */
#define _GNU_SOURCE /* as modes.c: pipe2, wait4 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cce.h"
#include "modes.h"
#include "stream.h"

static ssize_t fuzz_read(int fd, void *buf, size_t n);
static ssize_t fuzz_write(int fd, const void *buf, size_t n);
static _Noreturn void fuzz_exit(int status);
static int fuzz_fputs(const char *s, FILE *f);

#define read(fd, buf, n) fuzz_read(fd, buf, n)
#define write(fd, buf, n) fuzz_write(fd, buf, n)
#include "../src/stream.c"
#define exit(status) fuzz_exit(status)
#define fputs(s, f) fuzz_fputs(s, f)
#include "../src/modes.c"
#undef fputs
#undef exit
#undef write
#undef read

#define IN_FD 100  /* what a reader reads: the input, or the server's output */
#define OUT_FD 101 /* the server's stdout */

/* ---- descriptors in memory ------------------------------------------------------------------ */

struct bytes {
    uint8_t *p;
    size_t len, cap;
};

static void append(struct bytes *b, const void *data, size_t n) {
    if (n == 0)
        return;
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

static struct {
    const uint8_t *p;
    size_t len, pos;
    uint64_t rng; /* 0: every read takes all it may */
    unsigned calls;
} in;
static struct bytes *out;
static char error_line[512];
static jmp_buf failed;

static void set_input(const uint8_t *p, size_t len, uint64_t rng) {
    in.p = p;
    in.len = len;
    in.pos = 0;
    in.rng = rng;
    in.calls = 0;
}

static ssize_t fuzz_read(int fd, void *buf, size_t n) {
    if (fd != IN_FD)
        abort();
    /* No reader needs more calls than bytes (plus the EINTRs and the end). */
    if (++in.calls > 4 * in.len + 64)
        abort();
    size_t left = in.len - in.pos, take = n < left ? n : left;
    if (in.rng != 0) {
        in.rng ^= in.rng << 13;
        in.rng ^= in.rng >> 7;
        in.rng ^= in.rng << 17;
        if (in.rng % 16 == 0) {
            errno = EINTR;
            return -1;
        }
        size_t most = 1 + (size_t)(in.rng >> 8) % (in.rng & 16 ? 9 : 300);
        if (take > most)
            take = most;
    }
    if (take > 0)
        memcpy(buf, in.p + in.pos, take);
    in.pos += take;
    return (ssize_t)take;
}

static ssize_t fuzz_write(int fd, const void *buf, size_t n) {
    if (fd != OUT_FD || out == NULL)
        abort();
    append(out, buf, n);
    return (ssize_t)n;
}

static _Noreturn void fuzz_exit(int status) {
    if (status != 1)
        abort();
    longjmp(failed, 1);
}

static int fuzz_fputs(const char *s, FILE *f) {
    if (f != stderr)
        abort();
    snprintf(error_line, sizeof error_line, "%s", s);
    return 0;
}

/* ---- the server, as modes_server() runs it -------------------------------------------------- */

struct served {
    bool failed;
    uint64_t answered;
    struct bytes out;
    char error[512];
};

static struct server server;

static void serve(const struct run *run, const uint8_t *stream, size_t len, uint64_t rng,
                  struct served *res) {
    set_input(stream, len, rng);
    out = &res->out;
    error_line[0] = '\0';
    current = run;
    server_init(&server, run, IN_FD);
    if (setjmp(failed) == 0) {
        const uint8_t *body;
        size_t body_len;
        while (server_read(&server, &body, &body_len)) {
            size_t out_len;
            const uint8_t *bytes = server_answer(&server, body, body_len, &out_len);
            if (!write_all(OUT_FD, bytes, out_len))
                abort();
            res->answered++;
        }
    } else {
        res->failed = true;
        memcpy(res->error, error_line, sizeof res->error);
    }
    server_destroy(&server);
    out = NULL;
}

/* The client's side: responses read from `bytes` and decoded; how many, and whether the input
 * ended at a message boundary after them. */
static uint64_t read_responses(const struct run *run, const uint8_t *bytes, size_t len,
                               bool *clean_end) {
    static struct reader reader;
    static struct arena arena;
    set_input(bytes, len, 0);
    if (!reader_init(&reader, IN_FD))
        abort();
    arena_init(&arena, run->reuse);
    uint64_t n = 0;
    *clean_end = false;
    for (;;) {
        const uint8_t *body;
        size_t body_len;
        enum read_status st = reader_next(&reader, run->packed, &body, &body_len);
        if (st != READ_MESSAGE) {
            *clean_end = st == READ_END;
            break;
        }
        struct cce c;
        cce_init(&c, body, body_len);
        if (run->ops->decode_response(&c, &arena) == NULL)
            break;
        arena_release(&arena);
        n++;
    }
    arena_destroy(&arena);
    reader_destroy(&reader);
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const struct case_ops *const cases[] = {&carsales_ops, &catrank_ops, &eval_ops};
    if (size < 2)
        return 0;
    struct run run = {
        .ops = cases[data[0] % 3],
        .mode = MODE_SERVER,
        .packed = data[1] & 1,
        .reuse = data[1] >> 1 & 1,
        .iterations = 1,
    };
    const uint8_t *stream = data + 2;
    size_t len = size - 2;

    /* The pieces' sizes: FNV-1a of the input, never 0 (0 means whole reads). */
    uint64_t seed = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < size; i++)
        seed = (seed ^ data[i]) * 0x100000001b3ull;
    seed |= 1;

    static struct served whole, split;
    whole.failed = split.failed = false;
    whole.answered = split.answered = 0;
    whole.out.len = split.out.len = 0;
    whole.error[0] = split.error[0] = '\0';
    serve(&run, stream, len, 0, &whole);
    serve(&run, stream, len, seed, &split);
    if (whole.failed != split.failed || whole.answered != split.answered ||
        whole.out.len != split.out.len ||
        (whole.out.len != 0 && memcmp(whole.out.p, split.out.p, whole.out.len) != 0))
        abort();
    if (whole.failed && (whole.error[0] == '\0' || strcmp(whole.error, split.error) != 0))
        abort();

    bool clean_end;
    if (read_responses(&run, whole.out.p, whole.out.len, &clean_end) != whole.answered ||
        !clean_end)
        abort();
    read_responses(&run, stream, len, &clean_end);
    return 0;
}
