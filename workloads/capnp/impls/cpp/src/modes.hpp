// The iteration loops of SPEC §4-§5: object, bytes, pipe (with its server as a child process),
// client and server, with reuse or not, timed and checked. Failures are exceptions
// (kj::Exception from the library, WrongAnswer, std::runtime_error); main reports them with
// the Progress, which says where the run was.
#pragma once

#include "options.hpp"
#include "report.hpp"

#include <kj/io.h>

#include <chrono>
#include <cstdint>
#include <string>

namespace capbench {

using Clock = std::chrono::steady_clock;

// Where a run is: "setting up", "iteration 12 of 10500", "request 3".
struct Progress {
    const char *stage = "setting up";
    std::uint64_t number = 0; // of the iteration or request, from 1; 0 before the first
    std::uint64_t total = 0;  // iterations in all, when known

    std::string describe() const;
};

// object, bytes, pipe and client: W + ITERS iterations, the client reading responses from fd
// `in` and writing requests to fd `out` (client mode: stdin and stdout).
Report run_client_side(const Options &options, Clock::time_point started, Progress &progress,
                       int in = 0, int out = 1);

// server: answers requests from `in` on `out` until `in` ends at a message boundary; returns
// the requests served.
std::uint64_t run_server(const Options &options, Progress &progress, int in = 0, int out = 1);
// The same over streams (the fuzz target's bytes in memory).
std::uint64_t run_server(const Options &options, Progress &progress, kj::InputStream &in,
                         kj::OutputStream &out);

} // namespace capbench
