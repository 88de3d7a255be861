/* Unit tests of the stream: framing, Cap'n Proto's packing (its documentation's example and
 * round trips), and hostile input (SPEC §6): truncation anywhere, lengths over the cap, packed
 * runs past a message's end, on memory and on a real pipe. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cce.h"
#include "check.h"
#include "stream.h"

static size_t hex(const char *text, uint8_t *out) {
    size_t n = 0;
    unsigned v;
    int used;
    while (sscanf(text, " %2x%n", &v, &used) == 1) {
        out[n++] = (uint8_t)v;
        text += used;
    }
    return n;
}

static bool packs_to(const char *words, const char *packed) {
    uint8_t in[256], want[256], got[2560];
    size_t n = hex(words, in), m = hex(packed, want);
    size_t len = stream_pack(in, n / 8, got);
    if (len == m && memcmp(got, want, m) == 0)
        return true;
    fprintf(stderr, "  got (%zu):", len);
    for (size_t i = 0; i < len; i++)
        fprintf(stderr, " %02x", got[i]);
    fprintf(stderr, "\n");
    return false;
}

static void test_packing(void) {
    /* The example of Cap'n Proto's encoding documentation. */
    CHECK(packs_to("08 00 00 00 03 00 02 00  19 00 00 00 aa 01 00 00", "51 08 03 02 31 19 aa 01"));
    /* A zero word, then a run of two more. */
    CHECK(packs_to("00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 00",
                   "00 02"));
    /* An all-nonzero word, then the words with at most one zero byte verbatim, up to one with
     * two. */
    CHECK(packs_to("01 02 03 04 05 06 07 08  11 12 13 14 15 16 17 00  "
                   "21 22 23 24 25 26 00 00",
                   "ff 01 02 03 04 05 06 07 08 01 11 12 13 14 15 16 17 00 3f 21 22 23 24 25 26"));
    CHECK(packs_to("01 02 03 04 05 06 07 08", "ff 01 02 03 04 05 06 07 08 00"));
}

/* A frame of `len` body bytes (a pattern with zeros and runs) sent and read back. */
static void round_trip(size_t len, bool packed) {
    static struct writer w;
    static struct reader r;
    static bool ready;
    if (!ready) {
        writer_init(&w);
        reader_init(&r, -1);
        ready = true;
    }
    uint8_t *body = writer_begin(&w, len);
    for (size_t i = 0; i < len; i++)
        body[i] = (i / 64) % 3 == 0 ? 0 : (uint8_t)(i * 7 + 1) | ((i / 64) % 3 == 1);
    size_t n;
    const uint8_t *bytes = writer_finish(&w, packed, &n);
    reader_set_memory(&r, bytes, n);
    const uint8_t *got;
    size_t got_len;
    CHECK(reader_next(&r, packed, &got, &got_len) == READ_MESSAGE);
    CHECK(got_len == len && memcmp(got, w.frame + 4, len) == 0);
    CHECK(reader_consumed(&r) == r.taken); /* the whole message, no more */
    CHECK(reader_next(&r, packed, &got, &got_len) == READ_END);
}

static void test_round_trips(void) {
    for (size_t len = 0; len < 300; len++) {
        round_trip(len, false);
        round_trip(len, true);
    }
    round_trip(100000, true);
    round_trip(100000, false);
}

/* What reading `len` bytes of `bytes` (and no more) gives. */
static enum read_status read_memory(const uint8_t *bytes, size_t len, bool packed) {
    struct reader r;
    reader_init(&r, -1);
    reader_set_memory(&r, bytes, len);
    const uint8_t *body;
    size_t n;
    enum read_status s = reader_next(&r, packed, &body, &n);
    CHECK(s != READ_ERROR || r.error[0] != '\0');
    reader_destroy(&r);
    return s;
}

static enum read_status read_hex(const char *text, bool packed) {
    uint8_t bytes[256];
    return read_memory(bytes, hex(text, bytes), packed);
}

