#include "eval.hpp"

#include "errors.hpp"

#include <kj/debug.h>

#include <limits>
#include <string>

namespace capbench {

namespace {

constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();

// Wrapping arithmetic without signed overflow (undefined behaviour): computed in uint32_t,
// where it is defined modulo 2^32, and converted back (modular since C++20).
std::int32_t wrap(std::uint32_t v) noexcept {
    return static_cast<std::int32_t>(v);
}
std::uint32_t bits(std::int32_t v) noexcept {
    return static_cast<std::uint32_t>(v);
}

// One side of an operation: built as a value or a subexpression by the SPEC's coin, with the
// value it contributes.
template <typename Side> std::int32_t make_side(Rng &rng, Side side, std::uint32_t depth);

std::int32_t make_expression(Rng &rng, Expression::Builder expression, std::uint32_t depth) {
    const auto op = static_cast<std::uint16_t>(rng.fastRand(5));
    expression.setOp(static_cast<Operation>(op));
    // The left side is finished (its whole subtree drawn) before the right side's coin. The
    // groups are taken with get, not init: the new struct is zeroed already, and init would
    // clear it again.
    const std::int32_t left = make_side(rng, expression.getLeft(), depth);
    const std::int32_t right = make_side(rng, expression.getRight(), depth);
    return apply(op, left, right);
}

template <typename Side> std::int32_t make_side(Rng &rng, Side side, std::uint32_t depth) {
    if (rng.fastRand(8) < depth) {
        const auto value = static_cast<std::int32_t>(rng.fastRand(128) + 1);
        side.setValue(value);
        return value;
    }
    return make_expression(rng, side.initExpression(), depth + 1);
}

// One side of an expression being evaluated. Which() of a hostile message may be any 16-bit
// number; anything but the two members is an error, not a silent default.
template <typename Side> std::int32_t side_value(Side side) {
    using Which = decltype(side.which());
    switch (side.which()) {
    case Which::VALUE:
        return side.getValue();
    case Which::EXPRESSION:
        return evaluate(side.getExpression());
    }
    KJ_FAIL_REQUIRE("unknown union member", static_cast<std::uint16_t>(side.which()));
}

} // namespace

std::int32_t apply(std::uint16_t op, std::int32_t left, std::int32_t right) {
    switch (static_cast<Operation>(op)) {
    case Operation::ADD:
        return wrap(bits(left) + bits(right));
    case Operation::SUBTRACT:
        return wrap(bits(left) - bits(right));
    case Operation::MULTIPLY:
        return wrap(bits(left) * bits(right));
    case Operation::DIVIDE:
        if (right == 0 || (left == kMin && right == -1))
            return kMax;
        return left / right;
    case Operation::MODULUS:
        if (right == 0 || (left == kMin && right == -1))
            return kMax;
        return left % right;
    }
    KJ_FAIL_REQUIRE("unknown operation", op);
}

std::int32_t evaluate(Expression::Reader expression) {
    // The recursion is bounded by the reader's nesting limit (64): getExpression() on a deeper
    // or cyclic message throws before this recurses again.
    const std::int32_t left = side_value(expression.getLeft());
    const std::int32_t right = side_value(expression.getRight());
    return apply(static_cast<std::uint16_t>(expression.getOp()), left, right);
}

Eval::Expectation Eval::build(Rng &rng, Expression::Builder request) {
    return make_expression(rng, request, 0);
}

void Eval::serve(Expression::Reader request, EvaluationResult::Builder response) {
    response.setValue(evaluate(request));
}

void Eval::check(EvaluationResult::Reader response, Expectation expected) {
    const std::int32_t value = response.getValue();
    if (value != expected)
        throw WrongAnswer("value: expected " + std::to_string(expected) + ", got " +
                          std::to_string(value));
}

} // namespace capbench
