#define _GNU_SOURCE /* memmem */
#include "catrank.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T(s)                                                                                       \
    { s, sizeof s - 1 }
static const struct text WORDS[] = {
    T("foo "),    T("bar "),   T("baz "),  T("qux "),   T("quux "),  T("corge "), T("grault "),
    T("garply "), T("waldo "), T("fred "), T("plugh "), T("xyzzy "), T("thud ")};
#undef T
static const char URL_PREFIX[] = "http://example.com/";
#define URL_PREFIX_LEN (sizeof URL_PREFIX - 1)
#define LONGEST_WORD 7
/* " ", 19 words, "cat ", "dog ", 19 words */
#define SNIPPET_MAX (1 + 19 * LONGEST_WORD + 4 + 4 + 19 * LONGEST_WORD)
/* A result's CCE bytes besides its texts: the url's length, the score, the snippet's length. */
#define RESULT_FIXED (4 + 8 + 4)

static size_t result_size(const struct search_result *r) {
    return RESULT_FIXED + r->url.len + r->snippet.len;
}

static char *put_words(struct rng *rng, char *p) {
    uint32_t n = rng_rand(rng, 20);
    for (uint32_t i = 0; i < n; i++) {
        const struct text *w = &WORDS[rng_rand(rng, 13)];
        memcpy(p, w->ptr, w->len);
        p += w->len;
    }
    return p;
}

struct search_results *catrank_build(struct rng *rng, struct arena *a, uint32_t *good) {
    struct search_results *list = arena_must(a, sizeof *list);
    list->count = rng_rand(rng, 1000);
    list->items = arena_must(a, list->count * sizeof *list->items);
    list->size = 4;
    uint32_t cats = 0;
    for (uint32_t i = 0; i < list->count; i++) {
        struct search_result *r = &list->items[i];
        r->score = 1000 - (double)i;

        uint32_t n = rng_rand(rng, 100);
        char *url = arena_must(a, URL_PREFIX_LEN + n);
        memcpy(url, URL_PREFIX, URL_PREFIX_LEN);
        for (uint32_t j = 0; j < n; j++)
            url[URL_PREFIX_LEN + j] = (char)('a' + rng_rand(rng, 26));
        r->url = (struct text){url, (uint32_t)(URL_PREFIX_LEN + n)};

        bool is_cat = rng_rand(rng, 8) == 0;
        bool is_dog = rng_rand(rng, 8) == 0;
        cats += is_cat && !is_dog;

        char *snippet = arena_reserve(a, SNIPPET_MAX), *p = snippet;
        *p++ = ' ';
        p = put_words(rng, p);
        if (is_cat) {
            memcpy(p, "cat ", 4);
            p += 4;
        }
        if (is_dog) {
            memcpy(p, "dog ", 4);
            p += 4;
        }
        p = put_words(rng, p);
        arena_commit(a, (size_t)(p - snippet));
        r->snippet = (struct text){snippet, (uint32_t)(p - snippet)};
        list->size += result_size(r);
    }
    *good = cats;
    return list;
}

static bool contains(struct text t, const char *word) {
    return memmem(t.ptr, t.len, word, 5) != NULL;
}

/* Descending by score, NaN after every number: a strict weak order on every input (NaN is
 * equivalent only to NaN), as qsort needs. Equal scores may come out in any order (SPEC
 * §3.3); the generator never makes two. */
static int by_score_descending(const void *pa, const void *pb) {
    double a = ((const struct search_result *)pa)->score;
    double b = ((const struct search_result *)pb)->score;
    bool a_nan = isnan(a), b_nan = isnan(b);
    if (a_nan || b_nan)
        return (int)a_nan - (int)b_nan;
    return (a < b) - (a > b);
}

struct search_results *catrank_serve(const struct search_results *request, struct arena *a) {
    uint32_t n = request->count;
    struct search_results *response =
        arena_alloc(a, sizeof *response + n * sizeof(*request->items));
    if (response == NULL)
        return NULL;
    response->items = (struct search_result *)(response + 1);
    response->count = n;
    response->size = request->size;
    for (uint32_t i = 0; i < n; i++) {
        const struct search_result *in = &request->items[i];
        struct search_result *out = &response->items[i];
        double score = in->score;
        if (contains(in->snippet, " cat "))
            score *= 10000;
        if (contains(in->snippet, " dog "))
            score /= 10000;
        out->url = in->url;
        out->snippet = in->snippet;
        out->score = score;
    }
    qsort(response->items, n, sizeof *response->items, by_score_descending);
    return response;
}

uint32_t catrank_good(const struct search_results *response) {
    uint32_t n = 0;
    while (n < response->count && response->items[n].score > 1001)
        n++;
    return n;
}

void catrank_encode(const struct search_results *list, uint8_t *out) {
    out = put_u32(out, list->count);
    for (uint32_t i = 0; i < list->count; i++) {
        const struct search_result *r = &list->items[i];
        out = put_text(out, r->url);
        out = put_f64(out, r->score);
        out = put_text(out, r->snippet);
    }
}

struct search_results *catrank_decode(struct cce *c, struct arena *a) {
    uint32_t n;
    if (!cce_count(c, RESULT_FIXED, &n, "the results"))
        return NULL;
    struct search_results *list = arena_alloc(a, sizeof *list + n * sizeof *list->items);
    if (list == NULL) {
        cce_fail(c, "%u results pass the 64 MiB limit of a message's objects", n);
        return NULL;
    }
    list->items = (struct search_result *)(list + 1);
    list->count = n;
    for (uint32_t i = 0; i < n; i++) {
        struct search_result *r = &list->items[i];
        if (!cce_text(c, &r->url, "a result's url") || !cce_need(c, 8, "a result's score"))
            return NULL;
        r->score = cce_f64(c);
        if (!cce_text(c, &r->snippet, "a result's snippet"))
            return NULL;
    }
    list->size = (size_t)(c->p - c->start);
    return cce_end(c) ? list : NULL;
}

/* The table for the modes. */

static const void *build(struct rng *rng, struct arena *a, struct expected *expected) {
    const struct search_results *list = catrank_build(rng, a, &expected->good);
    expected->count = list->count;
    return list;
}

static const void *serve(const void *request, struct arena *a) {
    return catrank_serve(request, a);
}

static size_t list_size(const void *list) {
    return ((const struct search_results *)list)->size;
}

static void encode(const void *list, uint8_t *out) {
    catrank_encode(list, out);
}

static const void *decode(struct cce *c, struct arena *a) {
    return catrank_decode(c, a);
}

static bool check(const void *response, const struct expected *expected, char *why, size_t n) {
    const struct search_results *list = response;
    if (list->count != expected->count) {
        snprintf(why, n, "%u results expected, %u came", expected->count, list->count);
        return false;
    }
    uint32_t good = catrank_good(list);
    if (good == expected->good)
        return true;
    snprintf(why, n, "%u results scored above 1001 expected, %u came", expected->good, good);
    return false;
}

const struct case_ops catrank_ops = {
    .name = "catrank",
    .build = build,
    .serve = serve,
    .request_size = list_size,
    .encode_request = encode,
    .response_size = list_size,
    .encode_response = encode,
    .decode_request = decode,
    .decode_response = decode,
    .check = check,
};
