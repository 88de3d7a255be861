#include "eval.h"

#include <stdio.h>

int32_t eval_apply(unsigned op, int32_t a, int32_t b) {
    /* Add, subtract and multiply in uint32_t, where wrapping is defined; converting back is
     * the two's-complement value with GCC and Clang (C17 leaves it to the implementation). */
    switch (op) {
    case OP_ADD:
        return (int32_t)((uint32_t)a + (uint32_t)b);
    case OP_SUBTRACT:
        return (int32_t)((uint32_t)a - (uint32_t)b);
    case OP_MULTIPLY:
        return (int32_t)((uint32_t)a * (uint32_t)b);
    case OP_DIVIDE:
        return b == 0 || (a == INT32_MIN && b == -1) ? INT32_MAX : a / b;
    default: /* OP_MODULUS: decoding lets nothing else through */
        return b == 0 || (a == INT32_MIN && b == -1) ? INT32_MAX : a % b;
    }
}

int32_t eval_evaluate(const struct expression *e) {
    int32_t left = e->left.is_expression ? eval_evaluate(e->left.u.expression) : e->left.u.value;
    int32_t right =
        e->right.is_expression ? eval_evaluate(e->right.u.expression) : e->right.u.value;
    return eval_apply(e->op, left, right);
}

/* CCE bytes: an expression is its op, then each side's tag and a value or an expression. */
#define OP_SIZE 2
#define TAG_SIZE 2
#define VALUE_SIZE 4

static struct expression *make_expression(struct rng *rng, struct arena *a, uint32_t depth,
                                          size_t *size, int32_t *value);

/* The coin, then (the left side completely before the right side's coin) the side. */
static void make_side(struct rng *rng, struct arena *a, uint32_t depth, struct side *s,
                      size_t *size, int32_t *value) {
    *size += TAG_SIZE;
    if (rng_rand(rng, 8) < depth) {
        s->is_expression = false;
        s->u.value = (int32_t)(rng_rand(rng, 128) + 1);
        *size += VALUE_SIZE;
        *value = s->u.value;
    } else {
        s->is_expression = true;
        s->u.expression = make_expression(rng, a, depth + 1, size, value);
    }
}

static struct expression *make_expression(struct rng *rng, struct arena *a, uint32_t depth,
                                          size_t *size, int32_t *value) {
    struct expression *e = arena_must(a, sizeof *e);
    e->op = (uint16_t)rng_rand(rng, 5);
    *size += OP_SIZE;
    int32_t left, right;
    make_side(rng, a, depth, &e->left, size, &left);
    make_side(rng, a, depth, &e->right, size, &right);
    *value = eval_apply(e->op, left, right);
    return e;
}

struct eval_request *eval_build(struct rng *rng, struct arena *a, int32_t *value) {
    struct eval_request *request = arena_must(a, sizeof *request);
    request->size = 0;
    request->root = make_expression(rng, a, 0, &request->size, value);
    return request;
}

static uint8_t *encode_expression(const struct expression *e, uint8_t *p);

static uint8_t *encode_side(const struct side *s, uint8_t *p) {
    if (s->is_expression)
        return encode_expression(s->u.expression, put_u16(p, 1));
    return put_u32(put_u16(p, 0), (uint32_t)s->u.value);
}

static uint8_t *encode_expression(const struct expression *e, uint8_t *p) {
    p = put_u16(p, e->op);
    p = encode_side(&e->left, p);
    return encode_side(&e->right, p);
}

void eval_encode_request(const struct eval_request *request, uint8_t *out) {
    encode_expression(request->root, out);
}

static struct expression *decode_expression(struct cce *c, struct arena *a, unsigned depth);

