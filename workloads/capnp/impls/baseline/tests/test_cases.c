/* Unit tests of the generator and the three cases: golden.json's values and digests (SPEC
 * §3.5), the servers' arithmetic and sort, and decoding of hostile CCE (SPEC §6). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "carsales.h"
#include "catrank.h"
#include "check.h"
#include "eval.h"
#include "sha256.h"

static struct arena a, b;
static uint8_t buf[1 << 20];

/* A request's CCE into buf; its length. */
static size_t encode(const struct case_ops *ops, const void *request) {
    size_t n = ops->request_size(request);
    CHECK(n <= sizeof buf);
    ops->encode_request(request, buf);
    return n;
}

/* golden.json: first_outputs */
static void test_rng_first_outputs(void) {
    static const uint32_t want[] = {0x40ccd553, 0x49ff79c0, 0xa3e7e0af, 0x931c96e3, 0xb55caf9e};
    struct rng rng;
    rng_init(&rng);
    for (int i = 0; i < 5; i++)
        CHECK(rng_next(&rng) == want[i]);
}

/* The first car of SPEC §3.5, field by field. */
static void test_first_car(void) {
    struct rng rng;
    rng_init(&rng);
    uint64_t amount;
    const struct parking_lot *lot = carsales_build(&rng, &a, &amount);
    CHECK(lot->count == 179);
    const struct car *car = &lot->cars[0];
    CHECK(car->make.len == 2 && memcmp(car->make.ptr, "GM", 2) == 0);
    CHECK(car->model.len == 5 && memcmp(car->model.ptr, "Prius", 5) == 0);
    CHECK(car->color == 0 && car->seats == 2 && car->doors == 4);
    static const uint16_t diameters[] = {34, 33, 36, 36};
    static const float pressures[] = {48.475872f, 46.546158f, 39.139904f, 32.082848f};
    CHECK(car->wheel_count == 4);
    for (int i = 0; i < 4; i++) {
        CHECK(car->wheels[i].diameter == diameters[i]);
        CHECK(fabsf(car->wheels[i].air_pressure - pressures[i]) < 1e-5f);
        CHECK(!car->wheels[i].snow_tires);
    }
    CHECK(car->length == 178 && car->width == 72 && car->height == 57 && car->weight == 3652);
    CHECK(car->engine.horsepower == 12900 && car->engine.cylinders == 8);
    CHECK(car->engine.cc == 5195 && car->engine.uses_gas && car->engine.uses_electric);
    CHECK(fabsf(car->fuel_capacity - 31.613008f) < 1e-5f);
    CHECK(fabsf(car->fuel_level - 5.6485276f) < 1e-6f);
    CHECK(car->has_power_windows && car->has_power_steering && car->has_cruise_control);
    CHECK(car->cup_holders == 8 && !car->has_nav_system);
    arena_release(&a);
}

/* golden.json: first_counts, first_amounts / first_good / first_values; then each served. */
static void test_golden_answers(void) {
    static const uint32_t cars[] = {179, 86, 141, 78, 104, 52, 132, 112, 178, 146};
    static const uint64_t amounts[] = {135060640, 70033924,  114656075, 64896417,  88456673,
                                       46863121,  108907045, 102515612, 154041532, 114069722};
    static const uint32_t results[] = {779, 311, 840, 49, 570, 619, 506, 817, 254, 834};
    static const uint32_t good[] = {104, 34, 106, 2, 64, 67, 51, 76, 26, 112};
    static const int32_t values[] = {0, -369557, 8096, 294, 903, 2214, 2, 2825, -294, 1631111};
    struct rng r1, r2, r3;
    rng_init(&r1);
    rng_init(&r2);
    rng_init(&r3);
    for (int i = 0; i < 10; i++) {
        struct expected e = {0};
        const struct parking_lot *lot = carsales_ops.build(&r1, &a, &e);
        CHECK(lot->count == cars[i] && e.amount == amounts[i]);
        CHECK(carsales_serve(lot, &b)->amount == amounts[i]);
        arena_release(&a);
        arena_release(&b);

        const struct search_results *list = catrank_ops.build(&r2, &a, &e);
        CHECK(list->count == results[i] && e.count == results[i] && e.good == good[i]);
        const struct search_results *response = catrank_serve(list, &b);
        CHECK(catrank_good(response) == good[i]);
        char why[128];
        CHECK(catrank_ops.check(response, &e, why, sizeof why));
        arena_release(&a);
        arena_release(&b);

        const struct eval_request *expr = eval_ops.build(&r3, &a, &e);
        CHECK(e.value == values[i]);
        CHECK(eval_evaluate(expr->root) == values[i]);
        arena_release(&a);
    }
}

