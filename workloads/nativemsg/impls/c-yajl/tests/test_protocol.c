/*
 * Unit tests of protocol.c. yajl's compact output is deterministic (numbers pass through as
 * their literals, only '"', '\\' and control characters are escaped), so most replies are
 * compared byte for byte; error replies are parsed back with yajl_tree.
 */
#include "check.h"
#include "framing.h"
#include "protocol.h"

#include <stdbool.h>
#include <string.h>
#include <yajl/yajl_tree.h>

static struct protocol *proto;
static unsigned char reply[FRAME_MAX_REPLY];

static size_t ask(const char *request, size_t len) {
    size_t n = protocol_reply(proto, (const unsigned char *)request, len, reply);
    if (n > FRAME_MAX_REPLY) {
        fprintf(stderr, "reply of %zu bytes\n", n);
        exit(1);
    }
    return n;
}

/* String literals: the length is the literal's, so an embedded NUL byte is sent too. */
#define ASK(lit) ask(lit, sizeof lit - 1)

static bool reply_is(size_t n, const char *text, size_t len) {
    return n == len && memcmp(reply, text, n) == 0;
}
#define REPLY_IS(n, lit) reply_is(n, lit, sizeof lit - 1)

/* The request's echo reply is exactly `expect` (a compact {"op":"echo","data":...}). */
#define ECHOES_AS(request, expect) REPLY_IS(ASK(request), expect)
/* A compact echo request is its own reply. */
#define ECHOES_SAME(request) ECHOES_AS(request, request)

/* The reply is an object with a non-empty string "error"; its text is copied to `text`. */
static bool is_error_with(size_t n, char *text, size_t cap) {
    static char copy[FRAME_MAX_REPLY + 1];
    memcpy(copy, reply, n);
    copy[n] = '\0';
    char why[128];
    yajl_val root = yajl_tree_parse(copy, why, sizeof why);
    const char *path[] = {"error", NULL};
    yajl_val e = yajl_tree_get(root, path, yajl_t_string);
    bool ok = e && YAJL_GET_STRING(e)[0] != '\0';
    if (ok && text)
        snprintf(text, cap, "%s", YAJL_GET_STRING(e));
    yajl_tree_free(root);
    return ok;
}

static bool is_error(size_t n) {
    return is_error_with(n, NULL, 0);
}
#define ERROR_FOR(lit) is_error(ASK(lit))

static void test_ping(void) {
    CHECK(REPLY_IS(ASK("{\"op\":\"ping\"}"), "{\"op\":\"pong\"}"));
    CHECK(REPLY_IS(ASK(" { \"id\" : 7, \"op\" : \"ping\", \"x\":[1,{\"op\":\"echo\"}] } "),
                   "{\"op\":\"pong\"}"));
}

static void test_echo_values(void) {
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":null}"));
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":true}"));
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":\"\"}"));
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":[]}"));
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":{}}"));
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":[[],{},[{}],{\"a\":[]},{\"\":0}]}"));
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":{\"a\":[1,-2.5e-3,true,false,null,\"\"],"
                      "\"o\":{\"op\":\"ping\",\"data\":1}}}"));
    /* Literals pass through: exact, whatever a double would make of them. */
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":[1E2,1e+2,-0,1.0,100.000,5e-324,"
                      "18446744073709551616,123456789012345678901234567890]}"));
    /* Escapes that must stay escapes, raw UTF-8 that stays raw. */
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":\"q\\\"b\\\\s\\n\\r\\t\\b\\f\"}"));
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80 "
                      "\xe2\x80\xa8\"}"));
    /* "\u0000" survives (a C-string library would cut the string there). */
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":\"a\\u0000b\"}"));
    /* yajl spells control characters with upper-case hex digits. */
    CHECK(ECHOES_AS("{\"op\":\"echo\",\"data\":{\"k\\u0000\":\"\\u0001\\u001f\"}}",
                    "{\"op\":\"echo\",\"data\":{\"k\\u0000\":\"\\u0001\\u001F\"}}"));
    /* Escapes of printable characters come back as the characters. */
    CHECK(ECHOES_AS("{\"op\":\"echo\",\"data\":\"\\/\\u0041\\u00e9\\ud83d\\ude00\\u007f\"}",
                    "{\"op\":\"echo\",\"data\":\"/A\xc3\xa9\xf0\x9f\x98\x80\x7f\"}"));
}

