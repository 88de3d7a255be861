#include "report.hpp"

#include <capnp/common.h>

#include <cinttypes>
#include <cstdio>

namespace capbench {

std::string library_name() {
    return "libcapnp " + std::to_string(CAPNP_VERSION_MAJOR) + "." +
           std::to_string(CAPNP_VERSION_MINOR) + "." + std::to_string(CAPNP_VERSION_MICRO);
}

std::string report_json(const Options &o, const Report &r) {
    // Every string is one of the fixed command-line words or the library's version: nothing
    // needs escaping.
    char line[1024];
    int n = std::snprintf(
        line, sizeof line,
        "{\"program\": \"capnp-cpp\", \"library\": \"%s\", \"case\": \"%s\", \"mode\": \"%s\", "
        "\"reuse\": \"%s\", \"compression\": \"%s\", \"iterations\": %" PRIu64
        ", \"warmup\": %" PRIu64 ", \"setup_s\": %.9f, \"warmup_s\": %.9f, \"elapsed_s\": %.9f, "
        "\"cpu_s\": %.6f, \"request_bytes\": %" PRIu64 ", \"response_bytes\": %" PRIu64
        ", \"checked\": %" PRIu64,
        library_name().c_str(), case_name(o.case_id), mode_name(o.mode), reuse_name(o.reuse),
        compression_name(o.packed), o.iterations, o.warmup(), r.setup_s, r.warmup_s, r.elapsed_s,
        r.cpu_s, r.request_bytes, r.response_bytes, r.checked);
    std::string json(line, static_cast<std::size_t>(n));
    if (r.server_cpu_s) {
        n = std::snprintf(line, sizeof line, ", \"server_cpu_s\": %.6f", *r.server_cpu_s);
        json.append(line, static_cast<std::size_t>(n));
    }
    json += "}\n";
    return json;
}

} // namespace capbench
