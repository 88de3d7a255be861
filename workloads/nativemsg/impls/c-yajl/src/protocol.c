/*
 * One pass per request, no tree: yajl's streaming parser calls back for every token; the
 * callbacks note the top-level members (op, bytes, data) and forward the tokens of the `data`
 * value to a yajl generator whose print callback writes straight into the reply buffer, after
 * the fixed head {"op":"echo","data":. The members may come in any order, so what the reply
 * is gets decided only once yajl_complete_parse has accepted the whole body: an invalid
 * request never gets a reply built from its first half.
 */
#include "protocol.h"

#include "framing.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_parse.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

static const char PONG[] = "{\"op\":\"pong\"}";
static const char ECHO_HEAD[] = "{\"op\":\"echo\",\"data\":";
#define ECHO_HEAD_LEN (sizeof ECHO_HEAD - 1)
static const char FILL_HEAD[] = "{\"op\":\"fill\",\"data\":\"";
static const char FILL_TAIL[] = "\"}";
/* Used only if the error reply itself cannot be generated. */
static const char GENERIC_ERROR[] = "{\"error\":\"cannot answer this request\"}";

/* How much of an unknown op name is quoted back: enough to recognise, never a huge reply. */
#define OP_QUOTE_MAX 64

/*
 * A literal without an exponent and shorter than this cannot exceed the largest double
 * (about 1.8e308, 309 integer digits), so only longer literals and exponents pay for strtod.
 */
#define NUMBER_SURELY_FINITE 300

/* ------------------------------------------------------------------------------------------ */
/* Input text: UTF-8 and surrogate escapes                                                    */
/* ------------------------------------------------------------------------------------------ */

/*
 * yajl's own UTF-8 check only looks at the shape of a sequence: it lets overlong forms
 * (C0 AF), encoded surrogates (ED A0 80) and code points above U+10FFFF through. Its \u
 * decoder writes a lone low surrogate as the bytes ED B0 80 (not UTF-8: no browser accepts
 * the reply) and joins a high surrogate with whatever \u escape follows. So the body is
 * checked here, strictly, before yajl sees it, and yajl's weaker check is turned off.
 */
enum text_fault { TEXT_OK, TEXT_NOT_UTF8, TEXT_LONE_SURROGATE };

/*
 * The offset of the first byte of s[0..n) that is not ASCII or is a backslash, or n: the
 * bytes that need a closer look are rare in most text, so they are searched 16 at a time.
 */
#if defined(__SSE2__)
static size_t plain_run(const unsigned char *s, size_t n) {
    const __m128i backslash = _mm_set1_epi8('\\');
    size_t i = 0;
    for (; n - i >= 16; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        /* A byte's top bit: set for non-ASCII, and in the 0xFF that marks a backslash. */
        unsigned mask = (unsigned)_mm_movemask_epi8(_mm_or_si128(v, _mm_cmpeq_epi8(v, backslash)));
        if (mask)
            return i + (size_t)__builtin_ctz(mask);
    }
    while (i < n && s[i] < 0x80 && s[i] != '\\')
        i++;
    return i;
}
#else
#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
static size_t plain_run(const unsigned char *s, size_t n) {
    size_t i = 0;
    for (; n - i >= 8; i += 8) {
        uint64_t w;
        memcpy(&w, s + i, sizeof w);
        uint64_t x = w ^ (ONES * '\\');
        uint64_t has_backslash = (x - ONES) & ~x & HIGHS; /* a zero byte in x: a '\\' in w */
        if ((w & HIGHS) | has_backslash)
            break;
    }
    while (i < n && s[i] < 0x80 && s[i] != '\\')
        i++;
    return i;
}
#endif

static int hex4(const unsigned char *s) {
    int v = 0;
    for (int i = 0; i < 4; i++) {
        unsigned c = s[i];
        if (c - '0' < 10u)
            v = v * 16 + (int)(c - '0');
        else if ((c | 0x20u) - 'a' < 6u)
            v = v * 16 + (int)((c | 0x20u) - 'a' + 10);
        else
            return -1;
    }
    return v;
}

/*
 * s[0] is a backslash. Returns the length of the escape, or 0 for a surrogate escape that is
 * not a high surrogate followed by a low one. A malformed escape is stepped over: yajl rejects
 * it. (In valid JSON a backslash only occurs inside a string, where it starts an escape, so
 * this walk over the escapes is exact.)
 */
