#include "protocol.h"

#include "framing.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

/* JSON_ALLOW_NUL: "\u0000" is valid JSON and must survive an echo (C strings would cut it). */
#define PARSE_FLAGS (JSON_DECODE_ANY | JSON_ALLOW_NUL)
/* JSON_ENCODE_ANY: echo data may be a bare string, number, true, false or null. */
#define DUMP_FLAGS (JSON_COMPACT | JSON_ENCODE_ANY)

static const char PONG[] = "{\"op\":\"pong\"}";
static const char ECHO_HEAD[] = "{\"op\":\"echo\",\"data\":";
static const char FILL_HEAD[] = "{\"op\":\"fill\",\"data\":\"";
static const char FILL_TAIL[] = "\"}";
/* Used only if jansson cannot allocate the error object itself. */
static const char NO_MEMORY[] = "{\"error\":\"out of memory\"}";

/* How much of an unknown op name is quoted back: enough to recognise, never a huge reply. */
#define OP_QUOTE_MAX 64

/* jansson keeps no per-session state: the session only marks that the hash seed is set. */
struct protocol {
    bool seeded;
};

static struct protocol session;

/*
 * Seeds jansson's hash function with one getrandom(2) call. Without it jansson opens, reads
 * and closes /dev/urandom on the first parsed object: three system calls on every spawn.
 */
struct protocol *protocol_new(void) {
    size_t seed = 0;
    /* On failure the seed stays 0 and jansson falls back to its own sources. */
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed)
        seed = 0;
    json_object_seed(seed);
    session.seeded = true;
    return &session;
}

void protocol_free(struct protocol *p) {
    (void)p;
}

/* Copies `len` bytes into a reply and returns the length: the fixed replies. */
static size_t put_fixed(unsigned char *reply, const char *text, size_t len) {
    memcpy(reply, text, len);
    return len;
}

/*
 * A jansson dump sink that writes straight into the reply buffer and stops the dump as soon
 * as the reply would pass its limit, so an oversized echo costs no extra memory and no
 * serialisation of the rest.
 */
struct sink {
    unsigned char *buf;
    size_t used;
    size_t limit;
    bool overflow;
};

static int sink_put(const char *data, size_t n, void *ctx) {
    struct sink *s = ctx;
    if (n > s->limit - s->used) {
        s->overflow = true;
        return -1;
    }
    memcpy(s->buf + s->used, data, n);
    s->used += n;
    return 0;
}

/* {"error": message}, escaped by jansson. `message` may hold any valid UTF-8, NUL included. */
static size_t error_reply(unsigned char *reply, const char *message, size_t len) {
    json_t *obj = json_pack("{s:s%}", "error", message, len);
    if (!obj)
        return put_fixed(reply, NO_MEMORY, sizeof NO_MEMORY - 1);
    struct sink s = {reply, 0, FRAME_MAX_REPLY, false};
    int rc = json_dump_callback(obj, sink_put, &s, DUMP_FLAGS);
    json_decref(obj);
    if (rc != 0)
        return put_fixed(reply, NO_MEMORY, sizeof NO_MEMORY - 1);
    return s.used;
}

static size_t error_text(unsigned char *reply, const char *message) {
    return error_reply(reply, message, strlen(message));
}

/*
 * jansson's parse error text quotes the offending token, which may be invalid UTF-8 (that is
 * sometimes the error). Keep printable ASCII only so the error reply itself is valid JSON.
 */
static size_t parse_error_reply(unsigned char *reply, const json_error_t *err) {
    char text[sizeof err->text];
    size_t i = 0;
    for (; i < sizeof text - 1 && err->text[i] != '\0'; i++) {
        unsigned char c = (unsigned char)err->text[i];
        text[i] = (c >= 0x20 && c < 0x7f) ? (char)c : '?';
    }
    text[i] = '\0';
    if (json_error_code(err) == json_error_out_of_memory)
        return error_text(reply, "out of memory parsing the request");
    char message[sizeof text + 64];
    snprintf(message, sizeof message, "cannot parse request at byte %d: %s", err->position, text);
    return error_text(reply, message);
}