/* golden.json: sha256 of the CCE of the first digest_requests requests. */
static void check_digest(const struct case_ops *ops, int count, const char *want) {
    struct rng rng;
    rng_init(&rng);
    struct sha256 sha;
    sha256_init(&sha);
    for (int i = 0; i < count; i++) {
        struct expected e;
        const void *request = ops->build(&rng, &a, &e);
        size_t n = encode(ops, request);
        sha256_update(&sha, buf, n);
        /* and it decodes to the same content: the same bytes again */
        struct cce c;
        cce_init(&c, buf, n);
        const void *decoded = ops->decode_request(&c, &b);
        CHECK(decoded != NULL && ops->request_size(decoded) == n);
        static uint8_t again[1 << 20];
        if (decoded != NULL) {
            ops->encode_request(decoded, again);
            CHECK(memcmp(again, buf, n) == 0);
        }
        arena_release(&a);
        arena_release(&b);
    }
    char hex[65];
    sha256_hex(&sha, hex);
    if (strcmp(hex, want) != 0)
        fprintf(stderr, "  %s: digest %s, want %s\n", ops->name, hex, want);
    CHECK(strcmp(hex, want) == 0);
}

static void test_golden_digests(void) {
    check_digest(&carsales_ops, 8,
                 "9ba50a5bcdb1bee6958be9775fe46e896c2d52bdee9ec6e6d75dd59ddbb0dde3");
    check_digest(&catrank_ops, 4,
                 "b75589e8217073c5d60699fa0dee8bacaf887814044c876962daec1a47b240ee");
    check_digest(&eval_ops, 64, "4b563ebdc30933bb05040484179941b3a2af282a2dfef38f571d1fcdbe44b0a5");
}

static void test_eval_arithmetic(void) {
    CHECK(eval_apply(OP_ADD, INT32_MAX, 1) == INT32_MIN);
    CHECK(eval_apply(OP_SUBTRACT, INT32_MIN, 1) == INT32_MAX);
    CHECK(eval_apply(OP_MULTIPLY, 65536, 65536) == 0);
    CHECK(eval_apply(OP_MULTIPLY, INT32_MIN, -1) == INT32_MIN);
    CHECK(eval_apply(OP_DIVIDE, -7, 2) == -3 && eval_apply(OP_MODULUS, -7, 2) == -1);
    CHECK(eval_apply(OP_DIVIDE, 7, -2) == -3 && eval_apply(OP_MODULUS, 7, -2) == 1);
    CHECK(eval_apply(OP_DIVIDE, 5, 0) == INT32_MAX && eval_apply(OP_MODULUS, 5, 0) == INT32_MAX);
    CHECK(eval_apply(OP_DIVIDE, INT32_MIN, -1) == INT32_MAX);
    CHECK(eval_apply(OP_MODULUS, INT32_MIN, -1) == INT32_MAX);
}

/* Cats ×10000, dogs ÷10000, sorted descending with NaN last. */
static void test_catrank_scores_and_sort(void) {
    struct search_result items[] = {
        {{"a", 1}, {" x ", 3}, 5},         {{"b", 1}, {" cat ", 5}, 3},
        {{"c", 1}, {" dog ", 5}, 2000},    {{"d", 1}, {" y ", 3}, NAN},
        {{"e", 1}, {" cat dog ", 9}, 999}, {{"f", 1}, {" cats ", 6}, 7},
        {{"g", 1}, {" z ", 3}, NAN},       {{"h", 1}, {" ", 1}, -INFINITY},
    };
    struct search_results request = {items, 8, 0};
    const struct search_results *r = catrank_serve(&request, &a);
    CHECK(r->count == 8);
    CHECK(r->items[0].score == 30000 && r->items[0].url.ptr[0] == 'b');
    CHECK(r->items[1].score == 999 && r->items[1].url.ptr[0] == 'e');
    CHECK(r->items[2].score == 7 && r->items[3].score == 5);
    CHECK(r->items[4].score == 0.2 && r->items[5].score == -INFINITY);
    CHECK(isnan(r->items[6].score) && isnan(r->items[7].score));
    CHECK(catrank_good(r) == 1);
    arena_release(&a);
}

/* The snippet search at every position and length around its 16-byte screening: a word found
 * wherever it starts, and nothing when it is cut by the end, spoiled by a byte, or not spaced. */
static void test_catrank_search_positions(void) {
    static const char *const words[] = {" cat ", " dog ", " cot ", " dag ", "xcat ", " cat"};
    for (size_t w = 0; w < sizeof words / sizeof *words; w++) {
        size_t wlen = strlen(words[w]);
        for (size_t len = 0; len <= 48; len++) {
            for (size_t at = 0; at + wlen <= len; at++) {
                char text[48];
                memset(text, 'q', len);
                memcpy(text + at, words[w], wlen);
                struct search_result item = {{"u", 1}, {text, (uint32_t)len}, 3};
                struct search_results request = {&item, 1, 0};
                const struct search_results *r = catrank_serve(&request, &a);
                double want = 3;
                if (strcmp(words[w], " cat ") == 0)
                    want = 30000;
                else if (strcmp(words[w], " dog ") == 0)
                    want = 3.0 / 10000;
                CHECK(r->items[0].score == want);
                arena_release(&a);
            }
        }
    }
}