static size_t escape_length(const unsigned char *s, size_t n) {
    if (n < 2)
        return 1;
    if (s[1] != 'u' || n < 6)
        return 2;
    int cp = hex4(s + 2);
    if (cp < 0xD800 || cp > 0xDFFF)
        return 6;
    if (cp >= 0xDC00)
        return 0;
    if (n >= 12 && s[6] == '\\' && s[7] == 'u') {
        int low = hex4(s + 8);
        if (low >= 0xDC00 && low <= 0xDFFF)
            return 12;
    }
    return 0;
}

static inline bool is_continuation(unsigned char c) {
    return (c & 0xC0) == 0x80;
}

/* The length of the well-formed UTF-8 sequence at s (s[0] >= 0x80), or 0 (Unicode table 3-7). */
static size_t utf8_sequence(const unsigned char *s, size_t n) {
    unsigned char c = s[0];
    if (c < 0xC2) /* a continuation byte, or C0/C1: only ever overlong */
        return 0;
    if (c < 0xE0)
        return n >= 2 && is_continuation(s[1]) ? 2 : 0;
    if (c < 0xF0) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80; /* E0 80..9F: overlong */
        unsigned char hi = c == 0xED ? 0x9F : 0xBF; /* ED A0..BF: surrogates */
        return n >= 3 && s[1] >= lo && s[1] <= hi && is_continuation(s[2]) ? 3 : 0;
    }
    if (c < 0xF5) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80; /* F0 80..8F: overlong */
        unsigned char hi = c == 0xF4 ? 0x8F : 0xBF; /* F4 90..: above U+10FFFF */
        return n >= 4 && s[1] >= lo && s[1] <= hi && is_continuation(s[2]) && is_continuation(s[3])
                   ? 4
                   : 0;
    }
    return 0;
}

static enum text_fault check_text(const unsigned char *s, size_t n, size_t *at) {
    size_t i = 0;
    for (;;) {
        i += plain_run(s + i, n - i);
        if (i == n)
            return TEXT_OK;
        bool escape = s[i] == '\\';
        size_t step = escape ? escape_length(s + i, n - i) : utf8_sequence(s + i, n - i);
        if (step == 0) {
            *at = i;
            return escape ? TEXT_LONE_SURROGATE : TEXT_NOT_UTF8;
        }
        i += step;
    }
}

/* ------------------------------------------------------------------------------------------ */
/* Parse state                                                                                */
/* ------------------------------------------------------------------------------------------ */

/* The top-level member whose value comes next. */
enum member { MEMBER_OTHER, MEMBER_OP, MEMBER_DATA, MEMBER_BYTES };
enum op_kind { OP_MISSING, OP_NOT_STRING, OP_PING, OP_ECHO, OP_FILL, OP_UNKNOWN };
enum bytes_kind { BYTES_MISSING, BYTES_NOT_INTEGER, BYTES_OUT_OF_RANGE, BYTES_OK };
enum data_kind { DATA_MISSING, DATA_OK, DATA_TOO_DEEP, DATA_TOO_LARGE, DATA_FAILED };
/* Why a callback cancelled the parse: the answer is an error whatever follows. */
enum stop { STOP_NONE, STOP_NOT_OBJECT, STOP_NUMBER_RANGE, STOP_NO_MEMORY };
enum kind { KIND_MAP, KIND_ARRAY, KIND_STRING, KIND_NUMBER, KIND_LITERAL };

struct protocol {
    yajl_gen gen;
    /* The generator's output: the print callback appends here, up to `limit`. */
    unsigned char *out;
    size_t used;
    size_t limit;
    bool overflow;
    /* What the callbacks have seen of the current request. */
    size_t depth;       /* open objects and arrays; the root object is depth 1 */
    enum member member; /* meaningful at depth 1 */
    bool generating;    /* inside the data value, and the generator has not failed */
    enum op_kind op;
    size_t op_len;
    /* The start of an unknown op, for the error reply; one byte more than is quoted, to see
     * whether the cut falls inside a character. */
    unsigned char op_text[OP_QUOTE_MAX + 1];
    enum bytes_kind bytes;
    uint32_t fill_size;
    enum data_kind data;
    enum stop stop;
};

/*
 * yajl's print callback. It cannot fail, so an overflow is noted and the callbacks stop
 * generating at once: an oversized echo costs no memory and no serialisation of the rest.
 */
