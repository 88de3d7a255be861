#include "cce.h"

#include <stdarg.h>
#include <stdio.h>

bool cce_fail(struct cce *c, const char *fmt, ...) {
    if (c->error[0] != '\0')
        return false; /* the first error is the one that explains the rest */
    int n = snprintf(c->error, sizeof c->error, "at byte %zu: ", (size_t)(c->p - c->start));
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->error + n, sizeof c->error - (size_t)n, fmt, ap);
    va_end(ap);
    return false;
}

bool cce_text(struct cce *c, struct text *t, const char *what) {
    if (!cce_need(c, 4, what))
        return false;
    uint32_t len = load_u32(c->p);
    if (len > cce_left(c) - 4)
        return cce_fail(c, "%s of %u bytes runs past the message's end (%zu bytes left)", what, len,
                        cce_left(c) - 4);
    t->ptr = (const char *)c->p + 4;
    t->len = len;
    c->p += 4 + (size_t)len;
    return true;
}

bool cce_count(struct cce *c, size_t min_size, uint32_t *count, const char *what) {
    if (!cce_need(c, 4, what))
        return false;
    uint32_t n = load_u32(c->p);
    if ((uint64_t)n * min_size > cce_left(c) - 4)
        return cce_fail(c, "%s of %u elements cannot fit in the %zu bytes left", what, n,
                        cce_left(c) - 4);
    c->p += 4;
    *count = n;
    return true;
}
