/* What the modes need of a case (carsales, catrank, eval), as a table of functions, so that
 * one loop per mode serves all three. Requests and responses are the cases' own structs,
 * passed as `const void *`; each case's header has the typed functions (the unit tests'). */
#ifndef CAPNP_BASELINE_CASES_H
#define CAPNP_BASELINE_CASES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arena.h"
#include "cce.h"
#include "rng.h"

/* What the client keeps of a request to check its response (SPEC §3). */
struct expected {
    uint64_t amount; /* carsales */
    uint32_t count;  /* catrank: results sent */
    uint32_t good;   /* catrank: results with a cat and no dog */
    int32_t value;   /* eval */
};

struct case_ops {
    const char *name;
    /* The client: the next request from the generator, built in `a`. */
    const void *(*build)(struct rng *rng, struct arena *a, struct expected *expected);
    /* The server: the response to `request`, built in `a`. */
    const void *(*serve)(const void *request, struct arena *a);
    /* Exact CCE sizes, then encoders writing exactly that many bytes. */
    size_t (*request_size)(const void *request);
    void (*encode_request)(const void *request, uint8_t *out);
    size_t (*response_size)(const void *response);
    void (*encode_response)(const void *response, uint8_t *out);
    /* Decoders over a whole message: NULL with c->error set when it is invalid, including
     * bytes left after its content. */
    const void *(*decode_request)(struct cce *c, struct arena *a);
    const void *(*decode_response)(struct cce *c, struct arena *a);
    /* The client's check; false with what was wrong written to `why`. */
    bool (*check)(const void *response, const struct expected *expected, char *why, size_t n);
};

extern const struct case_ops carsales_ops, catrank_ops, eval_ops;

/* The decoders' last step: no bytes may follow the content. */
static inline bool cce_end(struct cce *c) {
    if (c->p == c->end)
        return true;
    return cce_fail(c, "%zu byte(s) follow the message's content", cce_left(c));
}

#endif