static void sink_print(void *ctx, const char *s, size_t n) {
    struct protocol *p = ctx;
    if (p->overflow)
        return;
    if (n > p->limit - p->used) {
        p->overflow = true;
        return;
    }
    memcpy(p->out + p->used, s, n);
    p->used += n;
}

struct protocol *protocol_new(void) {
    struct protocol *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->gen = yajl_gen_alloc(NULL);
    /* Compact output (no yajl_gen_beautify); '/' is not escaped (the default). */
    if (!p->gen || !yajl_gen_config(p->gen, yajl_gen_print_callback, sink_print, p)) {
        protocol_free(p);
        return NULL;
    }
    return p;
}

void protocol_free(struct protocol *p) {
    if (!p)
        return;
    if (p->gen)
        yajl_gen_free(p->gen);
    free(p);
}

static void begin_request(struct protocol *p, unsigned char *reply) {
    memcpy(reply, ECHO_HEAD, ECHO_HEAD_LEN);
    p->out = reply;
    p->used = ECHO_HEAD_LEN;
    /* Keep one byte for the closing brace of the echo reply. */
    p->limit = FRAME_MAX_REPLY - 1;
    p->overflow = false;
    p->depth = 0;
    p->member = MEMBER_OTHER;
    p->generating = false;
    p->op = OP_MISSING;
    p->op_len = 0;
    p->bytes = BYTES_MISSING;
    p->fill_size = 0;
    p->data = DATA_MISSING;
    p->stop = STOP_NONE;
}

/* A data value begins. A later duplicate "data" member replaces an earlier one. */
static void start_data(struct protocol *p) {
    yajl_gen_reset(p->gen, NULL);
    p->used = ECHO_HEAD_LEN;
    p->overflow = false;
    p->data = DATA_OK;
    p->generating = true;
}

/*
 * Checks one generator call. After a failure the generator is never called again for this
 * value: past its depth limit (127) yajl's state index is out of its array.
 */
static void generated(struct protocol *p, yajl_gen_status st) {
    if (st == yajl_gen_status_ok && !p->overflow)
        return;
    p->generating = false;
    if (p->overflow)
        p->data = DATA_TOO_LARGE;
    else if (st == yajl_max_depth_exceeded)
        p->data = DATA_TOO_DEEP;
    else
        p->data = DATA_FAILED;
}

static bool text_is(const unsigned char *s, size_t n, const char *name, size_t name_len) {
    /* Length first: "ping\u0000x" is not "ping". */
    return n == name_len && memcmp(s, name, n) == 0;
}
#define TEXT_IS(s, n, lit) text_is(s, n, lit, sizeof lit - 1)

static enum member member_of(const unsigned char *key, size_t n) {
    if (TEXT_IS(key, n, "op"))
        return MEMBER_OP;
    if (TEXT_IS(key, n, "data"))
        return MEMBER_DATA;
    if (TEXT_IS(key, n, "bytes"))
        return MEMBER_BYTES;
    return MEMBER_OTHER;
}

static void set_op(struct protocol *p, const unsigned char *s, size_t n) {
    if (TEXT_IS(s, n, "ping")) {
        p->op = OP_PING;
    } else if (TEXT_IS(s, n, "echo")) {
        p->op = OP_ECHO;
    } else if (TEXT_IS(s, n, "fill")) {
        p->op = OP_FILL;
    } else {
        p->op = OP_UNKNOWN;
        p->op_len = n;
        memcpy(p->op_text, s, n < sizeof p->op_text ? n : sizeof p->op_text);
    }
}

/* fill's N from its literal: an integer literal only (no fraction, no exponent), in range. */
static enum bytes_kind fill_size_of(const char *s, size_t n, uint32_t *size) {
    size_t i = 0;
    bool negative = n > 0 && s[0] == '-';
    if (negative)
        i = 1;
    uint64_t v = 0;
    for (; i < n; i++) {
        if (s[i] < '0' || s[i] > '9')
            return BYTES_NOT_INTEGER;
        /* Saturates above the cap: 2^32 + 23 or 2^64 + 23 never wrap around to 23. */
        if (v <= FRAME_MAX_REPLY)
            v = v * 10 + (uint64_t)(s[i] - '0');
    }
    if (negative || v < FILL_MIN_BYTES || v > FRAME_MAX_REPLY)
        return BYTES_OUT_OF_RANGE;
    *size = (uint32_t)v;
    return BYTES_OK;
}

