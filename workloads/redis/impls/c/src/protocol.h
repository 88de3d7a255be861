/*
 * RESP2 on the wire: the request parser (multibulk and inline requests, incremental across
 * reads) and the reply encoder (appending replies to an output buffer).
 */
#ifndef REDIS_C_PROTOCOL_H
#define REDIS_C_PROTOCOL_H

#include "numeric.h"
#include "util.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Limits, as redis 7.0's defaults. */
#define PROTO_INLINE_MAX (64 * 1024)         /* inline line, and a `*`/`$` header line */
#define PROTO_BULK_MAX (512ll * 1024 * 1024) /* one bulk string */
#define PROTO_MBULK_MAX 2147483647ll         /* arguments in one multibulk request */
#define PROTO_BIG_BULK (32 * 1024)           /* bulks this size are read straight in */

enum parse_status {
    PARSE_REQUEST, /* a complete request: argv/argc are set, `used` bytes consumed */
    PARSE_EMPTY,   /* bytes consumed that hold no request (blank line, `*0`, `*-1`) */
    PARSE_MORE,    /* the request is incomplete: call again with the same bytes and more */
    PARSE_ERROR,   /* a protocol error: `error` says which; the connection must close */
};

/*
 * The parser of one connection. It keeps its place inside an incomplete request, so a request
 * that arrives in many reads is scanned once. Every position is relative to the first byte of
 * the request, so the caller may move the pending bytes between calls (to the front of a
 * buffer, into a bigger one).
 */
struct parser {
    uint8_t kind;       /* 0 = not started, else '*' (multibulk) or 'i' (inline) */
    long long left;     /* multibulk: bulks still to come */
    long long bulk_len; /* multibulk: length of the bulk being read, -1 = its header is next */
    size_t pos;         /* bytes of the request already parsed */
    size_t scan;        /* the current line holds no line end before this offset */
    bool stuck;         /* the current line holds a NUL: it cannot end (see find_line_end) */
    int argc;
    int argv_cap;
    /* While parsing, argv[i].p holds an offset from the request start, made a pointer when
     * the request is complete. */
    struct slice *argv;
    const char *error; /* PARSE_ERROR: the message after "-ERR " */
    size_t used;       /* PARSE_REQUEST/PARSE_EMPTY: bytes the request took */
};

void parser_init(struct parser *p);
void parser_free(struct parser *p);
/* Drops the argument vector if a huge request made it big. */
void parser_shrink(struct parser *p);

/*
 * Parses the request that starts at buf[0]; len bytes are available. Inline requests are
 * unquoted in place (buf is modified; the arguments point into it). After PARSE_REQUEST or
 * PARSE_EMPTY the parser is ready for the next request at buf + used.
 */
enum parse_status parse_request(struct parser *p, char *buf, size_t len);

/* Bytes from the request start the parser needs before it can make progress, when it knows
 * (inside a bulk body); 0 otherwise. Lets the reader size a read for a big argument. */
size_t parser_wants(const struct parser *p);

/* redis's sdssplitargs on buf[0..len), in place: arguments are written back into buf.
 * Returns the argument count, or -1 on unbalanced quotes. Exposed for the unit tests. */
int split_inline(char *buf, size_t len, struct slice **argv, int *cap);

/* ---- replies ---- */

/* A growable byte buffer the replies of a batch are appended to, in the client's protocol
 * version: RESP2, or RESP3 after HELLO 3 (nulls, doubles, maps and sets have their own types
 * there; everything else is encoded the same). */
struct outbuf {
    char *buf;
    size_t len;
    size_t cap;
    int resp; /* 2 or 3 (0 counts as 2) */
};

void outbuf_grow(struct outbuf *o, size_t need);

static inline char *outbuf_room(struct outbuf *o, size_t n) {
    if (UNLIKELY(o->cap - o->len < n))
        outbuf_grow(o, n);
    return o->buf + o->len;
}

static inline void reply_raw(struct outbuf *o, const void *p, size_t n) {
    memcpy(outbuf_room(o, n), p, n);
    o->len += n;
}

#define REPLY_LITERAL(o, s) reply_raw((o), s, sizeof s - 1)

void reply_simple(struct outbuf *o, const char *msg); /* +msg */
void reply_error(struct outbuf *o, const char *msg);  /* -ERR msg (or msg if it starts '-') */
void reply_errorf(struct outbuf *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));         /* as redis: CR/LF in the text become spaces */
void reply_int(struct outbuf *o, long long v);     /* :v */
void reply_bulk_ll(struct outbuf *o, long long v); /* an integer as a bulk string */
void reply_double(struct outbuf *o, double d);     /* %.17g (a bulk in RESP2), inf/-inf */
void reply_array(struct outbuf *o, long long n);   /* *n */
void reply_map(struct outbuf *o, long long pairs); /* %n, or *2n in RESP2 */
void reply_set(struct outbuf *o, long long n);     /* ~n, or *n in RESP2 */
void reply_null(struct outbuf *o);                 /* $-1, or _ in RESP3 */
void reply_null_array(struct outbuf *o);           /* *-1, or _ in RESP3 */
/* Text for humans (INFO, CLIENT LIST): a bulk string, in RESP3 a verbatim "txt" string. */
void reply_verbatim(struct outbuf *o, const char *p, size_t n);

/* The most bytes put_bulk adds to the data's own. */
#define BULK_ROOM 32

/* Writes "$n\r\n<bytes>\r\n" at p (room for n + BULK_ROOM) and returns its end. Most strings in
 * replies are short: a one-digit length is written directly and the bytes moved by copy_bytes,
 * without a call. */
static inline char *put_bulk(char *p, const void *data, size_t n) {
    size_t k;
    p[0] = '$';
    if (n < 10) {
        p[1] = (char)('0' + n);
        k = 2;
    } else {
        k = format_ll(p + 1, (long long)n) + 1;
    }
    p[k] = '\r';
    p[k + 1] = '\n';
    copy_bytes(p + k + 2, data, n);
    p += k + 2 + n;
    p[0] = '\r';
    p[1] = '\n';
    return p + 2;
}

/* $n bytes. */
static inline void reply_bulk(struct outbuf *o, const void *data, size_t n) {
    char *p = outbuf_room(o, n + BULK_ROOM);
    o->len += (size_t)(put_bulk(p, data, n) - p);
}

static inline void reply_ok(struct outbuf *o) {
    REPLY_LITERAL(o, "+OK\r\n");
}

#endif