static void test_echo_member_order(void) {
    /* data before op, whitespace, other members: the reply has exactly op and data. */
    CHECK(ECHOES_AS("{ \"data\" : [ 1 , { \"k\" : \"v\" } ] ,\n \"x\":2, \"op\" : \"echo\" }",
                    "{\"op\":\"echo\",\"data\":[1,{\"k\":\"v\"}]}"));
    /* Duplicates (implementation-defined): the last one wins, for data and for op. */
    CHECK(ECHOES_AS("{\"op\":\"echo\",\"data\":[1,[2]],\"data\":{\"b\":3}}",
                    "{\"op\":\"echo\",\"data\":{\"b\":3}}"));
    CHECK(
        ECHOES_AS("{\"op\":\"frob\",\"data\":7,\"op\":\"echo\"}", "{\"op\":\"echo\",\"data\":7}"));
    CHECK(REPLY_IS(ASK("{\"op\":\"echo\",\"data\":1,\"op\":\"ping\"}"), "{\"op\":\"pong\"}"));
    CHECK(ERROR_FOR("{\"op\":\"echo\",\"op\":7,\"data\":1}"));
}

/* An echo of a string of k x's has a body of 20 + (k + 2) + 1 bytes. */
static void test_echo_reply_cap(void) {
    static char request[2u << 20];
    const size_t fits = FRAME_MAX_REPLY - 23;
    size_t n = (size_t)sprintf(request, "{\"op\":\"echo\",\"data\":\"");
    memset(request + n, 'x', fits);
    memcpy(request + n + fits, "\"}", 2);
    CHECK(ask(request, n + fits + 2) == FRAME_MAX_REPLY);
    CHECK(memcmp(reply, request, FRAME_MAX_REPLY) == 0);
    /* One byte more: an error reply. */
    request[n + fits] = 'x';
    memcpy(request + n + fits + 1, "\"}", 2);
    CHECK(is_error(ask(request, n + fits + 3)));
    /* The cap counts the reply, not the request: 1.5 MB of "\u0041" is echoed as 250 KB. */
    n = (size_t)sprintf(request, "{\"op\":\"echo\",\"data\":\"");
    for (size_t i = 0; i < 250000; i++, n += 6)
        memcpy(request + n, "\\u0041", 6);
    memcpy(request + n, "\"}", 2);
    size_t got = ask(request, n + 2);
    CHECK(got == 20 + 250002 + 1 && reply[21] == 'A' && reply[250020] == 'A');
    /* The generator's state after an overflow does not leak into the next request. */
    size_t big = 2u << 20;
    char *huge = malloc(big + 64);
    n = (size_t)sprintf(huge, "{\"op\":\"echo\",\"data\":[\"");
    memset(huge + n, 'y', big);
    memcpy(huge + n + big, "\"]}", 3);
    CHECK(is_error(ask(huge, n + big + 3)));
    CHECK(ECHOES_SAME("{\"op\":\"echo\",\"data\":[1,{\"a\":2}]}"));
    /* A 2 MiB value in a member that is not data is fine: only the reply is capped. */
    n = (size_t)sprintf(huge, "{\"op\":\"echo\",\"data\":0,\"x\":[\"");
    memset(huge + n, 'y', big);
    memcpy(huge + n + big, "\"]}", 3);
    CHECK(REPLY_IS(ask(huge, n + big + 3), "{\"op\":\"echo\",\"data\":0}"));
    free(huge);
}

static void test_ping_ignores_data(void) {
    /* data comes first and is too large (or too deep) to echo, but the op is ping. */
    size_t big = 2u << 20;
    char *request = malloc(big + 64);
    size_t n = (size_t)sprintf(request, "{\"data\":\"");
    memset(request + n, 'y', big);
    n += big;
    n += (size_t)sprintf(request + n, "\",\"op\":\"ping\"}");
    CHECK(REPLY_IS(ask(request, n), "{\"op\":\"pong\"}"));
    n = (size_t)sprintf(request, "{\"data\":");
    memset(request + n, '[', 1000);
    memset(request + n + 1000, ']', 1000);
    n += 2000;
    n += (size_t)sprintf(request + n, ",\"op\":\"ping\"}");
    CHECK(REPLY_IS(ask(request, n), "{\"op\":\"pong\"}"));
    free(request);
}