/*
 * The number callback hands over the literal text, which the generator writes back as is:
 * exact, whatever its size. A literal beyond the double range (1e400) is refused, as by the
 * double-based parsers of browsers: RFC 8259 section 6 leaves it to the implementation, and an
 * echo of it would read as Infinity. Returns false with p->stop set.
 */
static bool number_in_range(struct protocol *p, const char *s, size_t n) {
    if (n < NUMBER_SURELY_FINITE && !memchr(s, 'e', n) && !memchr(s, 'E', n))
        return true;
    char small[64];
    char *text = n < sizeof small ? small : malloc(n + 1);
    if (!text) {
        p->stop = STOP_NO_MEMORY;
        return false;
    }
    memcpy(text, s, n);
    text[n] = '\0';
    bool finite = isfinite(strtod(text, NULL));
    if (text != small)
        free(text);
    if (!finite)
        p->stop = STOP_NUMBER_RANGE;
    return finite;
}

/*
 * Every value begins here. The root must be an object; a value right inside it belongs to the
 * member whose key came last. Returns 0 to cancel the parse.
 */
static int begin_value(struct protocol *p, enum kind kind) {
    if (p->depth > 1)
        return 1;
    if (p->depth == 0) {
        if (kind == KIND_MAP)
            return 1;
        p->stop = STOP_NOT_OBJECT;
        return 0;
    }
    switch (p->member) {
    case MEMBER_OP:
        if (kind != KIND_STRING)
            p->op = OP_NOT_STRING;
        break;
    case MEMBER_BYTES:
        if (kind != KIND_NUMBER)
            p->bytes = BYTES_NOT_INTEGER;
        break;
    case MEMBER_DATA:
        start_data(p);
        break;
    case MEMBER_OTHER:
        break;
    }
    return 1;
}

/* A scalar right inside the root is a whole member value: a data value ends with it. */
static void end_scalar(struct protocol *p) {
    if (p->depth == 1)
        p->generating = false;
}

/* ------------------------------------------------------------------------------------------ */
/* yajl callbacks                                                                             */
/* ------------------------------------------------------------------------------------------ */

static int on_null(void *ctx) {
    struct protocol *p = ctx;
    if (!begin_value(p, KIND_LITERAL))
        return 0;
    if (p->generating)
        generated(p, yajl_gen_null(p->gen));
    end_scalar(p);
    return 1;
}

static int on_boolean(void *ctx, int value) {
    struct protocol *p = ctx;
    if (!begin_value(p, KIND_LITERAL))
        return 0;
    if (p->generating)
        generated(p, yajl_gen_bool(p->gen, value));
    end_scalar(p);
    return 1;
}

static int on_number(void *ctx, const char *s, size_t n) {
    struct protocol *p = ctx;
    if (!begin_value(p, KIND_NUMBER) || !number_in_range(p, s, n))
        return 0;
    if (p->depth == 1 && p->member == MEMBER_BYTES)
        p->bytes = fill_size_of(s, n, &p->fill_size);
    if (p->generating)
        generated(p, yajl_gen_number(p->gen, s, n));
    end_scalar(p);
    return 1;
}

static int on_string(void *ctx, const unsigned char *s, size_t n) {
    struct protocol *p = ctx;
    if (!begin_value(p, KIND_STRING))
        return 0;
    if (p->depth == 1 && p->member == MEMBER_OP)
        set_op(p, s, n);
    if (p->generating)
        generated(p, yajl_gen_string(p->gen, s, n));
    end_scalar(p);
    return 1;
}

static int on_map_key(void *ctx, const unsigned char *s, size_t n) {
    struct protocol *p = ctx;
    if (p->depth == 1)
        p->member = member_of(s, n);
    else if (p->generating)
        generated(p, yajl_gen_string(p->gen, s, n));
    return 1;
}

static int on_start_map(void *ctx) {
    struct protocol *p = ctx;
    if (!begin_value(p, KIND_MAP))
        return 0;
    if (p->generating)
        generated(p, yajl_gen_map_open(p->gen));
    p->depth++;
    return 1;
}

static int on_end_map(void *ctx) {
    struct protocol *p = ctx;
    if (p->generating)
        generated(p, yajl_gen_map_close(p->gen));
    if (--p->depth == 1)
        p->generating = false;
    return 1;
}

static int on_start_array(void *ctx) {
    struct protocol *p = ctx;
    if (!begin_value(p, KIND_ARRAY))
        return 0;
    if (p->generating)
        generated(p, yajl_gen_array_open(p->gen));
    p->depth++;
    return 1;
}

