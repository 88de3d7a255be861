/*
 * Unit tests of protocol.c: the request parser (multibulk, inline quoting, errors, limits,
 * requests cut at every byte offset) and the reply encoder.
 */
#include "check.h"
#include "protocol.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a stream parses into, as text: "PING|x;" per request, "-;" per empty request,
 * "!message;" for an error (after which parsing stops), "..." if it ends mid-request. */
struct transcript {
    char text[4096];
    size_t len;
};

static void put(struct transcript *t, const void *p, size_t n) {
    if (t->len + n < sizeof t->text) {
        memcpy(t->text + t->len, p, n);
        t->len += n;
        t->text[t->len] = '\0';
    }
}

/*
 * Feeds `stream` as the connection does, `chunk` bytes at a time: pending bytes stay in a
 * buffer that starts at the current request, and the parser is called again after each chunk.
 */
static void parse_stream(const char *stream, size_t len, size_t chunk, struct transcript *t) {
    struct parser p;
    parser_init(&p);
    t->len = 0;
    t->text[0] = '\0';
    char *buf = malloc(len + 1);
    size_t have = 0, fed = 0;
    bool failed = false;
    while (fed < len && !failed) {
        size_t n = len - fed < chunk ? len - fed : chunk;
        memcpy(buf + have, stream + fed, n);
        have += n;
        fed += n;
        while (have > 0) {
            enum parse_status st = parse_request(&p, buf, have);
            if (st == PARSE_MORE)
                break;
            if (st == PARSE_ERROR) {
                put(t, "!", 1);
                put(t, p.error, strlen(p.error));
                put(t, ";", 1);
                failed = true;
                break;
            }
            if (st == PARSE_EMPTY) {
                put(t, "-;", 2);
            } else {
                for (int i = 0; i < p.argc; i++) {
                    if (i)
                        put(t, "|", 1);
                    put(t, p.argv[i].p, p.argv[i].len);
                }
                put(t, ";", 1);
            }
            memmove(buf, buf + p.used, have - p.used);
            have -= p.used;
        }
    }
    if (!failed && have > 0)
        put(t, "...", 3);
    free(buf);
    parser_free(&p);
}

static void expect_parse(const char *stream, size_t len, const char *want) {
    struct transcript whole;
    parse_stream(stream, len, len ? len : 1, &whole);
    if (strcmp(whole.text, want) != 0)
        fprintf(stderr, "  stream %.60s: got [%s] want [%s]\n", stream, whole.text, want);
    CHECK(strcmp(whole.text, want) == 0);
    /* The same stream one byte at a time, and cut into every pair of pieces. */
    struct transcript t;
    parse_stream(stream, len, 1, &t);
    CHECK(strcmp(t.text, want) == 0);
    for (size_t cut = 1; cut < len; cut++) {
        parse_stream(stream, len, cut, &t);
        if (strcmp(t.text, want) != 0) {
            fprintf(stderr, "  chunk %zu of %.60s: got [%s]\n", cut, stream, t.text);
            CHECK(false);
            break;
        }
    }
}

#define EXPECT(lit, want) expect_parse(lit, sizeof(lit) - 1, want)

static void test_multibulk(void) {
    EXPECT("*1\r\n$4\r\nPING\r\n", "PING;");
    EXPECT("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n", "SET|k|;");
    EXPECT("*2\r\n$4\r\nECHO\r\n$6\r\na\r\nb\r\n\r\n", "ECHO|a\r\nb\r\n;"); /* binary-safe */
    EXPECT("*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPING\r\n", "PING;PING;");
    /* The CRLF after a bulk is skipped, not checked (as redis). */
    EXPECT("*1\r\n$4\r\nPINGxx*1\r\n$1\r\na\r\n", "PING;a;");
}

static void test_empty_requests(void) {
    EXPECT("*0\r\n*-1\r\n*-5\r\n*1\r\n$1\r\nx\r\n", "-;-;-;x;");
    EXPECT("\r\n\n   \r\nPING\r\n", "-;-;-;PING;");
}

static void test_partial(void) {
    EXPECT("*2\r\n$3\r\nGET\r\n$1", "...");
    EXPECT("PING\r\nPI", "PING;...");
    EXPECT("*", "...");
    EXPECT("*2147483647\r\n$1\r\na\r\n", "...");
}

static void test_protocol_errors(void) {
    EXPECT("*abc\r\n", "!Protocol error: invalid multibulk length;");
    EXPECT("*2147483648\r\n", "!Protocol error: invalid multibulk length;");
    EXPECT("* 1\r\n", "!Protocol error: invalid multibulk length;");
    EXPECT("*+1\r\n", "!Protocol error: invalid multibulk length;");
    EXPECT("*1\r\n+PING\r\n", "!Protocol error: expected '$', got '+';");
    EXPECT("*1\r\n$-1\r\n", "!Protocol error: invalid bulk length;");
    EXPECT("*1\r\n$536870913\r\n", "!Protocol error: invalid bulk length;");
    EXPECT("*1\r\n$99999999999999999999\r\n", "!Protocol error: invalid bulk length;");
    EXPECT("SET a 1\r\n*1\r\n:1\r\n", "SET|a|1;!Protocol error: expected '$', got ':';");
    /* "\n" ends no header line: the next '\r' does, and "1\n$4" is no number. */
    EXPECT("*1\n$4\r\nPING\r\n", "!Protocol error: invalid multibulk length;");
    EXPECT("\"unbalanced\r\nPING\r\n", "!Protocol error: unbalanced quotes in request;");
}

