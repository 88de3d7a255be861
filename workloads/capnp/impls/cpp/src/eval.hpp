// eval (SPEC §3.4): a random arithmetic expression tree, evaluated by the server; nested
// structures.
#pragma once

#include "eval.capnp.h"
#include "rng.hpp"

#include <cstdint>

namespace capbench {

struct Eval {
    using Request = Expression;
    using Response = EvaluationResult;
    using Expectation = std::int32_t; // the expression's value
    static constexpr const char *kName = "eval";

    // Fills `request` with makeExpression(0); returns its value.
    static Expectation build(Rng &rng, Expression::Builder request);
    // value = the expression evaluated; an unknown operation or union member is a
    // kj::Exception, and so is nesting beyond the reader's limit.
    static void serve(Expression::Reader request, EvaluationResult::Builder response);
    // Throws WrongAnswer unless the value is `expected`.
    static void check(EvaluationResult::Reader response, Expectation expected);
};

// One operation in int32 with two's-complement wrap-around (C's / and %, and INT32_MAX for a
// zero divisor or INT32_MIN by -1). The raw operation code: anything above 4 is an error.
std::int32_t apply(std::uint16_t op, std::int32_t left, std::int32_t right);

// The value of an expression tree, recursively.
std::int32_t evaluate(Expression::Reader expression);

} // namespace capbench