static int on_end_array(void *ctx) {
    struct protocol *p = ctx;
    if (p->generating)
        generated(p, yajl_gen_array_close(p->gen));
    if (--p->depth == 1)
        p->generating = false;
    return 1;
}

/* With yajl_number set, yajl hands every number over as its literal text (never converted). */
static const yajl_callbacks CALLBACKS = {
    .yajl_null = on_null,
    .yajl_boolean = on_boolean,
    .yajl_number = on_number,
    .yajl_string = on_string,
    .yajl_start_map = on_start_map,
    .yajl_map_key = on_map_key,
    .yajl_end_map = on_end_map,
    .yajl_start_array = on_start_array,
    .yajl_end_array = on_end_array,
};

/* ------------------------------------------------------------------------------------------ */
/* Replies                                                                                    */
/* ------------------------------------------------------------------------------------------ */

static size_t put_fixed(unsigned char *reply, const char *text, size_t len) {
    memcpy(reply, text, len);
    return len;
}
#define PUT_FIXED(reply, lit) put_fixed(reply, lit, sizeof lit - 1)

/* {"error": message}, escaped by yajl. `message` may hold any valid UTF-8, NUL included. */
static size_t error_reply(struct protocol *p, unsigned char *reply, const char *message,
                          size_t len) {
    static const unsigned char key[] = "error";
    yajl_gen g = p->gen;
    yajl_gen_reset(g, NULL);
    p->out = reply;
    p->used = 0;
    p->limit = FRAME_MAX_REPLY;
    p->overflow = false;
    if (yajl_gen_map_open(g) != yajl_gen_status_ok ||
        yajl_gen_string(g, key, sizeof key - 1) != yajl_gen_status_ok ||
        yajl_gen_string(g, (const unsigned char *)message, len) != yajl_gen_status_ok ||
        yajl_gen_map_close(g) != yajl_gen_status_ok || p->overflow)
        return PUT_FIXED(reply, GENERIC_ERROR);
    return p->used;
}

static size_t error_text(struct protocol *p, unsigned char *reply, const char *message) {
    return error_reply(p, reply, message, strlen(message));
}

static size_t text_fault_reply(struct protocol *p, unsigned char *reply, enum text_fault fault,
                               size_t at) {
    char message[128];
    snprintf(message, sizeof message,
             fault == TEXT_NOT_UTF8
                 ? "request is not valid UTF-8 (byte %zu)"
                 : "lone UTF-16 surrogate escape at byte %zu: it encodes no character",
             at);
    return error_text(p, reply, message);
}

static size_t stop_reply(struct protocol *p, unsigned char *reply) {
    switch (p->stop) {
    case STOP_NOT_OBJECT:
        return error_text(p, reply, "request is not a JSON object");
    case STOP_NUMBER_RANGE:
        return error_text(p, reply, "a number in the request is beyond the range of a double");
    case STOP_NO_MEMORY:
        return error_text(p, reply, "out of memory parsing the request");
    case STOP_NONE:
        break;
    }
    return error_text(p, reply, "cannot parse request");
}

/*
 * yajl's message names the error ("lexical error: invalid char in json text."); the offset
 * is where the parse stopped. Kept to printable ASCII so the reply is sure to be valid JSON.
 */
static size_t parse_error_reply(struct protocol *p, unsigned char *reply, yajl_handle h,
                                bool at_end) {
    char text[128] = "invalid JSON";
    unsigned char *err = yajl_get_error(h, 0, NULL, 0);
    if (err) {
        size_t i = 0;
        for (; i < sizeof text - 1 && err[i] != '\0' && err[i] != '\n'; i++)
            text[i] = (err[i] >= 0x20 && err[i] < 0x7f) ? (char)err[i] : '?';
        text[i] = '\0';
        yajl_free_error(h, err);
    }
    char message[sizeof text + 64];
    if (at_end)
        snprintf(message, sizeof message, "cannot parse request at its end: %s", text);
    else
        snprintf(message, sizeof message, "cannot parse request at byte %zu: %s",
                 yajl_get_bytes_consumed(h), text);
    return error_text(p, reply, message);
}

