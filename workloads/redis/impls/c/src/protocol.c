#include "protocol.h"
#include "numeric.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ---- request parser ---- */

void parser_init(struct parser *p) {
    memset(p, 0, sizeof *p);
    p->bulk_len = -1;
}

void parser_free(struct parser *p) {
    free(p->argv);
    p->argv = NULL;
    p->argv_cap = 0;
}

void parser_shrink(struct parser *p) {
    if (p->argv_cap > 1024 && p->kind == 0)
        parser_free(p);
}

static void parser_reset(struct parser *p) {
    p->kind = 0;
    p->left = 0;
    p->bulk_len = -1;
    p->pos = 0;
    p->scan = 0;
    p->stuck = false;
}

/* Room for one more argument. The vector doubles with the arguments that have arrived, never
 * with the count a header announces (a `*2147483647` costs nothing until its bulks come). */
static bool push_arg(struct slice **argv, int *cap, int argc, const char *p, size_t len) {
    if (argc == *cap) {
        int ncap = *cap ? *cap * 2 : 8;
        struct slice *bigger = realloc(*argv, (size_t)ncap * sizeof **argv);
        if (!bigger)
            return false;
        *argv = bigger;
        *cap = ncap;
    }
    (*argv)[argc] = (struct slice){p, len};
    return true;
}

/*
 * Finds the end of the line that starts at `start`: the first `want` byte. redis looks for it
 * with strchr() on its NUL-terminated query buffer, so a NUL byte hides every line end after
 * it and the request then waits until it is too big: such a line is "stuck". The search
 * resumes where the previous call stopped (p->scan), so a long line arriving in small pieces
 * is scanned once. Returns the offset, or -1 if the line has not ended (yet).
 */
static long find_line_end(struct parser *p, const char *buf, size_t start, size_t len, char want) {
    if (p->stuck)
        return -1;
    size_t from = p->scan > start ? p->scan : start;
    /* Header lines are a few bytes: a plain loop beats two memchr calls there. */
    size_t quick_end = len - from < 16 ? len : from + 16;
    for (size_t i = from; i < quick_end; i++) {
        if (buf[i] == want) {
            p->scan = 0;
            return (long)i;
        }
        if (buf[i] == '\0') {
            p->stuck = true;
            return -1;
        }
    }
    from = quick_end;
    const char *hit = memchr(buf + from, want, len - from);
    size_t limit = hit ? (size_t)(hit - buf) : len;
    if (memchr(buf + from, '\0', limit - from)) {
        p->stuck = true;
        return -1;
    }
    if (!hit) {
        p->scan = len;
        return -1;
    }
    p->scan = 0;
    return (long)(hit - buf);
}

static enum parse_status fail(struct parser *p, const char *error) {
    p->error = error;
    return PARSE_ERROR;
}