static void test_limits(void) {
    /* 64 KiB of inline bytes without a newline is refused, even split. */
    size_t n = 70000;
    char *big = malloc(n);
    memset(big, 'a', n);
    expect_parse(big, n, "!Protocol error: too big inline request;");
    big[0] = '*';
    for (size_t i = 1; i < n; i++)
        big[i] = '1';
    struct transcript t;
    parse_stream(big, n, n, &t);
    CHECK(strcmp(t.text, "!Protocol error: too big mbulk count string;") == 0);
    memcpy(big, "*1\r\n$", 5);
    parse_stream(big, n, n, &t);
    CHECK(strcmp(t.text, "!Protocol error: too big bulk count string;") == 0);
    /* A NUL hides the line end (redis uses strchr): the request waits, then is too big. */
    EXPECT("PI\0NG\r\n", "...");
    free(big);
    /* A 512 MB bulk is accepted as a header; its body is waited for. */
    EXPECT("*2\r\n$3\r\nSET\r\n$536870912\r\nabc", "...");
}

static void test_parser_wants(void) {
    struct parser p;
    parser_init(&p);
    char req[] = "*2\r\n$3\r\nSET\r\n$100000\r\nabc";
    CHECK(parse_request(&p, req, sizeof req - 1) == PARSE_MORE);
    /* The headers before the body, then the body and its CRLF. */
    CHECK(parser_wants(&p) == strlen("*2\r\n$3\r\nSET\r\n$100000\r\n") + 100000 + 2);
    parser_free(&p);
}

static void test_inline_quoting(void) {
    EXPECT("SET a \"hello world\"\r\n", "SET|a|hello world;");
    EXPECT("  SET   a \t b  \r\n", "SET|a|b;");
    EXPECT("SET a 'it''s'\r\n", "!Protocol error: unbalanced quotes in request;");
    EXPECT("SET b 'a\\'b'\r\n", "SET|b|a'b;");
    EXPECT("SET a \"\\x41\\x4a\\n\\t\\\"\\\\z\"\n", "SET|a|AJ\n\t\"\\z;");
    EXPECT("SET a \"\\x4g\"\r\n", "SET|a|x4g;");
    EXPECT("SET a \"\"\r\n", "SET|a|;");
    EXPECT("SET a \"x\"y\r\n", "!Protocol error: unbalanced quotes in request;");
    EXPECT("ab\"cd ef\" g\r\n", "abcd ef|g;");
    EXPECT("a\vb\r\n", "a\vb;"); /* \v ends no token, though it is skipped between tokens */
    EXPECT("PING\nPING\n", "PING;PING;");
}

/* put_bulk and copy_bytes branch on the length (0-3, 4-7, 8-16, longer; one digit or more):
 * every length across those edges. */
static void test_bulk_lengths(void) {
    for (size_t n = 0; n <= 130; n++) {
        char data[131], want[160];
        for (size_t i = 0; i < n; i++)
            data[i] = (char)('a' + (i * 7 + n) % 26);
        int k = snprintf(want, sizeof want, "$%zu\r\n", n);
        memcpy(want + k, data, n);
        memcpy(want + k + n, "\r\n", 2);
        struct outbuf o = {0};
        reply_bulk(&o, data, n);
        CHECK(o.len == (size_t)k + n + 2 && memcmp(o.buf, want, o.len) == 0);
        free(o.buf);
    }
}

static void test_replies(void) {
    struct outbuf o = {0};
    reply_ok(&o);
    reply_int(&o, -42);
    reply_bulk(&o, "a\0b", 3);
    reply_null(&o);
    reply_array(&o, 2);
    reply_error(&o, "boom");
    reply_error(&o, "-WRONGTYPE x");
    CHECK_BYTES(o.buf, o.len,
                "+OK\r\n:-42\r\n$3\r\na\0b\r\n$-1\r\n*2\r\n-ERR boom\r\n-WRONGTYPE x\r\n");
    o.len = 0;
    reply_double(&o, 0.1);
    reply_double(&o, 3);
    reply_double(&o, -0.0);
    reply_double(&o, 1.0 / 0.0);
    reply_double(&o, 1e17);
    CHECK_BYTES(o.buf, o.len,
                "$19\r\n0.10000000000000001\r\n$1\r\n3\r\n$1\r\n0\r\n$3\r\ninf\r\n$5\r\n1e+17\r\n");
    o.len = 0;
    reply_errorf(&o, "got '%s'", "\r\nx\ry\n");
    CHECK_BYTES(o.buf, o.len, "-ERR got '  x y '\r\n");
    o.len = 0;
    o.resp = 3;
    reply_null(&o);
    reply_double(&o, 1.5);
    reply_map(&o, 2);
    reply_set(&o, 1);
    reply_verbatim(&o, "hi", 2);
    CHECK_BYTES(o.buf, o.len, "_\r\n,1.5\r\n%2\r\n~1\r\n=6\r\ntxt:hi\r\n");
    free(o.buf);
}

int main(void) {
    RUN(test_multibulk);
    RUN(test_empty_requests);
    RUN(test_partial);
    RUN(test_protocol_errors);
    RUN(test_limits);
    RUN(test_parser_wants);
    RUN(test_inline_quoting);
    RUN(test_bulk_lengths);
    RUN(test_replies);
    return TESTS_DONE();
}