static bool decode_side(struct cce *c, struct arena *a, unsigned depth, struct side *s) {
    if (!cce_need(c, TAG_SIZE, "a union's tag"))
        return false;
    uint16_t tag = cce_u16(c);
    if (tag == 0) {
        if (!cce_need(c, VALUE_SIZE, "a value"))
            return false;
        s->is_expression = false;
        s->u.value = (int32_t)cce_u32(c);
        return true;
    }
    if (tag != 1)
        return cce_fail(c, "union tag %u is neither 0 (value) nor 1 (expression)", tag);
    s->is_expression = true;
    s->u.expression = decode_expression(c, a, depth + 1);
    return s->u.expression != NULL;
}

/* Recursive, so the nesting limit is checked first: no input can take the stack deeper. */
static struct expression *decode_expression(struct cce *c, struct arena *a, unsigned depth) {
    if (depth > EVAL_NESTING_LIMIT) {
        cce_fail(c, "an expression nested deeper than the limit of %d", EVAL_NESTING_LIMIT);
        return NULL;
    }
    if (!cce_need(c, OP_SIZE, "an operation"))
        return NULL;
    uint16_t op = cce_u16(c);
    if (op > OP_MODULUS) {
        c->p -= OP_SIZE;
        cce_fail(c, "operation %u is not one of 0-4", op);
        return NULL;
    }
    struct expression *e = arena_alloc(a, sizeof *e);
    if (e == NULL) {
        cce_fail(c, "the expressions pass the 64 MiB limit of a message's objects");
        return NULL;
    }
    e->op = op;
    if (!decode_side(c, a, depth, &e->left) || !decode_side(c, a, depth, &e->right))
        return NULL;
    return e;
}

struct eval_request *eval_decode_request(struct cce *c, struct arena *a) {
    struct eval_request *request = arena_alloc(a, sizeof *request);
    if (request == NULL) {
        cce_fail(c, "no memory for the request");
        return NULL;
    }
    request->root = decode_expression(c, a, 1);
    if (request->root == NULL)
        return NULL;
    request->size = (size_t)(c->p - c->start);
    return cce_end(c) ? request : NULL;
}

/* The table for the modes. */

static const void *build(struct rng *rng, struct arena *a, struct expected *expected) {
    return eval_build(rng, a, &expected->value);
}

static const void *serve(const void *request, struct arena *a) {
    struct evaluation_result *result = arena_alloc(a, sizeof *result);
    if (result != NULL)
        result->value = eval_evaluate(((const struct eval_request *)request)->root);
    return result;
}

static size_t request_size(const void *request) {
    return ((const struct eval_request *)request)->size;
}

static void encode_request(const void *request, uint8_t *out) {
    eval_encode_request(request, out);
}

static size_t response_size(const void *response) {
    (void)response;
    return EVAL_RESPONSE_SIZE;
}

static void encode_response(const void *response, uint8_t *out) {
    put_u32(out, (uint32_t)((const struct evaluation_result *)response)->value);
}

static const void *decode_request(struct cce *c, struct arena *a) {
    return eval_decode_request(c, a);
}

static const void *decode_response(struct cce *c, struct arena *a) {
    if (!cce_need(c, EVAL_RESPONSE_SIZE, "the value"))
        return NULL;
    struct evaluation_result *result = arena_alloc(a, sizeof *result);
    if (result == NULL) {
        cce_fail(c, "no memory for the response");
        return NULL;
    }
    result->value = (int32_t)cce_u32(c);
    return cce_end(c) ? result : NULL;
}

static bool check(const void *response, const struct expected *expected, char *why, size_t n) {
    int32_t value = ((const struct evaluation_result *)response)->value;
    if (value == expected->value)
        return true;
    snprintf(why, n, "value %d expected, %d came", (int)expected->value, (int)value);
    return false;
}

const struct case_ops eval_ops = {
    .name = "eval",
    .build = build,
    .serve = serve,
    .request_size = request_size,
    .encode_request = encode_request,
    .response_size = response_size,
    .encode_response = encode_response,
    .decode_request = decode_request,
    .decode_response = decode_response,
    .check = check,
};
