// Fuzz target `request` (workloads/capnp/fuzz/README.md): byte 0 the case (% 3: carsales,
// catrank, eval), byte 1 the flags (bit 0 packed; bit 1 reuse, this program's scratch-space
// variant), the rest what the `server` mode reads on stdin.
//
// - The server: run_server() over the bytes in memory, as `capnp-cpp CASE server ...` runs over
//   stdin: read with the SPEC §6 limits, compute, write the response, until the end of the input
//   or the error. Bad input must end in a kj::Exception (main's exit status 1); anything else
//   escaping is a finding. Its output must read back, with the client's reader, as exactly one
//   response per request answered.
// - The client: the same bytes as a stream of responses, read and checked by the client's code
//   (MessageIn, the case's check()) as `capnp-cpp CASE client ...` does: a kj::Exception ends
//   it, a WrongAnswer (the check disagreeing) goes on to the next response.
#include "carsales.hpp"
#include "catrank.hpp"
#include "errors.hpp"
#include "eval.hpp"
#include "modes.hpp"
#include "options.hpp"
#include "stream.hpp"

#include <kj/exception.h>
#include <kj/io.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

namespace {

using namespace capbench;

[[noreturn]] void fail(const char *what) {
    std::fprintf(stderr, "fuzz-capnp-cpp-request: %s\n", what);
    std::abort();
}

// As main's: kj's log of a second exception found while the first unwinds is dropped, and no
// stack traces are collected (they would only cost time here).
class Quiet final : public kj::ExceptionCallback {
  public:
    void logMessage(kj::LogSeverity, const char *, int, int, kj::String &&) override {}
    StackTraceMode stackTraceMode() override {
        return StackTraceMode::NONE;
    }
};

struct Responses {
    std::uint64_t whole = 0; // messages read whole (handed to the check)
    bool failed = false;     // a kj::Exception ended the reading
};

// Reads responses as run_client does, until the end of the stream or a kj::Exception.
template <typename C> Responses read_responses(kj::InputStream &stream, const Options &o) {
    std::optional<Scratch> scratch;
    if (o.reuse)
        scratch.emplace();
    MessageIn in(stream, o.packed, scratch ? scratch->words() : nullptr);
    Responses r;
    try {
        while (!in.at_end()) {
            try {
                in.read([&](capnp::MessageReader &reader) {
                    ++r.whole;
                    C::check(reader.getRoot<typename C::Response>(), typename C::Expectation{});
                });
            } catch (const WrongAnswer &) {
                // the check's own verdict on a response read whole
            }
        }
    } catch (const kj::Exception &) {
        r.failed = true;
    }
    return r;
}

template <typename C> void run(const Options &o, kj::ArrayPtr<const kj::byte> stdin_bytes) {
    kj::ArrayInputStream in(stdin_bytes);
    kj::VectorOutputStream out;
    Progress progress;
    std::uint64_t answered = 0;
    try {
        answered = run_server(o, progress, in, out);
    } catch (const kj::Exception &) {
        // The request being served (progress.number, from 1) failed; those before it were
        // answered.
        answered = progress.number == 0 ? 0 : progress.number - 1;
    }
    kj::ArrayInputStream written(out.getArray());
    const Responses back = read_responses<C>(written, o);
    if (back.failed || back.whole != answered)
        fail("the server's output is not one readable response per request answered");

    kj::ArrayInputStream responses(stdin_bytes);
    (void)read_responses<C>(responses, o);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    if (size < 2)
        return 0;
    Quiet quiet; // kj wants its callbacks on the stack, in force while they live
    Options o;
    o.case_id = static_cast<CaseId>(data[0] % 3);
    o.mode = Mode::server;
    o.packed = (data[1] & 1) != 0;
    o.reuse = (data[1] & 2) != 0;
    const kj::ArrayPtr<const kj::byte> stdin_bytes(data + 2, size - 2);
    switch (o.case_id) {
    case CaseId::carsales:
        run<Carsales>(o, stdin_bytes);
        break;
    case CaseId::catrank:
        run<Catrank>(o, stdin_bytes);
        break;
    case CaseId::eval:
        run<Eval>(o, stdin_bytes);
        break;
    }
    return 0;
}
