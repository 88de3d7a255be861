#include "options.hpp"

#include "errors.hpp"

#include <array>
#include <charconv>
#include <string>
#include <string_view>

namespace capbench {

const char kUsage[] = "usage: capnp-cpp CASE MODE REUSE COMPRESSION ITERS\n"
                      "    CASE         carsales | catrank | eval\n"
                      "    MODE         object | bytes | pipe | client | server\n"
                      "    REUSE        reuse | no-reuse\n"
                      "    COMPRESSION  none | packed          (object: none only)\n"
                      "    ITERS        1 .. 1000000000        (timed iterations)\n";

namespace {

constexpr std::array<const char *, 3> kCases = {"carsales", "catrank", "eval"};
constexpr std::array<const char *, 5> kModes = {"object", "bytes", "pipe", "client", "server"};
constexpr std::uint64_t kMaxIterations = 1'000'000'000;

// The index of `word` among `words`, or a UsageError listing them.
template <std::size_t N>
std::size_t pick(std::string_view what, std::string_view word,
                 const std::array<const char *, N> &words) {
    std::string choices;
    for (std::size_t i = 0; i < N; ++i) {
        if (word == words[i])
            return i;
        choices += (i == 0 ? "" : i + 1 == N ? " or " : ", ") + std::string(words[i]);
    }
    throw UsageError(std::string(what) + " must be " + choices + ", not '" + std::string(word) +
                     "'");
}

} // namespace

Options parse_options(int argc, const char *const *argv) {
    if (argc != 6)
        throw UsageError("expected five arguments, got " + std::to_string(argc - 1));
    Options o;
    o.case_id = static_cast<CaseId>(pick("CASE", argv[1], kCases));
    o.mode = static_cast<Mode>(pick("MODE", argv[2], kModes));
    o.reuse = pick("REUSE", argv[3], std::array<const char *, 2>{"no-reuse", "reuse"}) == 1;
    o.packed = pick("COMPRESSION", argv[4], std::array<const char *, 2>{"none", "packed"}) == 1;
    if (o.mode == Mode::object && o.packed)
        throw UsageError("object mode serialises nothing: COMPRESSION must be none");

    // Digits only: from_chars alone would accept a leading '-' wrapped, or stop at junk.
    const std::string_view iters = argv[5];
    const char *end = iters.data() + iters.size();
    const auto [stop, error] = std::from_chars(iters.data(), end, o.iterations);
    if (iters.empty() || iters.front() < '0' || iters.front() > '9' || error != std::errc{} ||
        stop != end || o.iterations < 1 || o.iterations > kMaxIterations)
        throw UsageError("ITERS must be a whole number from 1 to 1000000000, not '" +
                         std::string(iters) + "'");
    return o;
}

const char *case_name(CaseId id) noexcept {
    return kCases[static_cast<std::size_t>(id)];
}

const char *mode_name(Mode mode) noexcept {
    return kModes[static_cast<std::size_t>(mode)];
}

const char *reuse_name(bool reuse) noexcept {
    return reuse ? "reuse" : "no-reuse";
}

const char *compression_name(bool packed) noexcept {
    return packed ? "packed" : "none";
}

} // namespace capbench
