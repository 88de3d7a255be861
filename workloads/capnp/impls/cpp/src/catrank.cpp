#include "catrank.hpp"

#include "errors.hpp"

#include <kj/debug.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <string>
#include <string_view>

namespace capbench {

namespace {

constexpr std::string_view kUrlPrefix = "http://example.com/";
// The words, each padded to eight bytes: appending one is a single 8-byte copy, advanced by
// its length (the next word or the end overwrites the padding).
struct Word {
    char bytes[8];
    std::size_t size;
};
constexpr std::array<Word, 13> kWords = {{{"foo ", 4},
                                          {"bar ", 4},
                                          {"baz ", 4},
                                          {"qux ", 4},
                                          {"quux ", 5},
                                          {"corge ", 6},
                                          {"grault ", 7},
                                          {"garply ", 7},
                                          {"waldo ", 6},
                                          {"fred ", 5},
                                          {"plugh ", 6},
                                          {"xyzzy ", 6},
                                          {"thud ", 5}}};

// The longest snippet: " ", 19 words of at most 7 bytes, "cat ", "dog ", 19 more words; and
// the padding of the last word copied.
constexpr std::size_t kMaxSnippet = 1 + 19 * 7 + 4 + 4 + 19 * 7 + 8;

// Appends fastRand(20) random words at `out`; returns the new end.
char *append_words(Rng &rng, char *out) {
    for (std::uint32_t n = rng.fastRand(20); n > 0; --n) {
        const Word &word = kWords[rng.fastRand(kWords.size())];
        std::memcpy(out, word.bytes, sizeof word.bytes);
        out += word.size;
    }
    return out;
}

// Whether `bytes` contains the five bytes of `needle` (" cat ", " dog "). The search is
// anchored on the needle's second byte: its first, a space, comes every few bytes in a
// snippet, and each would cost std::string_view::find a memchr call and a memcmp call; memmem
// does worse on strings this short (it builds a 256-entry shift table per call).
bool contains(std::string_view bytes, const char (&needle)[6]) noexcept {
    if (bytes.size() < 5)
        return false;
    const char *at = bytes.data() + 1;
    const char *const end = bytes.data() + bytes.size();
    while (end - at >= 4) {
        at = static_cast<const char *>(
            std::memchr(at, needle[1], static_cast<std::size_t>(end - at - 3)));
        if (at == nullptr)
            return false;
        if (std::memcmp(at - 1, needle, 5) == 0)
            return true;
        ++at;
    }
    return false;
}

// The largest response a reader will accept (SPEC §6: 8 Mi words), and the least a result
// costs in it: its struct (one data word, two pointers) and two texts of at least one word
// (the NUL). The server refuses a request whose response would be larger rather than build
// it: a list of zero-sized structs costs a hostile client one word per result (the traversal
// limit's charge), while its response would cost five, and its sort key two. This bounds
// what is built; it is not the last word: a builder also spends a landing pad on each object
// it places in another segment than its pointer, which only the built message's segments
// tell, and MessageOut refuses a message beyond the cap from those (require_within_cap).
constexpr std::size_t kMaxResponseWords = 8 * 1024 * 1024;
constexpr std::size_t kMinResultWords = 5;

std::size_t text_words(capnp::Text::Reader text) noexcept {
    return (text.size() + 1 + 7) / 8; // the bytes and the NUL, in whole words
}

} // namespace

double catrank_score(double score, capnp::Text::Reader snippet) noexcept {
    const std::string_view bytes(snippet.begin(), snippet.size());
    if (contains(bytes, " cat "))
        score *= 10000;
    if (contains(bytes, " dog "))
        score /= 10000;
    return score;
}

bool ranks_before(const Scored &a, const Scored &b) noexcept {
    if (a.score > b.score)
        return true;
    if (a.score < b.score)
        return false;
    // Equal, or at least one is NaN.
    const bool a_nan = std::isnan(a.score), b_nan = std::isnan(b.score);
    if (a_nan != b_nan)
        return b_nan;
    return a.index < b.index;
}

Catrank::Expectation Catrank::build(Rng &shared, SearchResultList::Builder request) {
    // The generator's state in a local for the loop: stores into the message are char stores,
    // which may alias anything reachable by reference, so drawing from `shared` directly
    // would reload and store its four words around every letter.
    Rng rng = shared;
    std::uint64_t good = 0;
    auto results = request.initResults(rng.fastRand(1000));
    for (std::uint32_t i = 0; i < results.size(); ++i) {
        SearchResult::Builder result = results[i];
        result.setScore(1000 - static_cast<double>(i));

        // The url is written in place: its length is drawn first.
        const std::uint32_t letters = rng.fastRand(100);
        capnp::Text::Builder url =
            result.initUrl(static_cast<unsigned>(kUrlPrefix.size() + letters));
        char *out = std::copy(kUrlPrefix.begin(), kUrlPrefix.end(), url.begin());
        for (std::uint32_t j = 0; j < letters; ++j)
            *out++ = static_cast<char>('a' + rng.fastRand(26));

        const bool is_cat = rng.fastRand(8) == 0;
        const bool is_dog = rng.fastRand(8) == 0;
        good += is_cat && !is_dog;

        // The snippet's length is known only once its words are drawn: they are assembled
        // on the stack, then copied into the message once.
        std::array<char, kMaxSnippet> snippet;
        out = snippet.data();
        *out++ = ' ';
        out = append_words(rng, out);
        if (is_cat)
            out = std::copy_n("cat ", 4, out);
        if (is_dog)
            out = std::copy_n("dog ", 4, out);
        out = append_words(rng, out);
        result.setSnippet(
            capnp::Text::Reader(snippet.data(), static_cast<std::size_t>(out - snippet.data())));
    }
    shared = rng;
    return good;
}

void Catrank::serve(SearchResultList::Reader request, SearchResultList::Builder response) {
    const auto results = request.getResults();
    KJ_REQUIRE(results.size() <= (kMaxResponseWords - 2) / kMinResultWords,
               "the response to this many results would exceed the message size limit",
               results.size());

    std::vector<Scored> scored;
    scored.reserve(results.size());
    for (std::uint32_t i = 0; i < results.size(); ++i) {
        SearchResult::Reader result = results[i];
        scored.push_back({catrank_score(result.getScore(), result.getSnippet()), i});
    }
    std::sort(scored.begin(), scored.end(),
              [](const Scored &a, const Scored &b) { return ranks_before(a, b); });

    auto out = response.initResults(results.size());
    std::size_t words = 2 + results.size() * 3; // root struct, list tag, the results' structs
    for (std::uint32_t i = 0; i < out.size(); ++i) {
        SearchResult::Reader from = results[scored[i].index];
        SearchResult::Builder to = out[i];
        const capnp::Text::Reader url = from.getUrl(), snippet = from.getSnippet();
        words += text_words(url) + text_words(snippet);
        KJ_REQUIRE(words <= kMaxResponseWords, "the response would exceed the message size limit",
                   i);
        to.setScore(scored[i].score);
        to.setUrl(url);
        to.setSnippet(snippet);
    }
}

void Catrank::check(SearchResultList::Reader response, Expectation expected) {
    std::uint64_t good = 0;
    for (SearchResult::Reader result : response.getResults()) {
        if (!(result.getScore() > 1001))
            break;
        ++good;
    }
    if (good != expected)
        throw WrongAnswer("good results (leading scores above 1001): expected " +
                          std::to_string(expected) + ", got " + std::to_string(good));
}

} // namespace capbench