static size_t unknown_op_reply(struct protocol *p, unsigned char *reply) {
    static const char head[] = "unknown op \"";
    static const char dots[] = "...";
    size_t quoted = p->op_len;
    if (quoted > OP_QUOTE_MAX) {
        quoted = OP_QUOTE_MAX;
        /* The text is valid UTF-8: back up over continuation bytes to a character start. */
        while (quoted > 0 && is_continuation(p->op_text[quoted]))
            quoted--;
    }
    char message[sizeof head + OP_QUOTE_MAX + sizeof dots + 1];
    size_t n = 0;
    memcpy(message + n, head, sizeof head - 1);
    n += sizeof head - 1;
    memcpy(message + n, p->op_text, quoted);
    n += quoted;
    if (quoted < p->op_len) {
        memcpy(message + n, dots, sizeof dots - 1);
        n += sizeof dots - 1;
    }
    message[n++] = '"';
    return error_reply(p, reply, message, n);
}

/* The data value is already in the reply, after the head: only the closing brace is missing. */
static size_t echo_reply(struct protocol *p, unsigned char *reply) {
    switch (p->data) {
    case DATA_MISSING:
        return error_text(p, reply, "echo needs \"data\"");
    case DATA_TOO_DEEP:
        return error_text(p, reply,
                          "echo data is nested deeper than yajl's generator allows (127 levels)");
    case DATA_TOO_LARGE:
        return error_text(p, reply, "echo reply would exceed the 1 MiB reply limit");
    case DATA_FAILED:
        return error_text(p, reply, "could not serialise echo data");
    case DATA_OK:
        break;
    }
    reply[p->used++] = '}';
    return p->used;
}

static size_t fill_reply(struct protocol *p, unsigned char *reply) {
    switch (p->bytes) {
    case BYTES_MISSING:
        return error_text(p, reply, "fill needs \"bytes\"");
    case BYTES_NOT_INTEGER:
        return error_text(p, reply, "fill \"bytes\" must be an integer");
    case BYTES_OUT_OF_RANGE:
        return error_text(p, reply, "fill \"bytes\" must be between 23 and 1048576");
    case BYTES_OK:
        break;
    }
    const size_t head = sizeof FILL_HEAD - 1;
    const size_t tail = sizeof FILL_TAIL - 1;
    const size_t xs = p->fill_size - head - tail;
    memcpy(reply, FILL_HEAD, head);
    memset(reply + head, 'x', xs);
    memcpy(reply + head + xs, FILL_TAIL, tail);
    return p->fill_size;
}

/* The parse accepted the whole body, and the root was an object. */
static size_t answer(struct protocol *p, unsigned char *reply) {
    switch (p->op) {
    case OP_MISSING:
        return error_text(p, reply, "request has no \"op\"");
    case OP_NOT_STRING:
        return error_text(p, reply, "\"op\" is not a string");
    case OP_PING:
        return PUT_FIXED(reply, PONG);
    case OP_ECHO:
        return echo_reply(p, reply);
    case OP_FILL:
        return fill_reply(p, reply);
    case OP_UNKNOWN:
        return unknown_op_reply(p, reply);
    }
    return PUT_FIXED(reply, GENERIC_ERROR);
}

size_t protocol_reply(struct protocol *p, const unsigned char *request, size_t len,
                      unsigned char *reply) {
    size_t at = 0;
    enum text_fault fault = check_text(request, len, &at);
    if (fault != TEXT_OK)
        return text_fault_reply(p, reply, fault, at);

    begin_request(p, reply);
    /* yajl has no way to reset a parser: one per request (a handful of small allocations). */
    yajl_handle h = yajl_alloc(&CALLBACKS, NULL, p);
    if (!h)
        return error_text(p, reply, "out of memory parsing the request");
    /* Checked above, strictly. Comments, trailing garbage and several values stay refused. */
    yajl_config(h, yajl_dont_validate_strings, 1);
    yajl_config(h, yajl_allow_comments, 0);
    yajl_config(h, yajl_allow_trailing_garbage, 0);
    yajl_config(h, yajl_allow_multiple_values, 0);
    yajl_config(h, yajl_allow_partial_values, 0);

    bool at_end = false;
    yajl_status st = yajl_parse(h, request, len);
    if (st == yajl_status_ok) {
        /* Finishes a trailing token and refuses a body that ends inside the object. */
        at_end = true;
        st = yajl_complete_parse(h);
    }
    size_t n;
    if (st == yajl_status_ok)
        n = answer(p, reply);
    else if (st == yajl_status_client_canceled)
        n = stop_reply(p, reply);
    else
        n = parse_error_reply(p, reply, h, at_end);
    yajl_free(h);
    return n;
}
