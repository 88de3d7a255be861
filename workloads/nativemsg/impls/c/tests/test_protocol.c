/* Unit tests of protocol.c: every reply is parsed back with jansson and checked as JSON. */
#include "check.h"
#include "framing.h"
#include "protocol.h"

#include <jansson.h>
#include <stdbool.h>
#include <string.h>

static unsigned char reply[FRAME_MAX_REPLY];
static struct protocol *proto;

static size_t ask(const char *request, size_t len) {
    size_t n = protocol_reply(proto, (const unsigned char *)request, len, reply);
    if (n > FRAME_MAX_REPLY) {
        fprintf(stderr, "reply of %zu bytes\n", n);
        exit(1);
    }
    return n;
}

static size_t ask_str(const char *request) {
    return ask(request, strlen(request));
}

/* The reply as JSON (NULL if it is not JSON); the caller decrefs. */
static json_t *parsed(size_t n) {
    return json_loadb((const char *)reply, n, JSON_ALLOW_NUL, NULL);
}

static bool is_error(size_t n) {
    json_t *r = parsed(n);
    json_t *e = json_object_get(r, "error");
    bool ok = json_is_string(e) && json_string_length(e) > 0;
    json_decref(r);
    return ok;
}

static bool error_for(const char *request, size_t len) {
    return is_error(ask(request, len));
}

static bool error_for_str(const char *request) {
    return error_for(request, strlen(request));
}

static bool reply_is(size_t n, const char *text) {
    return n == strlen(text) && memcmp(reply, text, n) == 0;
}

static void test_ping(void) {
    CHECK(reply_is(ask_str("{\"op\":\"ping\"}"), "{\"op\":\"pong\"}"));
    CHECK(reply_is(ask_str(" { \"id\" : 7, \"op\" : \"ping\", \"x\":[1,{}] } "),
                   "{\"op\":\"pong\"}"));
}

static bool has_op(const json_t *reply_json, const char *op) {
    const json_t *v = json_object_get(reply_json, "op");
    return json_is_string(v) && strcmp(json_string_value(v), op) == 0;
}

/* The echo reply has exactly op and data, and data equals the request's as JSON. */
static bool echoes(const char *request, size_t len) {
    json_t *req = json_loadb(request, len, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, NULL);
    json_t *got = parsed(ask(request, len));
    bool ok = req && got && json_object_size(got) == 2 && has_op(got, "echo");
    if (ok) {
        /* Compare numbers as doubles, as the lab does: re-parse the reply the same way. */
        char *text = json_dumps(got, JSON_ENCODE_ANY | JSON_COMPACT);
        json_t *again = json_loads(text, JSON_ALLOW_NUL | JSON_DECODE_INT_AS_REAL, NULL);
        ok = json_equal(json_object_get(again, "data"), json_object_get(req, "data"));
        free(text);
        json_decref(again);
    }
    json_decref(req);
    json_decref(got);
    return ok;
}

static bool echoes_str(const char *request) {
    return echoes(request, strlen(request));
}

static void test_echo(void) {
    static const char nested[] =
        "{\"op\":\"echo\",\"extra\":1,\"data\":{\"a\":[1,-2.5e-3,true,false,null,\"\"],"
        "\"s\":\"q\\\"b\\\\n\\n\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\\ud83d\\ude00\",\"o\":{}}}";
    CHECK(echoes(nested, sizeof nested - 1));
    /* "\u0000" inside a string survives (a C-string library would cut it). */
    static const char nul[] = "{\"op\":\"echo\",\"data\":\"a\\u0000b\"}";
    CHECK(echoes(nul, sizeof nul - 1));
    CHECK(reply_is(ask(nul, sizeof nul - 1), nul));
    CHECK(echoes_str("{\"op\":\"echo\",\"data\":null}"));
    CHECK(echoes_str("{\"op\":\"echo\",\"data\":-12}"));
    CHECK(echoes_str("{\"op\":\"echo\",\"data\":\"\"}"));
    /* Integers beyond 64 bits are valid JSON: echoed as the nearest double. */
    static const char big[] = "{\"op\":\"echo\",\"data\":[18446744073709551616,1]}";
    CHECK(echoes(big, sizeof big - 1));
    CHECK(error_for_str("{\"op\":\"echo\"}"));
}

/* An echo of a string of k x's has a body of 20 + (k + 2) + 1 bytes. */
static void test_echo_reply_cap(void) {
    static char request[FRAME_MAX_REPLY + 64];
    const size_t fits = FRAME_MAX_REPLY - 23;
    size_t n = (size_t)sprintf(request, "{\"op\":\"echo\",\"data\":\"");
    memset(request + n, 'x', fits);
    memcpy(request + n + fits, "\"}", 2);
    CHECK(ask(request, n + fits + 2) == FRAME_MAX_REPLY);
    CHECK(memcmp(reply, request, FRAME_MAX_REPLY) == 0);
    request[n + fits] = 'x';
    memcpy(request + n + fits + 1, "\"}", 2);
    CHECK(error_for(request, n + fits + 3));
}

