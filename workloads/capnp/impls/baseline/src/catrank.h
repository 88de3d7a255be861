/* catrank (SPEC §3.3): search results scored by their snippets and sorted. */
#ifndef CAPNP_BASELINE_CATRANK_H
#define CAPNP_BASELINE_CATRANK_H

#include "cases.h"

struct search_result {
    struct text url;
    struct text snippet;
    double score;
};

/* A SearchResultList: the request and the response alike. */
struct search_results {
    struct search_result *items;
    uint32_t count;
    size_t size; /* bytes of its CCE */
};

/* The next request; *good gets the count of results with a cat and no dog. */
struct search_results *catrank_build(struct rng *rng, struct arena *a, uint32_t *good);
/* The response: every result rescored, sorted by score descending, NaN last. Its texts point
 * at the request's (they are the same bytes, and the request outlives the response). */
struct search_results *catrank_serve(const struct search_results *request, struct arena *a);
/* The client's count: the leading results scored above 1001. */
uint32_t catrank_good(const struct search_results *response);

void catrank_encode(const struct search_results *list, uint8_t *out);
struct search_results *catrank_decode(struct cce *c, struct arena *a);

#endif
