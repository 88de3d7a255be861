/*
 * libFuzzer target `host` (workloads/nativemsg/fuzz/README.md): the input is what the browser
 * writes on the host's stdin. The host's own serve loop (host_serve_io: framing.c's reader,
 * protocol.c, framing.c's writer) runs over it with memory in place of read(2) and write(2),
 * twice: once with every read and write taking all it may, once with both cut into pieces
 * whose sizes are drawn from the input (and an EINTR now and then). Shared by ../c-yajl, whose
 * protocol.c is the only difference.
 *
 * Checked, a failure being an abort():
 * - every reply frame announces at most 1 MiB and its body is one JSON object in valid UTF-8;
 * - one reply per complete request frame, and the exit status SPEC §3 gives the stream (0 at EOF
 *   on a frame boundary, 1 after EOF inside a frame or a length above 64 MiB), as counted here
 *   by a walk over the input that shares no code with the host;
 * - both runs write the same bytes and return the same status.
 */
#include "host.h"
#include "framing.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NATIVEMSG_FUZZ_JANSSON
#include <jansson.h>
#endif

/*
 * The checks below walk every byte the host writes (a fill reply is 1 MiB, and an input may ask
 * for hundreds): they are left out of coverage and sanitizer instrumentation, which would make them
 * the slowest part of a run (near the 10 s timeout) and mean nothing about the host. They read
 * only the target's own buffers.
 */
#define NO_COVERAGE __attribute__((no_sanitize("address", "undefined", "coverage")))

/* ---- a strict JSON check (RFC 8259), independent of either host's library ---------------- */

NO_COVERAGE static size_t skip_ws(const unsigned char *s, size_t n, size_t i) {
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
        i++;
    return i;
}

NO_COVERAGE static bool is_cont(unsigned char c) {
    return (c & 0xC0) == 0x80;
}

/* The length of the well-formed UTF-8 sequence at s[i] (>= 0x80), or 0. */
NO_COVERAGE static size_t utf8_len(const unsigned char *s, size_t n, size_t i) {
    unsigned char c = s[i];
    size_t left = n - i;
    if (c >= 0xC2 && c <= 0xDF)
        return left >= 2 && is_cont(s[i + 1]) ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return left >= 3 && s[i + 1] >= lo && s[i + 1] <= hi && is_cont(s[i + 2]) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return left >= 4 && s[i + 1] >= lo && s[i + 1] <= hi && is_cont(s[i + 2]) &&
                       is_cont(s[i + 3])
                   ? 4
                   : 0;
    }
    return 0;
}

NO_COVERAGE static bool is_hex(unsigned char c) {
    return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f');
}

/* s[i] is '"': the offset after the closing quote, or 0. */
NO_COVERAGE static size_t check_string(const unsigned char *s, size_t n, size_t i) {
    for (i++; i < n;) {
        /* Eight plain bytes (printable ASCII other than '"' and '\\') at a time. */
        while (n - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            const uint64_t ones = 0x0101010101010101ull, highs = 0x8080808080808080ull;
            uint64_t quote = w ^ (ones * '"'), backslash = w ^ (ones * '\\');
            /* A byte below 0x20, a zero byte of quote or backslash, a byte >= 0x80. */
            uint64_t control = (w - ones * 0x20) & ~w & highs;
            uint64_t special = ((quote - ones) & ~quote & highs) |
                               ((backslash - ones) & ~backslash & highs) | (w & highs);
            if (control | special)
                break;
            i += 8;
        }
        if (i >= n)
            break;
        unsigned char c = s[i];
        if (c == '"')
            return i + 1;
        if (c < 0x20)
            return 0;
        if (c == '\\') {
            if (i + 1 >= n)
                return 0;
            unsigned char e = s[i + 1];
            if (e == 'u') {
                if (n - i < 6 || !is_hex(s[i + 2]) || !is_hex(s[i + 3]) || !is_hex(s[i + 4]) ||
                    !is_hex(s[i + 5]))
                    return 0;
                i += 6;
            } else if (e != '\0' && strchr("\"\\/bfnrt", e)) {
                i += 2;
            } else {
                return 0;
            }
        } else if (c >= 0x80) {
            size_t k = utf8_len(s, n, i);
            if (!k)
                return 0;
            i += k;
        } else {
            i++;
        }
    }
    return 0;
}

NO_COVERAGE static size_t digits(const unsigned char *s, size_t n, size_t i) {
    while (i < n && s[i] >= '0' && s[i] <= '9')
        i++;
    return i;
}