static bool fill_is(long long bytes) {
    char request[64];
    int len = snprintf(request, sizeof request, "{\"op\":\"fill\",\"bytes\":%lld}", bytes);
    size_t n = ask(request, (size_t)len);
    bool ok = n == (size_t)bytes && memcmp(reply, "{\"op\":\"fill\",\"data\":\"", 21) == 0 &&
              memcmp(reply + n - 2, "\"}", 2) == 0;
    for (size_t i = 21; ok && i < n - 2; i++)
        ok = reply[i] == 'x';
    return ok;
}

static void test_fill(void) {
    CHECK(REPLY_IS(ASK("{\"op\":\"fill\",\"bytes\":23}"), "{\"op\":\"fill\",\"data\":\"\"}"));
    CHECK(fill_is(24));
    CHECK(fill_is(1000));
    CHECK(fill_is(FRAME_MAX_REPLY - 1));
    CHECK(fill_is(FRAME_MAX_REPLY));
    CHECK(REPLY_IS(ASK("{\"bytes\":24,\"op\":\"fill\"}"), "{\"op\":\"fill\",\"data\":\"x\"}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":22}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":0}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":-0}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":1048577}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":-1}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":-1000}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":100.5}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":100.0}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":1e2}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":\"100\"}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":true}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":null}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":[100]}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":{\"n\":100}}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":4294967319}"));           /* 2^32 + 23 */
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":18446744073709551639}")); /* 2^64 + 23 */
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":99999999999999999999999999999}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"bytes\":1e400}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\"}"));
    CHECK(ERROR_FOR("{\"op\":\"fill\",\"byte\":100}"));
}

/* Each of these must get an error reply (and the next request must still work). */
#define BAD(lit)                                                                                   \
    { lit, sizeof lit - 1 }
