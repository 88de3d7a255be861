// eval (SPEC §3.4): the requests against golden.json, the int32 arithmetic's corner cases,
// unknown operations and union members.
#include "eval.hpp"

#include "errors.hpp"
#include "support.hpp"

#include <capnp/schema.h>
#include <kj/exception.h>

#include <gtest/gtest.h>

#include <limits>

namespace capbench {
namespace {

constexpr std::int32_t kMin = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kMax = std::numeric_limits<std::int32_t>::max();
constexpr std::uint16_t kAdd = 0, kSub = 1, kMul = 2, kDiv = 3, kMod = 4;

TEST(Eval, RequestsMatchGolden) {
    const auto values = test::golden("eval", "first_values");
    Rng rng;
    for (std::size_t i = 0; i < values.size(); ++i) {
        capnp::MallocMessageBuilder request, response;
        auto expression = request.initRoot<Expression>();
        const std::int32_t expected = Eval::build(rng, expression);
        EXPECT_EQ(values[i], expected) << i;
        auto result = response.initRoot<EvaluationResult>();
        Eval::serve(expression.asReader(), result);
        EXPECT_EQ(expected, result.getValue()) << i;
        EXPECT_NO_THROW(Eval::check(result.asReader(), expected));
    }
}

// The depth of the deepest subexpression.
unsigned depth(Expression::Reader e) {
    unsigned d = 0;
    if (e.getLeft().isExpression())
        d = std::max(d, 1 + depth(e.getLeft().getExpression()));
    if (e.getRight().isExpression())
        d = std::max(d, 1 + depth(e.getRight().getExpression()));
    return d;
}

TEST(Eval, RootHasTwoSubexpressionsAndDepthStopsAtEight) {
    Rng rng;
    for (int i = 0; i < 200; ++i) {
        capnp::MallocMessageBuilder request;
        auto e = request.initRoot<Expression>();
        Eval::build(rng, e);
        EXPECT_TRUE(e.getLeft().isExpression());
        EXPECT_TRUE(e.getRight().isExpression());
        EXPECT_LE(depth(e.asReader()), 8u);
    }
}

TEST(Eval, WrappingArithmetic) {
    EXPECT_EQ(kMin, apply(kAdd, kMax, 1));
    EXPECT_EQ(kMax, apply(kSub, kMin, 1));
    EXPECT_EQ(kMin, apply(kMul, kMin, -1));
    EXPECT_EQ(-2, apply(kMul, kMax, 2));
    EXPECT_EQ(0, apply(kMul, 65536, 65536));
    EXPECT_EQ(7, apply(kAdd, 3, 4));
    EXPECT_EQ(-1, apply(kSub, 3, 4));
}

TEST(Eval, DivisionTruncatesTowardZero) {
    EXPECT_EQ(-3, apply(kDiv, -7, 2));
    EXPECT_EQ(-3, apply(kDiv, 7, -2));
    EXPECT_EQ(3, apply(kDiv, -7, -2));
    EXPECT_EQ(-1, apply(kMod, -7, 2)); // the sign of the dividend
    EXPECT_EQ(1, apply(kMod, 7, -2));
    EXPECT_EQ(kMin, apply(kDiv, kMin, 1));
    EXPECT_EQ(0, apply(kMod, kMin, 1));
}

TEST(Eval, ZeroDivisorsAndMinByMinusOneGiveMax) {
    EXPECT_EQ(kMax, apply(kDiv, 5, 0));
    EXPECT_EQ(kMax, apply(kMod, 5, 0));
    EXPECT_EQ(kMax, apply(kDiv, 0, 0));
    EXPECT_EQ(kMax, apply(kDiv, kMin, -1));
    EXPECT_EQ(kMax, apply(kMod, kMin, -1));
}

TEST(Eval, UnknownOperationIsAnError) {
    EXPECT_THROW(apply(5, 1, 2), kj::Exception);
    capnp::MallocMessageBuilder request, response;
    auto e = request.initRoot<Expression>();
    e.setOp(static_cast<Operation>(7));
    e.getLeft().setValue(1);
    e.getRight().setValue(2);
    EXPECT_THROW(Eval::serve(e.asReader(), response.initRoot<EvaluationResult>()), kj::Exception);
}

TEST(Eval, UnknownUnionMemberIsAnError) {
    // The discriminant of `left` is a 16-bit field in the data section; set it to 2 by hand.
    capnp::MallocMessageBuilder request;
    auto e = request.initRoot<Expression>();
    e.getLeft().setValue(1);
    e.getRight().setValue(2);
    test::Bytes bytes = test::serialize(request);
    const std::uint32_t offset =
        capnp::Schema::from<Expression::Left>().getProto().getStruct().getDiscriminantOffset();
    const std::size_t at = 16 + 2 * offset; // segment table, root pointer, then the struct
    ASSERT_EQ(0, bytes[at]);
    bytes[at] = 2;
    const auto words = kj::arrayPtr(reinterpret_cast<const capnp::word *>(bytes.data()),
                                    bytes.size() / sizeof(capnp::word));
    capnp::FlatArrayMessageReader reader(words);
    EXPECT_THROW(evaluate(reader.getRoot<Expression>()), kj::Exception);
    bytes[at] = 0;
    capnp::FlatArrayMessageReader valid(words);
    EXPECT_EQ(3, evaluate(valid.getRoot<Expression>()));
}

TEST(Eval, CheckRejectsAWrongValue) {
    capnp::MallocMessageBuilder response;
    auto result = response.initRoot<EvaluationResult>();
    result.setValue(-369556);
    EXPECT_THROW(Eval::check(result.asReader(), -369557), WrongAnswer);
}

} // namespace
} // namespace capbench