static size_t unknown_op_reply(unsigned char *reply, const char *op, size_t len) {
    static const char head[] = "unknown op \"";
    static const char dots[] = "...";
    size_t quoted = len;
    if (quoted > OP_QUOTE_MAX) {
        quoted = OP_QUOTE_MAX;
        /* Do not cut a UTF-8 sequence: back up over continuation bytes (10xxxxxx). */
        while (quoted > 0 && ((unsigned char)op[quoted] & 0xC0) == 0x80)
            quoted--;
    }
    char message[sizeof head + OP_QUOTE_MAX + sizeof dots + 1];
    size_t n = 0;
    memcpy(message + n, head, sizeof head - 1);
    n += sizeof head - 1;
    memcpy(message + n, op, quoted);
    n += quoted;
    if (quoted < len) {
        memcpy(message + n, dots, sizeof dots - 1);
        n += sizeof dots - 1;
    }
    message[n++] = '"';
    return error_reply(reply, message, n);
}

/*
 * {"op":"echo","data":V}: the fixed head is copied, V is serialised by jansson straight into
 * the reply buffer, capped so the whole body stays within FRAME_MAX_REPLY.
 */
static size_t echo_reply(unsigned char *reply, const json_t *data) {
    const size_t head = sizeof ECHO_HEAD - 1;
    memcpy(reply, ECHO_HEAD, head);
    /* Keep one byte for the closing brace. */
    struct sink s = {reply, head, FRAME_MAX_REPLY - 1, false};
    if (json_dump_callback(data, sink_put, &s, DUMP_FLAGS) != 0) {
        if (s.overflow)
            return error_text(reply, "echo reply would exceed the 1 MiB reply limit");
        return error_text(reply, "could not serialise echo data");
    }
    reply[s.used++] = '}';
    return s.used;
}

static size_t fill_reply(unsigned char *reply, const json_t *bytes) {
    if (!bytes)
        return error_text(reply, "fill needs \"bytes\"");
    if (!json_is_integer(bytes))
        return error_text(reply, "fill \"bytes\" must be an integer");
    json_int_t n = json_integer_value(bytes);
    if (n < (json_int_t)FILL_MIN_BYTES || n > (json_int_t)FRAME_MAX_REPLY)
        return error_text(reply, "fill \"bytes\" must be between 23 and 1048576");
    const size_t head = sizeof FILL_HEAD - 1;
    const size_t tail = sizeof FILL_TAIL - 1;
    const size_t xs = (size_t)n - head - tail;
    memcpy(reply, FILL_HEAD, head);
    memset(reply + head, 'x', xs);
    memcpy(reply + head + xs, FILL_TAIL, tail);
    return (size_t)n;
}

static bool op_is(const char *op, size_t len, const char *name) {
    /* Length first: "ping\u0000x" is not "ping". */
    return len == strlen(name) && memcmp(op, name, len) == 0;
}

static size_t answer(unsigned char *reply, const json_t *request) {
    if (!json_is_object(request))
        return error_text(reply, "request is not a JSON object");
    const json_t *op = json_object_get(request, "op");
    if (!op)
        return error_text(reply, "request has no \"op\"");
    if (!json_is_string(op))
        return error_text(reply, "\"op\" is not a string");
    const char *name = json_string_value(op);
    size_t len = json_string_length(op);
    if (op_is(name, len, "ping"))
        return put_fixed(reply, PONG, sizeof PONG - 1);
    if (op_is(name, len, "echo")) {
        const json_t *data = json_object_get(request, "data");
        if (!data)
            return error_text(reply, "echo needs \"data\"");
        return echo_reply(reply, data);
    }
    if (op_is(name, len, "fill"))
        return fill_reply(reply, json_object_get(request, "bytes"));
    return unknown_op_reply(reply, name, len);
}

size_t protocol_reply(struct protocol *p, const unsigned char *request, size_t len,
                      unsigned char *reply) {
    (void)p;
    json_error_t err;
    json_t *root = json_loadb((const char *)request, len, PARSE_FLAGS, &err);
    /*
     * jansson keeps integers as 64-bit ints and rejects larger ones, which are valid JSON.
     * Parse such a request again with every number as a double, as a browser would (a real
     * beyond the double range fails both times with the same error code, and gets the error).
     */
    if (!root && json_error_code(&err) == json_error_numeric_overflow)
        root = json_loadb((const char *)request, len, PARSE_FLAGS | JSON_DECODE_INT_AS_REAL, &err);
    if (!root)
        return parse_error_reply(reply, &err);
    size_t n = answer(reply, root);
    json_decref(root);
    return n;
}