static void test_echo_of_2_mib_is_an_error(void) {
    size_t len = 2u << 20;
    char *request = malloc(len + 64);
    size_t n = (size_t)sprintf(request, "{\"op\":\"echo\",\"data\":\"");
    memset(request + n, 'y', len);
    memcpy(request + n + len, "\"}", 2);
    CHECK(error_for(request, n + len + 2));
    free(request);
}

static bool fill_is(long long bytes) {
    char request[64];
    int len = snprintf(request, sizeof request, "{\"op\":\"fill\",\"bytes\":%lld}", bytes);
    size_t n = ask(request, (size_t)len);
    json_t *r = parsed(n);
    json_t *data = json_object_get(r, "data");
    bool ok =
        n == (size_t)bytes && json_object_size(r) == 2 && has_op(r, "fill") && json_is_string(data);
    for (size_t i = 0; ok && i < json_string_length(data); i++)
        ok = json_string_value(data)[i] == 'x';
    json_decref(r);
    return ok;
}

static void test_fill(void) {
    CHECK(reply_is(ask_str("{\"op\":\"fill\",\"bytes\":23}"), "{\"op\":\"fill\",\"data\":\"\"}"));
    CHECK(fill_is(24));
    CHECK(fill_is(1000));
    CHECK(fill_is(FRAME_MAX_REPLY));
    CHECK(error_for_str("{\"op\":\"fill\",\"bytes\":22}"));
    CHECK(error_for_str("{\"op\":\"fill\",\"bytes\":1048577}"));
    CHECK(error_for_str("{\"op\":\"fill\",\"bytes\":-1}"));
    CHECK(error_for_str("{\"op\":\"fill\",\"bytes\":100.5}"));
    CHECK(error_for_str("{\"op\":\"fill\",\"bytes\":\"100\"}"));
    CHECK(error_for_str("{\"op\":\"fill\",\"bytes\":true}"));
    CHECK(error_for_str("{\"op\":\"fill\",\"bytes\":99999999999999999999999}"));
    CHECK(error_for_str("{\"op\":\"fill\"}"));
}

static void test_bad_requests(void) {
    static const char *const bad[] = {
        "",
        "not json",
        "{\"op\":\"ping\"} trailing",
        "{\"op\":\"echo\",\"data\":NaN}",
        "{\"op\":\"echo\",\"data\":Infinity}",
        "{\"op\":\"echo\",\"data\":1e400}",
        "[\"op\",\"ping\"]",
        "\"ping\"",
        "null",
        "{}",
        "{\"op\":7}",
        "{\"op\":null}",
        "{\"op\":\"frob\"}",
        "{\"op\":\"PING\"}",
        "{\"op\":\"ping\",}",
        "{\"op\":\"echo\",\"data\":\"\\ud800\"}",
        "{\"op\":\"echo\",\"data\":\"\xff\xfe\"}",
        "{\"op\":\"echo\",\"data\":\"\xc3\"}",
        "{\"op\":\"echo\",\"data\":\"\xed\xa0\x80\"}",
        "\xef\xbb\xbf{\"op\":\"ping\"}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (!error_for_str(bad[i]))
            fprintf(stderr, "  no error reply for request %zu: %s\n", i, bad[i]);
        CHECK(error_for_str(bad[i]));
    }
    /* "ping" followed by a NUL is not "ping". */
    static const char nul_op[] = "{\"op\":\"ping\\u0000\"}";
    CHECK(error_for(nul_op, sizeof nul_op - 1));
    /* A raw NUL byte in the body is not JSON. */
    static const char raw_nul[] = "{\"op\":\"ping\"}\0";
    CHECK(error_for(raw_nul, sizeof raw_nul - 1));
}

/* The error reply quotes an unknown op, but never enough to make the reply large. */
static void test_long_unknown_op(void) {
    size_t len = 1u << 20;
    char *request = malloc(len + 64);
    size_t n = (size_t)sprintf(request, "{\"op\":\"");
    for (size_t i = 0; i < len; i += 2)
        memcpy(request + n + i, "\xc3\xa9", 2); /* cut anywhere, it must stay UTF-8 */
    memcpy(request + n + len, "\"}", 2);
    size_t got = ask(request, n + len + 2);
    CHECK(got < 512);
    CHECK(is_error(got));
    free(request);
}

static void test_deep_nesting(void) {
    size_t depth = 1000000;
    char *request = malloc(2 * depth + 64);
    size_t n = (size_t)sprintf(request, "{\"op\":\"echo\",\"data\":");
    memset(request + n, '[', depth);
    memset(request + n + depth, ']', depth);
    request[n + 2 * depth] = '}';
    CHECK(error_for(request, n + 2 * depth + 1));
    /* Moderate nesting is echoed. */
    depth = 1000;
    memset(request + n, '[', depth);
    memset(request + n + depth, ']', depth);
    request[n + 2 * depth] = '}';
    CHECK(echoes(request, n + 2 * depth + 1));
    free(request);
}

int main(void) {
    proto = protocol_new();
    if (!proto)
        return 2;
    RUN(test_ping);
    RUN(test_echo);
    RUN(test_echo_reply_cap);
    RUN(test_echo_of_2_mib_is_an_error);
    RUN(test_fill);
    RUN(test_bad_requests);
    RUN(test_long_unknown_op);
    RUN(test_deep_nesting);
    protocol_free(proto);
    return check_failures ? 1 : 0;
}
