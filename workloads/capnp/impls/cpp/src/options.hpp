// The command line of SPEC §5: PROGRAM CASE MODE REUSE COMPRESSION ITERS. A bad one is a
// UsageError naming the argument; main prints it with the usage and exits with status 2.
#pragma once

#include <cstdint>

namespace capbench {

enum class CaseId { carsales, catrank, eval };
enum class Mode { object, bytes, pipe, client, server };

struct Options {
    CaseId case_id = CaseId::carsales;
    Mode mode = Mode::object;
    bool reuse = false;
    bool packed = false;
    std::uint64_t iterations = 0; // timed iterations

    // Untimed iterations first, from the same generator (SPEC §5).
    std::uint64_t warmup() const noexcept {
        return iterations / 20;
    }
};

extern const char kUsage[];

// argv[1..5]; throws UsageError.
Options parse_options(int argc, const char *const *argv);

// The command-line words, for the report and for starting the server.
const char *case_name(CaseId id) noexcept;
const char *mode_name(Mode mode) noexcept;
const char *reuse_name(bool reuse) noexcept;
const char *compression_name(bool packed) noexcept;

} // namespace capbench
