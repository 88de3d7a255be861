// catrank (SPEC §3.3): the requests against golden.json, the server's scoring and sort (NaN,
// ties, embedded NULs), the client's check.
#include "catrank.hpp"

#include "errors.hpp"
#include "support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace capbench {
namespace {

// Serves `request` and returns the response's scores in order.
std::vector<double> served_scores(capnp::MallocMessageBuilder &request) {
    capnp::MallocMessageBuilder response;
    auto list = response.initRoot<SearchResultList>();
    Catrank::serve(request.getRoot<SearchResultList>().asReader(), list);
    std::vector<double> scores;
    for (auto result : list.asReader().getResults())
        scores.push_back(result.getScore());
    return scores;
}

TEST(Catrank, RequestsMatchGolden) {
    const auto counts = test::golden("catrank", "first_counts");
    const auto goods = test::golden("catrank", "first_good");
    ASSERT_EQ(counts.size(), goods.size());
    Rng rng;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        capnp::MallocMessageBuilder request, response;
        auto list = request.initRoot<SearchResultList>();
        const std::uint64_t good = Catrank::build(rng, list);
        EXPECT_EQ(static_cast<std::uint64_t>(counts[i]), list.getResults().size()) << i;
        EXPECT_EQ(static_cast<std::uint64_t>(goods[i]), good) << i;
        auto answer = response.initRoot<SearchResultList>();
        Catrank::serve(list.asReader(), answer);
        EXPECT_NO_THROW(Catrank::check(answer.asReader(), good)) << i;
    }
}

TEST(Catrank, RequestTextsHaveTheSpecsShape) {
    Rng rng;
    capnp::MallocMessageBuilder request;
    auto list = request.initRoot<SearchResultList>();
    Catrank::build(rng, list);
    for (auto result : list.asReader().getResults()) {
        const std::string_view url = result.getUrl().cStr();
        ASSERT_EQ(0u, url.find("http://example.com/"));
        EXPECT_LE(url.size(), 19u + 99u);
        const std::string_view snippet = result.getSnippet().cStr();
        ASSERT_FALSE(snippet.empty());
        EXPECT_EQ(' ', snippet.front());
        EXPECT_EQ(' ', snippet.back());
    }
    EXPECT_EQ(1000.0, list.asReader().getResults()[0].getScore());
    EXPECT_EQ(999.0, list.asReader().getResults()[1].getScore());
}

TEST(Catrank, CatsUpDogsDown) {
    EXPECT_EQ(50000.0, catrank_score(5, " a cat b "));
    EXPECT_EQ(5.0 / 10000, catrank_score(5, " a dog "));
    EXPECT_EQ(5.0 * 10000 / 10000, catrank_score(5, " cat dog "));
    EXPECT_EQ(5.0, catrank_score(5, " cats dogs cat"));
    EXPECT_EQ(5.0, catrank_score(5, "cat "));
    // The bytes count, not a C string: " cat " after an embedded NUL is found.
    const char with_nul[] = "x\0 cat y";
    EXPECT_EQ(50000.0, catrank_score(5, capnp::Text::Reader(with_nul, sizeof with_nul - 1)));
}

TEST(Catrank, SortIsDescendingWithNaNLastAndTiesInOrder) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const double inf = std::numeric_limits<double>::infinity();
    capnp::MallocMessageBuilder request;
    const double scores[] = {1, nan, 3, -inf, 2, nan, 3, inf, -0.0, 0.0};
    auto results = request.initRoot<SearchResultList>().initResults(std::size(scores));
    for (unsigned i = 0; i < std::size(scores); ++i) {
        results[i].setScore(scores[i]);
        results[i].setUrl(std::to_string(i));
    }
    capnp::MallocMessageBuilder response;
    auto list = response.initRoot<SearchResultList>();
    Catrank::serve(request.getRoot<SearchResultList>().asReader(), list);
    std::vector<std::string> urls;
    for (auto result : list.asReader().getResults())
        urls.push_back(result.getUrl().cStr());
    EXPECT_EQ((std::vector<std::string>{"7", "2", "6", "4", "0", "8", "9", "3", "1", "5"}), urls);
}

TEST(Catrank, ComparatorIsAStrictWeakOrderOnNaN) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    const Scored a{nan, 0}, b{nan, 1}, c{1, 2};
    EXPECT_FALSE(ranks_before(a, a));
    EXPECT_TRUE(ranks_before(a, b) != ranks_before(b, a));
    EXPECT_TRUE(ranks_before(c, a));
    EXPECT_FALSE(ranks_before(a, c));
}

TEST(Catrank, ManyNaNsSortWithoutMisbehaving) {
    // A comparator that is not a strict weak order can send std::sort past the end of the
    // range; thousands of NaNs among numbers would find that.
    capnp::MallocMessageBuilder request;
    auto results = request.initRoot<SearchResultList>().initResults(5000);
    for (unsigned i = 0; i < results.size(); ++i)
        results[i].setScore(i % 3 == 0 ? std::nan("") : static_cast<double>(i % 7));
    const std::vector<double> scores = served_scores(request);
    ASSERT_EQ(5000u, scores.size());
    const auto first_nan =
        std::find_if(scores.begin(), scores.end(), [](double s) { return std::isnan(s); });
    EXPECT_TRUE(std::is_sorted(scores.begin(), first_nan, std::greater<>()));
    EXPECT_TRUE(std::all_of(first_nan, scores.end(), [](double s) { return std::isnan(s); }));
}

TEST(Catrank, ResponseCopiesTextsUnchanged) {
    capnp::MallocMessageBuilder request;
    auto results = request.initRoot<SearchResultList>().initResults(2);
    results[0].setScore(1);
    results[0].setUrl("http://example.com/a");
    results[0].setSnippet(" the cat sat ");
    results[1].setScore(2);
    results[1].setUrl("http://example.com/b");
    results[1].setSnippet(" a dog barked ");
    capnp::MallocMessageBuilder response;
    auto list = response.initRoot<SearchResultList>();
    Catrank::serve(request.getRoot<SearchResultList>().asReader(), list);
    auto out = list.asReader().getResults();
    EXPECT_EQ(10000.0, out[0].getScore());
    EXPECT_EQ("http://example.com/a", std::string_view(out[0].getUrl().cStr()));
    EXPECT_EQ(" the cat sat ", std::string_view(out[0].getSnippet().cStr()));
    EXPECT_EQ(2.0 / 10000, out[1].getScore());
    EXPECT_EQ(" a dog barked ", std::string_view(out[1].getSnippet().cStr()));
}

TEST(Catrank, CheckCountsTheLeadingGoodResults) {
    capnp::MallocMessageBuilder response;
    auto results = response.initRoot<SearchResultList>().initResults(4);
    const double scores[] = {5e6, 1001.5, 1001, 9e6}; // the run stops at 1001
    for (unsigned i = 0; i < 4; ++i)
        results[i].setScore(scores[i]);
    auto list = response.getRoot<SearchResultList>().asReader();
    EXPECT_NO_THROW(Catrank::check(list, 2));
    EXPECT_THROW(Catrank::check(list, 3), WrongAnswer);
}

TEST(Catrank, CheckCatchesAnUnscaledServer) {
    // A server that forgot to scale: no score above 1001, so the good count comes out 0.
    Rng rng;
    capnp::MallocMessageBuilder request;
    const std::uint64_t good = Catrank::build(rng, request.initRoot<SearchResultList>());
    ASSERT_GT(good, 0u);
    EXPECT_THROW(Catrank::check(request.getRoot<SearchResultList>().asReader(), good), WrongAnswer);
}

} // namespace
} // namespace capbench
