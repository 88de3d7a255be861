// catrank (SPEC §3.3): search results whose scores the server raises for cats and lowers for
// dogs before sorting them; string processing.
#pragma once

#include "catrank.capnp.h"
#include "rng.hpp"

#include <cstdint>
#include <vector>

namespace capbench {

struct Catrank {
    using Request = SearchResultList;
    using Response = SearchResultList;
    using Expectation = std::uint64_t; // the good count: results with a cat and no dog
    static constexpr const char *kName = "catrank";

    // Fills `request` with fastRand(1000) results; returns the good count.
    static Expectation build(Rng &rng, SearchResultList::Builder request);
    // Every result, rescored, sorted by score descending (NaN last).
    static void serve(SearchResultList::Reader request, SearchResultList::Builder response);
    // Throws WrongAnswer unless the leading run of scores above 1001 is `expected` long.
    static void check(SearchResultList::Reader response, Expectation expected);
};

// A result's new score, before the sort: ×10000 with " cat " in the snippet, then ÷10000
// with " dog " (the bytes, so an embedded NUL hides nothing).
double catrank_score(double score, capnp::Text::Reader snippet) noexcept;

// The server's sort key: the score, and the result's place in the request.
struct Scored {
    double score;
    std::uint32_t index;
};

// Descending by score, numbers before NaN, ties in request order. Without the NaN clause the
// comparator would not be a strict weak order (NaN compares false with everything), which is
// undefined behaviour for std::sort; the index makes the order total, so the response does not
// depend on the sort algorithm.
bool ranks_before(const Scored &a, const Scored &b) noexcept;

} // namespace capbench