static inline bool is_space(int c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

static inline int hex_value(int c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

int split_inline(char *buf, size_t len, struct slice **argv, int *cap) {
    /* Reads at i >= len see the terminator redis's copy of the line has. */
#define AT(i) ((i) < len ? (unsigned char)buf[(i)] : 0)
    size_t r = 0, w = 0; /* read and write positions: w <= r, so unquoting fits in place */
    int argc = 0;
    for (;;) {
        while (AT(r) && is_space(AT(r)))
            r++;
        if (!AT(r))
            return argc;
        size_t start = w;
        bool in_double = false, in_single = false, done = false;
        while (!done) {
            int c = AT(r);
            if (in_double) {
                if (c == '\\' && AT(r + 1) == 'x' && hex_value(AT(r + 2)) >= 0 &&
                    hex_value(AT(r + 3)) >= 0) {
                    buf[w++] = (char)(hex_value(AT(r + 2)) * 16 + hex_value(AT(r + 3)));
                    r += 3;
                } else if (c == '\\' && AT(r + 1)) {
                    r++;
                    int e = AT(r);
                    buf[w++] = (char)(e == 'n'   ? '\n'
                                      : e == 'r' ? '\r'
                                      : e == 't' ? '\t'
                                      : e == 'b' ? '\b'
                                      : e == 'a' ? '\a'
                                                 : e);
                } else if (c == '"') {
                    /* A closing quote must be followed by a space or the end. */
                    if (AT(r + 1) && !is_space(AT(r + 1)))
                        return -1;
                    done = true;
                } else if (!c) {
                    return -1;
                } else {
                    buf[w++] = (char)c;
                }
            } else if (in_single) {
                if (c == '\\' && AT(r + 1) == '\'') {
                    r++;
                    buf[w++] = '\'';
                } else if (c == '\'') {
                    if (AT(r + 1) && !is_space(AT(r + 1)))
                        return -1;
                    done = true;
                } else if (!c) {
                    return -1;
                } else {
                    buf[w++] = (char)c;
                }
            } else {
                switch (c) {
                case ' ':
                case '\n':
                case '\r':
                case '\t':
                case '\0':
                    done = true;
                    break;
                case '"':
                    in_double = true;
                    break;
                case '\'':
                    in_single = true;
                    break;
                default:
                    buf[w++] = (char)c;
                    break;
                }
            }
            if (AT(r))
                r++;
        }
        /* Offsets for now: the vector may still move while it grows. */
        if (!push_arg(argv, cap, argc, (const char *)(uintptr_t)start, w - start))
            return -1;
        argc++;
    }
#undef AT
}

static enum parse_status parse_inline(struct parser *p, char *buf, size_t len) {
    long nl = find_line_end(p, buf, 0, len, '\n');
    if (nl < 0) {
        if (len > PROTO_INLINE_MAX)
            return fail(p, "Protocol error: too big inline request");
        return PARSE_MORE;
    }
    size_t line = (size_t)nl;
    if (line > 0 && buf[line - 1] == '\r')
        line--;
    int argc = split_inline(buf, line, &p->argv, &p->argv_cap);
    if (argc < 0)
        return fail(p, "Protocol error: unbalanced quotes in request");
    for (int i = 0; i < argc; i++)
        p->argv[i].p = buf + (uintptr_t)p->argv[i].p;
    p->argc = argc;
    p->used = (size_t)nl + 1;
    parser_reset(p);
    return argc ? PARSE_REQUEST : PARSE_EMPTY;
}

/* A header's number: plain digits are read here, anything else by parse_ll's full rules. */
static inline bool parse_header_number(const char *s, size_t len, long long *v) {
    if (len == 0 || len > 10 || s[0] < '1' || s[0] > '9')
        return parse_ll(s, len, v);
    long long n = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned d = (unsigned char)s[i] - '0';
        if (d > 9)
            return false;
        n = n * 10 + d;
    }
    *v = n;
    return true;
}

/* Reads the `*N` or `$N` header line at p->pos. Returns 1 with *value set, 0 for more bytes,
 * -1 for an error (p->error set). */
static int read_header(struct parser *p, const char *buf, size_t len, long long *value, bool bulk) {
    size_t start = p->pos;
    long cr = find_line_end(p, buf, start, len, '\r');
    if (cr < 0) {
        if (len - start > PROTO_INLINE_MAX) {
            p->error = bulk ? "Protocol error: too big bulk count string"
                            : "Protocol error: too big mbulk count string";
            return -1;
        }
        return 0;
    }
    /* The byte after '\r' must have arrived too (it is skipped, not checked, as redis). */
    if ((size_t)cr + 2 > len)
        return 0;
    if (bulk && buf[start] != '$') {
        p->error = NULL; /* formatted by the caller: it names the byte */
        return -1;
    }
    long long v;
    bool ok = parse_header_number(buf + start + 1, (size_t)cr - start - 1, &v);
    if (bulk) {
        if (!ok || v < 0 || v > PROTO_BULK_MAX) {
            p->error = "Protocol error: invalid bulk length";
            return -1;
        }
    } else if (!ok || v > PROTO_MBULK_MAX) {
        p->error = "Protocol error: invalid multibulk length";
        return -1;
    }
    p->pos = (size_t)cr + 2;
    *value = v;
    return 1;
}

/*
 * The common header, decided in one pass: `prefix`, up to 10 digits without a leading zero,
 * '\r', and the byte after it present, at most `max`. Returns the number (and moves *at past
 * the line), or -1 to let read_header decide (an error, an odd spelling, a line not ended yet).
 */
static inline long long scan_header(const char **at, const char *end, char prefix, long long max) {
    const char *s = *at;
    if (end - s < 4 || s[0] != prefix)
        return -1;
    unsigned d = (unsigned char)s[1] - '0';
    if (d > 9 || (d == 0 && s[2] != '\r'))
        return -1;
    long long v = d;
    const char *stop = end - 1 < s + 12 ? end - 1 : s + 12; /* the '\r' must have a byte after it */
    const char *q = s + 1;
    while (++q < stop && (d = (unsigned char)*q - '0') <= 9)
        v = v * 10 + d;
    if (q >= stop || *q != '\r' || v > max)
        return -1;
    *at = q + 2;
    return v;
}

static inline long long quick_header(struct parser *p, const char *buf, size_t len, char prefix,
                                     long long max) {
    const char *at = buf + p->pos;
    long long v = scan_header(&at, buf + len, prefix, max);
    if (v >= 0) {
        p->pos = (size_t)(at - buf);
        p->scan = 0;
    }
    return v;
}

/*
 * The common case in one pass: a whole request already in buf, every header the usual kind
 * (scan_header's). The arguments go straight into argv, with the position in a local: the
 * general path below keeps its state in *p between reads, and every store through a char
 * pointer may alias it, so it is reloaded and stored per argument (~330 instructions per
 * request at -P 16, ~150 here). Returns false, argc left 0, for the general path to give
 * redis's answer (a partial request, an odd header, an error).
 */
static bool parse_whole(struct parser *p, const char *buf, size_t len) {
    const char *at = buf;
    const char *end = buf + len;
    long long count = scan_header(&at, end, '*', PROTO_MBULK_MAX);
    if (count <= 0)
        return false;
    int argc = 0;
    for (long long i = 0; i < count; i++) {
        long long n = scan_header(&at, end, '$', PROTO_BULK_MAX);
        /* The body and its CRLF (skipped unchecked, as redis does). */
        if (n < 0 || (size_t)(end - at) < (size_t)n + 2 ||
            !push_arg(&p->argv, &p->argv_cap, argc, at, (size_t)n))
            return false;
        argc++;
        at += n + 2;
    }
    p->argc = argc;
    p->used = (size_t)(at - buf);
    parser_reset(p);
    return true;
}

/* The text of "expected '$', got 'X'" for the byte at the bulk header. */
static char expected_dollar[64];

static enum parse_status parse_multibulk(struct parser *p, char *buf, size_t len) {
    long long v;
    if (p->left == 0) {
        if (p->pos == 0 && parse_whole(p, buf, len))
            return PARSE_REQUEST;
        v = quick_header(p, buf, len, '*', PROTO_MBULK_MAX);
        if (v < 0) {
            int r = read_header(p, buf, len, &v, false);
            if (r <= 0)
                return r == 0 ? PARSE_MORE : PARSE_ERROR;
        }
        if (v <= 0) {
            p->used = p->pos;
            parser_reset(p);
            return PARSE_EMPTY;
        }
        p->left = v;
        p->bulk_len = -1;
    }
    while (p->left > 0) {
        if (p->bulk_len < 0 && (v = quick_header(p, buf, len, '$', PROTO_BULK_MAX)) >= 0) {
            p->bulk_len = v;
        } else if (p->bulk_len < 0) {
            int r = read_header(p, buf, len, &v, true);
            if (r == 0)
                return PARSE_MORE;
            if (r < 0) {
                if (!p->error) {
                    snprintf(expected_dollar, sizeof expected_dollar,
                             "Protocol error: expected '$', got '%c'", buf[p->pos]);
                    p->error = expected_dollar;
                }
                return PARSE_ERROR;
            }
            p->bulk_len = v;
        }
        /* The body and its CRLF (skipped unchecked, as redis does). */
        if (len - p->pos < (size_t)p->bulk_len + 2)
            return PARSE_MORE;
        if (!push_arg(&p->argv, &p->argv_cap, p->argc, (const char *)(uintptr_t)p->pos,
                      (size_t)p->bulk_len))
            return fail(p, "Protocol error: out of memory");
        p->argc++;
        p->pos += (size_t)p->bulk_len + 2;
        p->bulk_len = -1;
        p->left--;
    }
    for (int i = 0; i < p->argc; i++)
        p->argv[i].p = buf + (uintptr_t)p->argv[i].p;
    p->used = p->pos;
    parser_reset(p);
    return PARSE_REQUEST;
}

enum parse_status parse_request(struct parser *p, char *buf, size_t len) {
    if (p->kind == 0) {
        p->kind = buf[0] == '*' ? '*' : 'i';
        p->argc = 0;
    }
    return p->kind == '*' ? parse_multibulk(p, buf, len) : parse_inline(p, buf, len);
}

size_t parser_wants(const struct parser *p) {
    if (p->kind == '*' && p->left > 0 && p->bulk_len >= 0)
        return p->pos + (size_t)p->bulk_len + 2;
    return 0;
}

/* ---- replies ---- */

void outbuf_grow(struct outbuf *o, size_t need) {
    size_t cap = o->cap ? o->cap : 16 * 1024;
    while (cap - o->len < need)
        cap *= 2;
    char *bigger = realloc(o->buf, cap);
    if (!bigger) {
        /* Nothing sensible is left to do for a server that cannot buffer a reply. */
        static const char msg[] = "redis-c: out of memory\n";
        ssize_t ignored = write(2, msg, sizeof msg - 1);
        (void)ignored;
        abort();
    }
    o->buf = bigger;
    o->cap = cap;
}

/* "<prefix><n>\r\n" */
static inline void reply_header(struct outbuf *o, char prefix, long long n) {
    char *p = outbuf_room(o, 24);
    p[0] = prefix;
    size_t k = format_ll(p + 1, n);
    p[k + 1] = '\r';
    p[k + 2] = '\n';
    o->len += k + 3;
}

void reply_simple(struct outbuf *o, const char *msg) {
    size_t n = strlen(msg);
    char *p = outbuf_room(o, n + 3);
    p[0] = '+';
    memcpy(p + 1, msg, n);
    p[n + 1] = '\r';
    p[n + 2] = '\n';
    o->len += n + 3;
}

void reply_error(struct outbuf *o, const char *msg) {
    size_t n = strlen(msg);
    if (msg[0] != '-')
        REPLY_LITERAL(o, "-ERR ");
    reply_raw(o, msg, n);
    REPLY_LITERAL(o, "\r\n");
}

void reply_errorf(struct outbuf *o, const char *fmt, ...) {
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    /* As redis's addReplyErrorFormat: CR and LF from user data must not break the reply,
     * so those at either end are trimmed and the rest become spaces. */
    size_t len = strlen(msg), start = 0;
    while (start < len && (msg[start] == '\r' || msg[start] == '\n'))
        start++;
    while (len > start && (msg[len - 1] == '\r' || msg[len - 1] == '\n'))
        len--;
    for (size_t i = start; i < len; i++)
        if (msg[i] == '\r' || msg[i] == '\n')
            msg[i] = ' ';
    msg[len] = '\0';
    reply_error(o, msg + start);
}

void reply_int(struct outbuf *o, long long v) {
    reply_header(o, ':', v);
}

void reply_bulk_ll(struct outbuf *o, long long v) {
    char num[NUM_BUF];
    size_t n = format_ll(num, v);
    reply_bulk(o, num, n);
}

void reply_double(struct outbuf *o, double d) {
    char num[NUM_BUF];
    size_t n;
    if (isinf(d)) {
        n = d > 0 ? 3 : 4;
        memcpy(num, d > 0 ? "inf" : "-inf", n);
    } else {
        /* redis 7.0 replies 0 for a score of -0. */
        n = format_double(num, d == 0 ? 0.0 : d);
    }
    if (o->resp == 3) {
        char *p = outbuf_room(o, n + 3);
        p[0] = ',';
        memcpy(p + 1, num, n);
        p[n + 1] = '\r';
        p[n + 2] = '\n';
        o->len += n + 3;
    } else {
        reply_bulk(o, num, n);
    }
}

void reply_array(struct outbuf *o, long long n) {
    reply_header(o, '*', n);
}

void reply_map(struct outbuf *o, long long pairs) {
    if (o->resp == 3)
        reply_header(o, '%', pairs);
    else
        reply_header(o, '*', pairs * 2);
}

void reply_set(struct outbuf *o, long long n) {
    reply_header(o, o->resp == 3 ? '~' : '*', n);
}

void reply_null(struct outbuf *o) {
    if (o->resp == 3)
        REPLY_LITERAL(o, "_\r\n");
    else
        REPLY_LITERAL(o, "$-1\r\n");
}

void reply_null_array(struct outbuf *o) {
    if (o->resp == 3)
        REPLY_LITERAL(o, "_\r\n");
    else
        REPLY_LITERAL(o, "*-1\r\n");
}

void reply_verbatim(struct outbuf *o, const char *p, size_t n) {
    if (o->resp != 3) {
        reply_bulk(o, p, n);
        return;
    }
    reply_header(o, '=', (long long)n + 4);
    REPLY_LITERAL(o, "txt:");
    reply_raw(o, p, n);
    REPLY_LITERAL(o, "\r\n");
}
