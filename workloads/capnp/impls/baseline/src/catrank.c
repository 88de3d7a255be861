#include "catrank.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef __SSE2__
#include <emmintrin.h>
#endif

/* The words, each padded with zeros to 8 bytes (the longest is 7): appending one is a single
 * 8-byte copy, advanced by its length (the next word, or the end of the snippet, overwrites the
 * padding; the snippet's reservation has room for it). */
struct word {
    char bytes[8];
    uint32_t len;
};
#define W(s)                                                                                       \
    { s, sizeof s - 1 }
static const struct word WORDS[] = {
    W("foo "),    W("bar "),   W("baz "),  W("qux "),   W("quux "),  W("corge "), W("grault "),
    W("garply "), W("waldo "), W("fred "), W("plugh "), W("xyzzy "), W("thud ")};
#undef W
static const char URL_PREFIX[] = "http://example.com/";
#define URL_PREFIX_LEN (sizeof URL_PREFIX - 1)
#define URL_MAX (URL_PREFIX_LEN + 99)
#define LONGEST_WORD 7
/* " ", 19 words, "cat ", "dog ", 19 words */
#define SNIPPET_MAX (1 + 19 * LONGEST_WORD + 4 + 4 + 19 * LONGEST_WORD)
/* A result's CCE bytes besides its texts: the url's length, the score, the snippet's length. */
#define RESULT_FIXED (4 + 8 + 4)

/* Appends fastRand(20) words at p; returns the new end. Inlined into the loop with the
 * generator's state in its caller's locals. */
static inline char *put_words(struct rng *rng, char *p) {
    for (uint32_t n = rng_rand(rng, 20); n > 0; n--) {
        const struct word *w = &WORDS[rng_rand(rng, 13)];
        memcpy(p, w->bytes, sizeof w->bytes);
        p += w->len;
    }
    return p;
}

static inline char letter(uint32_t draw) {
    return (char)('a' + draw % 26);
}

/* One step of xorshift128 with the words' roles rotated instead of the words moved: the new w
 * takes x's place (x ^= x << 11 is the SPEC's t), so four steps bring the names back. */
#define XORSHIFT_STEP(x, w) ((x) ^= (x) << 11, (x) = ((w) ^ ((x) ^ ((x) >> 8))) ^ ((w) >> 19))

/* Writes n letters at p, each 'a' + fastRand(26); returns the new end. Four draws per turn, so
 * that no step spends instructions moving the state's words. */
static inline char *put_letters(struct rng *rng, char *p, uint32_t n) {
    uint32_t x = rng->x, y = rng->y, z = rng->z, w = rng->w;
    for (; n >= 4; n -= 4, p += 4) {
        XORSHIFT_STEP(x, w);
        p[0] = letter(x);
        XORSHIFT_STEP(y, x);
        p[1] = letter(y);
        XORSHIFT_STEP(z, y);
        p[2] = letter(z);
        XORSHIFT_STEP(w, z);
        p[3] = letter(w);
    }
    *rng = (struct rng){x, y, z, w};
    for (; n > 0; n--)
        *p++ = letter(rng_next(rng));
    return p;
}

struct search_results *catrank_build(struct rng *shared, struct arena *a, uint32_t *good) {
    /* The generator's state in a local for the loops: the texts are char stores, which may
     * alias anything a pointer reaches, so drawing from *shared would load and store its four
     * words around every letter. */
    struct rng rng = *shared;
    struct search_results *list = arena_must(a, sizeof *list);
    list->count = rng_rand(&rng, 1000);
    list->items = arena_must(a, list->count * sizeof *list->items);
    size_t size = 4;
    uint32_t cats = 0;
    for (uint32_t i = 0; i < list->count; i++) {
        struct search_result *r = &list->items[i];
        r->score = 1000 - (double)i;

        /* The url and the snippet in one reservation: the url's letters in place, the snippet
         * right after it (its words padded to 8 bytes, hence the slack). */
        char *url = arena_reserve(a, URL_MAX + SNIPPET_MAX + 8);
        uint32_t n = rng_rand(&rng, 100);
        memcpy(url, URL_PREFIX, URL_PREFIX_LEN);
        char *p = url + URL_PREFIX_LEN;
        p = put_letters(&rng, p, n);
        r->url = (struct text){url, (uint32_t)(p - url)};

        bool is_cat = rng_rand(&rng, 8) == 0;
        bool is_dog = rng_rand(&rng, 8) == 0;
        cats += is_cat && !is_dog;

        char *snippet = p;
        *p++ = ' ';
        p = put_words(&rng, p);
        memcpy(p, "cat ", 4);
        p += is_cat ? 4 : 0;
        memcpy(p, "dog ", 4);
        p += is_dog ? 4 : 0;
        p = put_words(&rng, p);
        arena_commit(a, (size_t)(p - url));
        r->snippet = (struct text){snippet, (uint32_t)(p - snippet)};
        size += RESULT_FIXED + (size_t)(p - url);
    }
    list->size = size;
    *shared = rng;
    *good = cats;
    return list;
}

enum { CAT = 1, DOG = 2 };

/* Whether the five bytes at s are " cat " or " dog ". */
static unsigned match_at(const char *s) {
    if (s[0] != ' ' || s[4] != ' ')
        return 0;
    if (memcmp(s + 1, "cat", 3) == 0)
        return CAT;
    return memcmp(s + 1, "dog", 3) == 0 ? DOG : 0;
}

/* Which of " cat " and " dog " the text contains (CAT | DOG), in one pass: memmem builds a
 * shift table per call, too much for a snippet of a few dozen bytes. With SSE2 (every x86-64)
 * 16 positions at a time are screened for a space, then 'c' or 'd', then a space 4 bytes on;
 * the rare candidates are checked whole. */
static unsigned cat_dog(struct text t) {
    const char *s = t.ptr;
    size_t len = t.len, i = 0;
    unsigned found = 0;
    if (len < 5)
        return 0;
#ifdef __SSE2__
    const __m128i space = _mm_set1_epi8(' '), c = _mm_set1_epi8('c'), d = _mm_set1_epi8('d');
    for (; i + 4 + 16 <= len; i += 16) {
        __m128i a0 = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i a1 = _mm_loadu_si128((const __m128i *)(s + i + 1));
        __m128i a4 = _mm_loadu_si128((const __m128i *)(s + i + 4));
        __m128i cd = _mm_or_si128(_mm_cmpeq_epi8(a1, c), _mm_cmpeq_epi8(a1, d));
        __m128i spaces = _mm_and_si128(_mm_cmpeq_epi8(a0, space), _mm_cmpeq_epi8(a4, space));
        unsigned candidates = (unsigned)_mm_movemask_epi8(_mm_and_si128(cd, spaces));
        while (candidates != 0) {
            found |= match_at(s + i + (unsigned)__builtin_ctz(candidates));
            candidates &= candidates - 1;
        }
        if (found == (CAT | DOG))
            return found;
    }
#endif
    for (; i + 5 <= len; i++)
        found |= match_at(s + i);
    return found;
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
        unsigned words = cat_dog(in->snippet);
        if (words & CAT)
            score *= 10000;
        if (words & DOG)
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