static const struct {
    const char *body;
    size_t len;
} BAD_REQUESTS[] = {
    /* not UTF-8, including what yajl's own check lets through */
    BAD("\xff\xfe"),
    BAD("{\"op\":\"echo\",\"data\":\"a\xff"
        "b\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\x80\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\xc0\xaf\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\xc0\x80\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\xe0\x80\xaf\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\xf0\x80\x80\xaf\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\xed\xa0\x80\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\xed\xbf\xbf\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\xf4\x90\x80\x80\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\xf5\x80\x80\x80\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\xe2\x82\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"caf\xe9\"}"),
    BAD("{\"op\":\"ping\",\"x\":\"\xf0\x9f\x98\"}"),
    BAD("{\"op\":\"ping\"}\xe2\x82"),
    /* surrogate escapes that are no character (yajl would write CESU-8 or join them) */
    BAD("{\"op\":\"echo\",\"data\":\"\\ud800\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"a\\udc00b\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\\ude00\\ud83d\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\\ud83d\\u0041\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\\ud83d\\ud83d\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\\ud83d\\n\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\\ud83d"),
    /* not JSON */
    BAD(""),
    BAD(" "),
    BAD("hello"),
    BAD("{\"op\":\"ping\""),
    BAD("{\"op\":\"ping\",}"),
    BAD("{'op':'ping'}"),
    BAD("{op:\"ping\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"a\nb\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\\x41\"}"),
    BAD("{\"op\":\"echo\",\"data\":\"\\u12\"}"),
    BAD("{\"op\":\"echo\",\"data\":NaN}"),
    BAD("{\"op\":\"echo\",\"data\":Infinity}"),
    BAD("{\"op\":\"echo\",\"data\":-Infinity}"),
    BAD("{\"op\":\"echo\",\"data\":007}"),
    BAD("{\"op\":\"echo\",\"data\":1.}"),
    BAD("{\"op\":\"echo\",\"data\":.5}"),
    BAD("{\"op\":\"echo\",\"data\":+1}"),
    BAD("{\"op\":\"echo\",\"data\":1e}"),
    BAD("{\"op\":\"echo\",\"data\":[1,2]"),
    BAD("{\"op\":\"echo\",\"data\":[1,2]}}"),
    BAD("{\"op\":\"ping\"}x"),
    BAD("{\"op\":\"ping\"}{\"op\":\"ping\"}"),
    BAD("{\"op\":\"ping\"} ]"),
    BAD("{\"op\":\"ping\"}\0"),
    BAD("{\"op\":\"ping\"/*c*/}"),
    BAD("\xef\xbb\xbf{\"op\":\"ping\"}"),
    /* numbers beyond the double range */
    BAD("{\"op\":\"echo\",\"data\":1e400}"),
    BAD("{\"op\":\"echo\",\"data\":[-1.5E+309]}"),
    BAD("{\"op\":\"ping\",\"x\":1e999999999999999999999}"),
    /* valid JSON, not an object */
    BAD("[{\"op\":\"ping\"}]"),
    BAD("\"ping\""),
    BAD("42"),
    BAD("null"),
    BAD("true"),
    /* an object, but not a valid request */
    BAD("{}"),
    BAD("{\"data\":1}"),
    BAD("{\"op\":1}"),
    BAD("{\"op\":null}"),
    BAD("{\"op\":[\"ping\"]}"),
    BAD("{\"op\":{\"op\":\"ping\"}}"),
    BAD("{\"op\":true}"),
    BAD("{\"op\":\"frob\"}"),
    BAD("{\"op\":\"\"}"),
    BAD("{\"op\":\"PING\"}"),
    BAD("{\"op\":\"ping \"}"),
    BAD("{\"op\":\"ping\\u0000\"}"),
    BAD("{\"op\":\"echo\"}"),
    BAD("{\"op\":\"echo\",\"date\":1}"),
    BAD("{\"x\":{\"op\":\"ping\"}}"),
};

static void test_bad_requests(void) {
    for (size_t i = 0; i < sizeof BAD_REQUESTS / sizeof BAD_REQUESTS[0]; i++) {
        bool ok = is_error(ask(BAD_REQUESTS[i].body, BAD_REQUESTS[i].len));
        if (!ok)
            fprintf(stderr, "  no error reply for request %zu: %s\n", i, BAD_REQUESTS[i].body);
        CHECK(ok);
        CHECK(REPLY_IS(ASK("{\"op\":\"ping\"}"), "{\"op\":\"pong\"}"));
    }
}

/* The unknown op is quoted back escaped, cut short on a character boundary. */
static void test_unknown_op_quoted(void) {
    char text[256];
    CHECK(is_error_with(ASK("{\"op\":\"fr\\\"ob\\\\\"}"), text, sizeof text));
    CHECK(strcmp(text, "unknown op \"fr\"ob\\\"") == 0);
    size_t len = 1u << 20;
    char *request = malloc(len + 64);
    size_t n = (size_t)sprintf(request, "{\"op\":\"x");
    for (size_t i = 0; i < len; i += 2)
        memcpy(request + n + i, "\xc3\xa9", 2); /* the 64-byte cut falls inside a character */
    memcpy(request + n + len, "\"}", 2);
    size_t got = ask(request, n + len + 2);
    CHECK(got < 512);
    CHECK(is_error_with(got, text, sizeof text));
    CHECK(strncmp(text, "unknown op \"x\xc3\xa9", 15) == 0);
    CHECK(strcmp(text + strlen(text) - 4, "...\"") == 0);
    CHECK((unsigned char)text[strlen(text) - 5] == 0xa9);
    free(request);
}

static size_t nested(char *request, size_t depth) {
    size_t n = (size_t)sprintf(request, "{\"op\":\"echo\",\"data\":");
    memset(request + n, '[', depth);
    memset(request + n + depth, ']', depth);
    request[n + 2 * depth] = '}';
    return n + 2 * depth + 1;
}

static void test_deep_nesting(void) {
    char *request = malloc(2 * 1000000 + 64);
    /* yajl's generator nests 127 levels: that is echoed, one more is an error reply. */
    size_t n = nested(request, 127);
    CHECK(ask(request, n) == n && memcmp(reply, request, n) == 0);
    CHECK(is_error(ask(request, nested(request, 128))));
    /* A million levels: yajl's parser keeps its stack on the heap, nothing overflows. */
    CHECK(is_error(ask(request, nested(request, 1000000))));
    /* ... and the unterminated form. */
    n = nested(request, 1000000);
    CHECK(is_error(ask(request, n - 1000001)));
    CHECK(REPLY_IS(ASK("{\"op\":\"ping\"}"), "{\"op\":\"pong\"}"));
    free(request);
}

int main(void) {
    proto = protocol_new();
    if (!proto)
        return 2;
    RUN(test_ping);
    RUN(test_echo_values);
    RUN(test_echo_member_order);
    RUN(test_echo_reply_cap);
    RUN(test_ping_ignores_data);
    RUN(test_fill);
    RUN(test_bad_requests);
    RUN(test_unknown_op_quoted);
    RUN(test_deep_nesting);
    protocol_free(proto);
    return check_failures ? 1 : 0;
}
