// The request generator of SPEC §3.1: Marsaglia's xorshift128 with the lab's seed, and the two
// draws the cases use under the C++ suite's names (fastRand, fastRandDouble).
#pragma once

#include <cstdint>

namespace capbench {

class Rng {
  public:
    // One step of xorshift128; every operation is on uint32_t, so the shifts wrap as the SPEC's
    // u32 arithmetic does.
    std::uint32_t next() noexcept {
        const std::uint32_t t = x_ ^ (x_ << 11);
        x_ = y_;
        y_ = z_;
        z_ = w_;
        w_ = w_ ^ (w_ >> 19) ^ t ^ (t >> 8);
        return w_;
    }

    // next() % n: the SPEC's (and the C++ suite's) slightly biased draw, kept for identical
    // requests in every language.
    std::uint32_t fastRand(std::uint32_t n) noexcept {
        return next() % n;
    }

    // (double(next()) * r) / 4294967295.0, in that order (the build turns off floating-point
    // contraction, though x86-64-v2 has no FMA to contract into anyway).
    double fastRandDouble(double r) noexcept {
        return (static_cast<double>(next()) * r) / 4294967295.0;
    }

  private:
    std::uint32_t x_ = 0x1d2acd47;
    std::uint32_t y_ = 0x58ca3e14;
    std::uint32_t z_ = 0xf563f232;
    std::uint32_t w_ = 0x0bc76199;
};

} // namespace capbench