/* Decoding `len` bytes of buf must fail (with a message), never crash or over-allocate. */
static bool rejects(const struct case_ops *ops, const uint8_t *bytes, size_t len) {
    struct cce c;
    cce_init(&c, bytes, len);
    const void *got = ops->decode_request(&c, &b);
    arena_release(&b);
    return got == NULL && c.error[0] != '\0';
}

static void test_every_truncation_is_rejected(void) {
    const struct case_ops *ops[] = {&carsales_ops, &catrank_ops, &eval_ops};
    for (int k = 0; k < 3; k++) {
        struct rng rng;
        rng_init(&rng);
        struct expected e;
        size_t n = encode(ops[k], ops[k]->build(&rng, &a, &e));
        int failures = check_failures;
        for (size_t len = 0; len < n && check_failures == failures; len++)
            CHECK(rejects(ops[k], buf, len));
        /* and a byte too many */
        CHECK(rejects(ops[k], buf, n + 1));
        arena_release(&a);
    }
}

static size_t hex(const char *text, uint8_t *out) {
    size_t n = 0;
    unsigned v;
    int used;
    while (sscanf(text, " %2x%n", &v, &used) == 1) {
        out[n++] = (uint8_t)v;
        text += used;
    }
    return n;
}

static bool rejects_hex(const struct case_ops *ops, const char *text) {
    uint8_t bytes[256];
    return rejects(ops, bytes, hex(text, bytes));
}

static void test_hostile_counts_and_lengths(void) {
    /* 2^32-1 cars, 2^29 results: refused from the bytes left, before any allocation */
    CHECK(rejects_hex(&carsales_ops, "ff ff ff ff 00 00 00 00"));
    CHECK(rejects_hex(&catrank_ops, "00 00 00 20 00 00 00 00 00 00 00 00 00 00 00 00 00 00"));
    /* a car whose text runs past the end; whose wheels cannot fit */
    CHECK(rejects_hex(&carsales_ops, "01 00 00 00 ff ff ff ff 00 00"));
    CHECK(rejects_hex(&carsales_ops, "01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
                                     "ff ff ff 1f" /* wheels */));
    /* a result whose snippet claims more than there is */
    CHECK(rejects_hex(&catrank_ops, "01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
                                    "10 00 00 00 61"));
    /* one valid result (url "", score 1.0, snippet "a") */
    CHECK(!rejects_hex(&catrank_ops, "01 00 00 00 00 00 00 00 00 00 00 00 00 00 f0 3f "
                                     "01 00 00 00 61"));
    static const char *car = "01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
                             "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
                             "00 00 00 00 00 00 00 00 00 00 00 00";
    CHECK(!rejects_hex(&carsales_ops, car)); /* one car of zeros: valid; with a Bool 2: not */
    uint8_t bytes[256];
    size_t n = hex(car, bytes);
    bytes[n - 1] = 2; /* hasNavSystem */
    CHECK(rejects(&carsales_ops, bytes, n));
}

/* An expression nested `depth` deep: each level's left side the next, the right a value. */
static size_t nested(uint8_t *out, int depth, uint16_t op) {
    uint8_t *p = out;
    for (int i = 0; i < depth; i++) {
        p = put_u16(p, op);
        p = put_u16(p, i + 1 < depth ? 1 : 0);
        if (i + 1 == depth)
            p = put_u32(p, 7);
    }
    for (int i = 0; i < depth; i++)
        p = put_u32(put_u16(p, 0), 1);
    return (size_t)(p - out);
}

static void test_eval_hostile(void) {
    static uint8_t deep[10000 * 10 + 16];
    size_t n = nested(deep, EVAL_NESTING_LIMIT, OP_ADD);
    struct cce c;
    cce_init(&c, deep, n);
    const struct eval_request *r = eval_decode_request(&c, &b);
    CHECK(r != NULL && eval_evaluate(r->root) == 7 + EVAL_NESTING_LIMIT);
    arena_release(&b);
    CHECK(rejects(&eval_ops, deep, nested(deep, EVAL_NESTING_LIMIT + 1, OP_ADD)));
    CHECK(rejects(&eval_ops, deep, nested(deep, 10000, OP_ADD)));
    CHECK(rejects(&eval_ops, deep, nested(deep, 3, 5)));                         /* op 5 */
    CHECK(rejects_hex(&eval_ops, "00 00 02 00 01 00 00 00 00 00 01 00 00 00"));  /* tag 2 */
    CHECK(!rejects_hex(&eval_ops, "04 00 00 00 01 00 00 00 00 00 01 00 00 00")); /* valid */
}

int main(void) {
    arena_init(&a, true);
    arena_init(&b, false);
    RUN(test_rng_first_outputs);
    RUN(test_first_car);
    RUN(test_golden_answers);
    RUN(test_golden_digests);
    RUN(test_eval_arithmetic);
    RUN(test_catrank_scores_and_sort);
    RUN(test_catrank_search_positions);
    RUN(test_every_truncation_is_rejected);
    RUN(test_hostile_counts_and_lengths);
    RUN(test_eval_hostile);
    arena_destroy(&a);
    arena_destroy(&b);
    return check_failures == 0 ? 0 : 1;
}
