/* The canonical content encoding (SPEC §3.5), the floor's wire format: integers little-endian
 * at their schema width, floats as their IEEE bits, Bool one byte 0 or 1, an enum its u16
 * ordinal, Text a u32 byte count then the bytes, a List a u32 count then its elements, a
 * struct its fields in ordinal order, a union a u16 tag then the member.
 *
 * Writers take a buffer already sized for the message (each case computes the exact size
 * first) and return the position after what they wrote. The reader is a cursor that checks
 * every length and count against the bytes left before it trusts it. */
#ifndef CAPNP_BASELINE_CCE_H
#define CAPNP_BASELINE_CCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* A Text: bytes that are not NUL-terminated (a decoded one points into the message). */
struct text {
    const char *ptr;
    uint32_t len;
};

/* Byte by byte with shifts: portable to any byte order, and one store on x86-64. */
static inline uint8_t *put_u8(uint8_t *p, uint8_t v) {
    p[0] = v;
    return p + 1;
}

static inline uint8_t *put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    return p + 2;
}

static inline uint8_t *put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
    p[2] = (uint8_t)(v >> 16);
    p[3] = (uint8_t)(v >> 24);
    return p + 4;
}

static inline uint8_t *put_u64(uint8_t *p, uint64_t v) {
    put_u32(p, (uint32_t)v);
    return put_u32(p + 4, (uint32_t)(v >> 32));
}

static inline uint8_t *put_f32(uint8_t *p, float v) {
    uint32_t bits;
    memcpy(&bits, &v, 4);
    return put_u32(p, bits);
}

static inline uint8_t *put_f64(uint8_t *p, double v) {
    uint64_t bits;
    memcpy(&bits, &v, 8);
    return put_u64(p, bits);
}

static inline uint8_t *put_text(uint8_t *p, struct text t) {
    p = put_u32(p, t.len);
    memcpy(p, t.ptr, t.len);
    return p + t.len;
}

static inline uint16_t load_u16(const uint8_t *p) {
    return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t load_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint64_t load_u64(const uint8_t *p) {
    return (uint64_t)load_u32(p) | (uint64_t)load_u32(p + 4) << 32;
}

/* A cursor over one message's bytes; `error` says what was wrong and where. */
struct cce {
    const uint8_t *p, *end, *start;
    char error[192];
};

static inline void cce_init(struct cce *c, const uint8_t *bytes, size_t len) {
    c->p = c->start = bytes;
    c->end = bytes + len;
    c->error[0] = '\0';
}

static inline size_t cce_left(const struct cce *c) {
    return (size_t)(c->end - c->p);
}

/* Records an error (printf-style) at the cursor's offset; always false. */
bool cce_fail(struct cce *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Whether `n` more bytes are there for `what`; the error otherwise. */
static inline bool cce_need(struct cce *c, size_t n, const char *what) {
    if (cce_left(c) >= n)
        return true;
    return cce_fail(c, "%s needs %zu bytes, %zu left", what, n, cce_left(c));
}

/* Unchecked reads: the caller has called cce_need for them. */
static inline uint8_t cce_u8(struct cce *c) {
    return *c->p++;
}

static inline uint16_t cce_u16(struct cce *c) {
    uint16_t v = load_u16(c->p);
    c->p += 2;
    return v;
}

static inline uint32_t cce_u32(struct cce *c) {
    uint32_t v = load_u32(c->p);
    c->p += 4;
    return v;
}

static inline uint64_t cce_u64(struct cce *c) {
    uint64_t v = load_u64(c->p);
    c->p += 8;
    return v;
}

static inline float cce_f32(struct cce *c) {
    uint32_t bits = cce_u32(c);
    float v;
    memcpy(&v, &bits, 4);
    return v;
}

static inline double cce_f64(struct cce *c) {
    uint64_t bits = cce_u64(c);
    double v;
    memcpy(&v, &bits, 8);
    return v;
}

/* A Text, pointing into the message: its length is checked against the bytes left. */
bool cce_text(struct cce *c, struct text *t, const char *what);

/* A List's count, checked so that `count` elements of at least `min_size` bytes each fit in
 * the bytes left: nothing is allocated for elements that are not there. */
bool cce_count(struct cce *c, size_t min_size, uint32_t *count, const char *what);

#endif