/* A number, true, false or null at s[i]: the offset after it, or 0. */
NO_COVERAGE static size_t check_scalar(const unsigned char *s, size_t n, size_t i) {
    static const char *const words[] = {"true", "false", "null"};
    for (size_t w = 0; w < 3; w++) {
        size_t k = strlen(words[w]);
        if (n - i >= k && memcmp(s + i, words[w], k) == 0)
            return i + k;
    }
    if (i < n && s[i] == '-')
        i++;
    if (i >= n)
        return 0;
    if (s[i] == '0')
        i++;
    else if (s[i] >= '1' && s[i] <= '9')
        i = digits(s, n, i);
    else
        return 0;
    if (i < n && s[i] == '.') {
        size_t j = digits(s, n, i + 1);
        if (j == i + 1)
            return 0;
        i = j;
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-'))
            i++;
        size_t j = digits(s, n, i);
        if (j == i)
            return 0;
        i = j;
    }
    return i;
}

/* Whether s[0..n) is exactly one JSON object. Iterative: echoed data may nest deeply. */
NO_COVERAGE static bool check_object(const unsigned char *s, size_t n) {
    size_t i = skip_ws(s, n, 0);
    if (i >= n || s[i] != '{')
        return false;
    char *stack = malloc(n); /* never deeper than the text is long */
    if (!stack)
        abort();
    size_t depth = 0;
    bool ok = false;
    for (;;) {
        /* A value starts at s[i] (after whitespace). */
        i = skip_ws(s, n, i);
        if (i >= n)
            goto done;
        if (s[i] == '{' || s[i] == '[') {
            char open = (char)s[i];
            stack[depth++] = open;
            i = skip_ws(s, n, i + 1);
            if (i < n && s[i] == (open == '{' ? '}' : ']')) {
                depth--;
                i++;
            } else if (open == '{') {
                /* The first member's name and colon; its value is next. */
                if (i >= n || s[i] != '"' || !(i = check_string(s, n, i)))
                    goto done;
                i = skip_ws(s, n, i);
                if (i >= n || s[i++] != ':')
                    goto done;
                continue;
            } else {
                continue;
            }
        } else if (s[i] == '"') {
            if (!(i = check_string(s, n, i)))
                goto done;
        } else if (!(i = check_scalar(s, n, i))) {
            goto done;
        }
        /* After a complete value: a separator or the end of its container. */
        for (;;) {
            i = skip_ws(s, n, i);
            if (depth == 0) {
                ok = i == n;
                goto done;
            }
            if (i >= n)
                goto done;
            char top = stack[depth - 1];
            if (s[i] == (top == '{' ? '}' : ']')) {
                depth--;
                i++;
                continue;
            }
            if (s[i] != ',')
                goto done;
            i = skip_ws(s, n, i + 1);
            if (top == '{') {
                if (i >= n || s[i] != '"' || !(i = check_string(s, n, i)))
                    goto done;
                i = skip_ws(s, n, i);
                if (i >= n || s[i++] != ':')
                    goto done;
            }
            break; /* the next value */
        }
    }
done:
    free(stack);
    return ok;
}

/* ---- memory in place of the host's stdin and stdout --------------------------------------- */

static uint64_t mix(uint64_t *state) {
    /* splitmix64: the piece sizes of the cut run. */
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

struct run {
    const uint8_t *in;
    size_t in_len, in_pos;
    bool cut;     /* reads and writes in pieces */
    uint64_t rng; /* the pieces, when cut */
    /* What the host wrote, taken apart frame by frame as it arrives. */
    unsigned char header[FRAME_HEADER_SIZE];
    size_t header_have;
    uint32_t body_len;
    unsigned char *body; /* FRAME_MAX_REPLY bytes */
    size_t body_have;
    size_t replies;
    uint64_t out_hash; /* FNV-1a of every reply frame, header and body */
    uint64_t out_len;
};

static struct run *current;

/* How many bytes the next read or write of the cut run moves: mostly a few, now and then a
 * lot; 0 stands for an EINTR. */
static size_t piece(struct run *r, size_t want) {
    if (!r->cut)
        return want;
    uint64_t x = mix(&r->rng);
    size_t n;
    switch (x & 7) {
    case 0:
        return 0;
    case 1:
    case 2:
        n = 1 + (x >> 8) % 4;
        break;
    case 3:
    case 4:
        n = 1 + (x >> 8) % 64;
        break;
    case 5:
        n = 1 + (x >> 8) % 4096;
        break;
    default:
        n = want;
        break;
    }
    return n < want ? n : want;
}

static ssize_t memory_read(int fd, void *buf, size_t n) {
    (void)fd;
    struct run *r = current;
    size_t k = piece(r, n);
    if (k == 0 && n > 0) {
        errno = EINTR;
        return -1;
    }
    size_t left = r->in_len - r->in_pos;
    if (k > left)
        k = left;
    memcpy(buf, r->in + r->in_pos, k);
    r->in_pos += k;
    return (ssize_t)k;
}

/* A hash of the replies, to compare the two runs: FNV-1a over 8-byte words. */
NO_COVERAGE static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n) {
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 0x100000001B3ull;
        h ^= h >> 29;
    }
    for (; i < n; i++)
        h = (h ^ p[i]) * 0x100000001B3ull;
    return h;
}

