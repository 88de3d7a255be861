// The report of SPEC §5: one line of JSON, written by main to stdout (object, bytes, pipe) or
// as the last line of stderr (client, whose stdout carries the requests).
#pragma once

#include "options.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace capbench {

struct Report {
    double setup_s = 0;   // main's first statement to the warm-up
    double warmup_s = 0;  // wall time of the warm-up
    double elapsed_s = 0; // wall time of the timed iterations
    double cpu_s = 0;     // this process's user + system CPU over the timed iterations
    std::uint64_t request_bytes = 0, response_bytes = 0; // timed messages as written
    std::uint64_t checked = 0;                           // responses checked
    std::optional<double> server_cpu_s;                  // pipe only, from wait4
};

// The report as one line of JSON, with its newline.
std::string report_json(const Options &options, const Report &report);

// The version of libcapnp this was compiled against, e.g. "libcapnp 0.9.2".
std::string library_name();

} // namespace capbench