static void test_every_truncation_is_an_error(void) {
    struct writer w;
    writer_init(&w);
    uint8_t *body = writer_begin(&w, 40);
    for (int i = 0; i < 40; i++)
        body[i] = (uint8_t)(i % 5 ? i : 0);
    for (int packed = 0; packed < 2; packed++) {
        size_t n;
        const uint8_t *bytes = writer_finish(&w, packed, &n);
        CHECK(read_memory(bytes, 0, packed) == READ_END);
        for (size_t len = 1; len < n; len++)
            CHECK(read_memory(bytes, len, packed) == READ_ERROR);
        CHECK(read_memory(bytes, n, packed) == READ_MESSAGE);
    }
    writer_destroy(&w);
}

static void test_hostile_lengths_and_runs(void) {
    /* 64 MiB is allowed (and then missing), one byte more is refused before anything. */
    CHECK(read_hex("00 00 00 04", false) == READ_ERROR);
    CHECK(read_hex("01 00 00 04", false) == READ_ERROR);
    CHECK(read_hex("ff ff ff ff", false) == READ_ERROR);
    CHECK(read_hex("0f 01 00 00 04", true) == READ_ERROR);
    CHECK(read_hex("0f ff ff ff ff", true) == READ_ERROR);
    /* An empty body is one zero word: a run of one more zero word passes its end. */
    CHECK(read_hex("00 00", true) == READ_MESSAGE);
    CHECK(read_hex("00 01", true) == READ_ERROR);
    /* 12 bytes are two words: the second as a zero word with no run is fine, a run is not. */
    CHECK(read_hex("01 0c 00 00", true) == READ_MESSAGE);
    CHECK(read_hex("01 0c 00 01", true) == READ_ERROR);
    CHECK(read_hex("01 0c 00 ff", true) == READ_ERROR);
    /* The second word all nonzero: a verbatim run of 0 is fine, of 1 passes the end. */
    CHECK(read_hex("01 0c ff 01 02 03 04 05 06 07 08 00", true) == READ_MESSAGE);
    CHECK(read_hex("01 0c ff 01 02 03 04 05 06 07 08 01 01 02 03 04 05 06 07 08", true) ==
          READ_ERROR);
    /* Cut inside a word, before a run's count. */
    CHECK(read_hex("01 0c ff 01 02 03", true) == READ_ERROR);
    CHECK(read_hex("01 0c ff 01 02 03 04 05 06 07 08", true) == READ_ERROR);
}

/* Messages through a real pipe, written by a child in pieces: small ones read in place, one
 * larger than the read buffer, and the end of input inside a message at the end. */
static void test_pipe(void) {
    int fds[2];
    CHECK(pipe(fds) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        struct writer w;
        writer_init(&w);
        for (size_t len = 0; len < 200000; len = len * 3 + 1) {
            uint8_t *body = writer_begin(&w, len);
            memset(body, 0x5a, len);
            size_t n;
            const uint8_t *bytes = writer_finish(&w, true, &n);
            for (size_t i = 0; i < n; i += 1000) /* one byte at a time would be slow */
                write_all(fds[1], bytes + i, n - i < 1000 ? n - i : 1000);
        }
        write_all(fds[1], (const uint8_t *)"\x0f\x10\x00\x00", 4); /* a cut first word */
        _exit(0);
    }
    close(fds[1]);
    struct reader r;
    reader_init(&r, fds[0]);
    const uint8_t *body;
    size_t n;
    for (size_t len = 0; len < 200000; len = len * 3 + 1) {
        CHECK(reader_next(&r, true, &body, &n) == READ_MESSAGE);
        CHECK(n == len && (len == 0 || (body[0] == 0x5a && body[len - 1] == 0x5a)));
    }
    CHECK(reader_next(&r, true, &body, &n) == READ_ERROR);
    CHECK(strstr(r.error, "ends inside a message") != NULL);
    reader_destroy(&r);
    close(fds[0]);
    waitpid(pid, NULL, 0);
}

int main(void) {
    RUN(test_packing);
    RUN(test_round_trips);
    RUN(test_every_truncation_is_an_error);
    RUN(test_hostile_lengths_and_runs);
    RUN(test_pipe);
    return check_failures == 0 ? 0 : 1;
}