NO_COVERAGE static void reply_complete(struct run *r) {
    r->out_hash = fnv(fnv(r->out_hash, r->header, FRAME_HEADER_SIZE), r->body, r->body_len);
    if (!check_object(r->body, r->body_len)) {
        fprintf(stderr, "fuzz host: reply %zu is not a JSON object: %.*s\n", r->replies,
                (int)(r->body_len < 300 ? r->body_len : 300), (const char *)r->body);
        abort();
    }
    r->replies++;
    r->header_have = 0;
    r->body_have = 0;
}

static ssize_t memory_write(int fd, const void *buf, size_t n) {
    (void)fd;
    struct run *r = current;
    size_t k = piece(r, n);
    if (k == 0 && n > 0) {
        errno = EINTR;
        return -1;
    }
    const unsigned char *p = buf;
    for (size_t i = 0; i < k;) {
        if (r->header_have < FRAME_HEADER_SIZE) {
            r->header[r->header_have++] = p[i++];
            if (r->header_have == FRAME_HEADER_SIZE) {
                r->body_len = (uint32_t)r->header[0] | (uint32_t)r->header[1] << 8 |
                              (uint32_t)r->header[2] << 16 | (uint32_t)r->header[3] << 24;
                if (r->body_len > FRAME_MAX_REPLY) {
                    fprintf(stderr, "fuzz host: reply of %u bytes\n", r->body_len);
                    abort();
                }
                if (r->body_len == 0)
                    reply_complete(r);
            }
        } else {
            size_t take = r->body_len - r->body_have;
            if (take > k - i)
                take = k - i;
            memcpy(r->body + r->body_have, p + i, take);
            r->body_have += take;
            i += take;
            if (r->body_have == r->body_len)
                reply_complete(r);
        }
    }
    r->out_len += k;
    return (ssize_t)k;
}

static const struct frame_io memory_io = {memory_read, memory_write};

static int serve(struct run *r) {
    current = r;
    int status = host_serve_io(&memory_io, 0, 1);
    current = NULL;
    if (r->header_have != 0) {
        fprintf(stderr, "fuzz host: the host stopped inside a reply frame\n");
        abort();
    }
    return status;
}

/* ---- the target ---------------------------------------------------------------------------- */

#ifdef NATIVEMSG_FUZZ_JANSSON
int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    /* jansson's hash seed is set once per process (the host's own getrandom seed then does
     * nothing): a fixed one keeps each input's path the same from run to run. */
    json_object_seed(1);
    return 0;
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    /* What SPEC §3 makes of the stream, from the length prefixes alone. */
    size_t frames = 0, at = 0;
    int want_status;
    for (;;) {
        size_t left = size - at;
        if (left == 0) {
            want_status = 0;
            break;
        }
        if (left < 4) {
            want_status = 1;
            break;
        }
        uint32_t n = (uint32_t)data[at] | (uint32_t)data[at + 1] << 8 |
                     (uint32_t)data[at + 2] << 16 | (uint32_t)data[at + 3] << 24;
        if (n > 64u * 1024 * 1024 || left - 4 < n) {
            want_status = 1;
            break;
        }
        frames++;
        at += 4 + (size_t)n;
    }

    static unsigned char *body;
    if (!body && !(body = malloc(FRAME_MAX_REPLY)))
        abort();
    uint64_t seed = 0xCBF29CE484222325ull;
    for (size_t i = 0; i < size; i++)
        seed = (seed ^ data[i]) * 0x100000001B3ull;

    struct run whole = {
        .in = data, .in_len = size, .body = body, .out_hash = 0xCBF29CE484222325ull};
    int status = serve(&whole);
    if (status != want_status || whole.replies != frames) {
        fprintf(stderr, "fuzz host: status %d after %zu replies, want %d after %zu\n", status,
                whole.replies, want_status, frames);
        abort();
    }
    struct run cut = {.in = data,
                      .in_len = size,
                      .cut = true,
                      .rng = seed,
                      .body = body,
                      .out_hash = 0xCBF29CE484222325ull};
    int cut_status = serve(&cut);
    if (cut_status != status || cut.replies != whole.replies || cut.out_len != whole.out_len ||
        cut.out_hash != whole.out_hash) {
        fprintf(stderr,
                "fuzz host: in pieces: status %d, %zu replies, %llu bytes; whole: status %d, "
                "%zu replies, %llu bytes\n",
                cut_status, cut.replies, (unsigned long long)cut.out_len, status, whole.replies,
                (unsigned long long)whole.out_len);
        abort();
    }
    return 0;
}
