// The generator (SPEC §3.1) against golden.json's first outputs.
#include "rng.hpp"

#include "support.hpp"

#include <gtest/gtest.h>

namespace capbench {
namespace {

TEST(Rng, FirstOutputsMatchGolden) {
    const auto expected = test::golden("", "first_outputs");
    ASSERT_EQ(5u, expected.size());
    Rng rng;
    for (const std::int64_t value : expected)
        EXPECT_EQ(static_cast<std::uint32_t>(value), rng.next());
}

TEST(Rng, FastRandIsModulo) {
    Rng a, b;
    for (std::uint32_t n : {1u, 2u, 5u, 200u, 1000u, 4294967295u})
        EXPECT_EQ(a.next() % n, b.fastRand(n));
}

TEST(Rng, FastRandDoubleScalesByMaxU32) {
    Rng a, b;
    const double first = static_cast<double>(a.next());
    EXPECT_EQ(first * 20.0 / 4294967295.0, b.fastRandDouble(20));
    EXPECT_LE(b.fastRandDouble(1), 1.0);
}

} // namespace
} // namespace capbench
