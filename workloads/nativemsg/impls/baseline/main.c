/*
 * nativemsg-baseline: the floor that every nativemsg host is measured against (SPEC.md
 * section 4). It frames exactly like a real host (4-byte native-order length, 64 MiB request
 * cap checked before anything is read or allocated, the same EOF rules and exit statuses) but
 * does the least work a reply allows: it parses no JSON. A body that starts with
 * {"op":"echo" is sent back byte for byte (the request is itself a valid echo reply), and
 * every other body gets a fixed {"op":"pong"}.
 *
 * Plain read(2)/write(2), no stdio, and a static binary: no dynamic loader at start-up, no
 * buffering layer per message.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEADER 4u
#define MAX_REQUEST (64u * 1024u * 1024u)
#define MAX_REPLY (1024u * 1024u)
/* One pipe's worth (64 KiB): a single read(2) drains a full pipe. (fuzz/host.c sets a smaller
 * one, so that its small inputs reach the buffer's growth.) */
#ifndef CHUNK
#define CHUNK (64u * 1024u)
#endif

/* Fixed reply frames; a uint32_t member puts the length in native byte order. */
#define FIXED_FRAME(name, text)                                                                    \
    static const struct {                                                                          \
        uint32_t len;                                                                              \
        char body[sizeof text - 1];                                                                \
    } name = {sizeof text - 1, text}
FIXED_FRAME(PONG, "{\"op\":\"pong\"}");
FIXED_FRAME(TOO_BIG, "{\"error\":\"echo reply would exceed the 1 MiB reply limit\"}");

static const char ECHO_PREFIX[] = "{\"op\":\"echo\"";

/* The initial buffer is static (no allocation at start-up); larger frames get heap memory. */
static unsigned char chunk[CHUNK];
static unsigned char *buf = chunk;
static size_t cap = CHUNK;
static size_t start, end;

/* One line on stderr, in a single write(2); returns the exit status of a broken stream. */
static int fail(const char *message) {
    static const char prefix[] = "nativemsg-baseline: ";
    char line[128];
    size_t len = strlen(message);
    memcpy(line, prefix, sizeof prefix - 1);
    memcpy(line + sizeof prefix - 1, message, len);
    line[sizeof prefix - 1 + len] = '\n';
    /* Best effort: if stderr is gone there is nobody left to tell. */
    ssize_t ignored = write(STDERR_FILENO, line, sizeof prefix + len);
    (void)ignored;
    return 1;
}

static int write_all(const void *data, size_t len) {
    const unsigned char *p = data;
    while (len > 0) {
        ssize_t put = write(STDOUT_FILENO, p, len);
        if (put < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        p += put;
        len -= (size_t)put;
    }
    return 0;
}

/* Room for `need` bytes from `start`: move the pending bytes down, or grow the buffer. */
static int make_room(size_t need) {
    if (cap - start >= need)
        return 0;
    size_t have = end - start;
    if (cap >= need) {
        memmove(buf, buf + start, have);
    } else {
        unsigned char *bigger = malloc(need);
        if (!bigger)
            return -1;
        memcpy(bigger, buf + start, have);
        if (buf != chunk)
            free(buf);
        buf = bigger;
        cap = need;
    }
    start = 0;
    end = have;
    return 0;
}

int main(void) {
    /* A closed stdout is a write error (exit 1), not death by SIGPIPE. */
    signal(SIGPIPE, SIG_IGN);
    for (;;) {
        if (start == end) {
            start = end = 0;
            if (buf != chunk) { /* do not keep a 64 MiB buffer for the rest of the session */
                free(buf);
                buf = chunk;
                cap = CHUNK;
            }
        }
        size_t have = end - start;
        size_t need = HEADER;
        if (have >= HEADER) {
            uint32_t n;
            memcpy(&n, buf + start, sizeof n);
            if (n > MAX_REQUEST)
                return fail("length prefix above the 64 MiB request limit");
            need = HEADER + (size_t)n;
            if (have >= need) {
                const unsigned char *frame = buf + start;
                start += need;
                int rc;
                if (n >= sizeof ECHO_PREFIX - 1 &&
                    memcmp(frame + HEADER, ECHO_PREFIX, sizeof ECHO_PREFIX - 1) == 0)
                    /* The request frame, header included, is the reply frame. */
                    rc = n <= MAX_REPLY ? write_all(frame, need)
                                        : write_all(&TOO_BIG, HEADER + sizeof TOO_BIG.body);
                else
                    rc = write_all(&PONG, HEADER + sizeof PONG.body);
                if (rc != 0)
                    return fail("write error on stdout");
                continue;
            }
        }
        if (make_room(need) != 0)
            return fail("out of memory for a request");
        ssize_t got = read(STDIN_FILENO, buf + end, cap - end);
        if (got < 0) {
            if (errno == EINTR)
                continue;
            return fail("read error on stdin");
        }
        if (got == 0) {
            if (have == 0)
                return 0;
            return fail(have < HEADER ? "end of input inside a length prefix"
                                      : "end of input inside a message body");
        }
        end += (size_t)got;
    }
}
