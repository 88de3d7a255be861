/* eval (SPEC §3.4): an expression tree, answered with its int32 value. */
#ifndef CAPNP_BASELINE_EVAL_H
#define CAPNP_BASELINE_EVAL_H

#include "cases.h"

enum operation { OP_ADD, OP_SUBTRACT, OP_MULTIPLY, OP_DIVIDE, OP_MODULUS };

/* Deeper expressions are refused when decoded: libcapnp's default nesting limit (SPEC §6);
 * the generator's are at most 9 deep. The evaluator's recursion is bounded by it too. */
#define EVAL_NESTING_LIMIT 64

struct expression;

/* One side of an operation: the union `value` (tag 0) or `expression` (tag 1). */
struct side {
    bool is_expression;
    union {
        int32_t value;
        struct expression *expression;
    } u;
};

struct expression {
    uint16_t op; /* an enum operation; decoding refuses anything else */
    struct side left, right;
};

struct eval_request {
    struct expression *root;
    size_t size; /* bytes of its CCE */
};

struct evaluation_result {
    int32_t value;
};

/* The next request; *value gets the value the server must answer. */
struct eval_request *eval_build(struct rng *rng, struct arena *a, int32_t *value);
/* One operation in int32 with two's-complement wrap-around; division and modulus by zero and
 * INT32_MIN by -1 give INT32_MAX. */
int32_t eval_apply(unsigned op, int32_t left, int32_t right);
int32_t eval_evaluate(const struct expression *e);

void eval_encode_request(const struct eval_request *request, uint8_t *out);
struct eval_request *eval_decode_request(struct cce *c, struct arena *a);

#define EVAL_RESPONSE_SIZE 4

#endif
