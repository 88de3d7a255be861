// Fuzz target `resp` (workloads/redis/fuzz/README.md): the input is one client's bytes. The
// server's RequestParser reads requests out of them until it needs more bytes or reports a
// protocol error, twice: once over the whole input, as Server::process does with one read, and
// once fed in chunks chosen from the input, as a connection does across reads (the pending bytes
// of a partial request kept, moved to a fresh buffer before each call). Both runs must give the
// same requests, consumed sizes and end (the same error, or waiting for more), and a partial
// request's bytes_needed() must never exceed the size the request turns out to have.
#include "protocol.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

using redis::RequestParser;
using Status = RequestParser::Status;

[[noreturn]] void fail(const char *what) {
    std::fprintf(stderr, "fuzz-redis-cpp-resp: %s\n", what);
    std::abort();
}

struct Request {
    std::vector<std::string> args;
    std::size_t consumed;
    std::size_t max_needed; // the largest bytes_needed() while it was partial (chunked run)

    bool operator==(const Request &other) const {
        return args == other.args && consumed == other.consumed;
    }
};

struct Run {
    std::vector<Request> requests;
    bool failed = false; // ended in a protocol error (else: waiting for more bytes)
    std::string error;
};

void take(RequestParser &parser, Run &run, std::size_t max_needed) {
    Request request{{}, parser.consumed(), max_needed};
    for (const std::string_view arg : parser.args()) {
        request.args.emplace_back(arg);
    }
    if (request.consumed == 0) {
        fail("a complete request consumed no bytes");
    }
    run.requests.push_back(std::move(request));
}

// As Server::process over one read holding the whole input.
Run parse_whole(std::string_view data) {
    Run run;
    RequestParser parser;
    std::size_t pos = 0;
    while (pos < data.size()) {
        const Status status = parser.parse(data.substr(pos));
        if (status == Status::incomplete) {
            break;
        }
        if (status == Status::error) {
            run.failed = true;
            run.error = parser.error();
            break;
        }
        take(parser, run, 0);
        if (parser.consumed() > data.size() - pos) {
            fail("a request consumed more bytes than it was given");
        }
        pos += parser.consumed();
        parser.reset();
    }
    return run;
}

// A copy of `bytes` in a buffer of its own (freed when replaced): the parser must not keep
// pointers into the buffer of an earlier call, and AddressSanitizer sees it if it does.
std::unique_ptr<char[]> fresh_copy(std::string_view bytes) {
    auto copy = std::make_unique<char[]>(bytes.size() + 1);
    std::copy(bytes.begin(), bytes.end(), copy.get());
    return copy;
}

// As a connection across reads: chunks of 1..64 bytes whose sizes come from the input; the
// bytes of a partial request stay pending and grow by the next chunk.
Run parse_chunked(std::string_view data) {
    Run run;
    RequestParser parser;
    std::string pending;
    std::size_t max_needed = 0;
    std::size_t at = 0;
    while (at < data.size()) {
        const auto pick = static_cast<unsigned char>(data[(at * 13 + 5) % data.size()]);
        const std::size_t chunk = std::min<std::size_t>(data.size() - at, 1 + (pick + at) % 64);
        pending.append(data.substr(at, chunk));
        at += chunk;
        std::size_t pos = 0;
        for (;;) {
            if (pos == pending.size()) {
                break;
            }
            const auto buffer = fresh_copy(std::string_view(pending).substr(pos));
            const Status status = parser.parse({buffer.get(), pending.size() - pos});
            if (status == Status::incomplete) {
                max_needed = std::max(max_needed, parser.bytes_needed());
                break;
            }
            if (status == Status::error) {
                run.failed = true;
                run.error = parser.error();
                return run;
            }
            take(parser, run, max_needed);
            max_needed = 0;
            pos += parser.consumed();
            parser.reset();
        }
        pending.erase(0, pos);
    }
    return run;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::string_view input(reinterpret_cast<const char *>(data), size);
    const Run whole = parse_whole(input);
    const Run chunked = parse_chunked(input);
    if (whole.requests != chunked.requests) {
        fail("chunked input parsed into other requests than whole input");
    }
    if (whole.failed != chunked.failed || whole.error != chunked.error) {
        fail("chunked input ended differently from whole input");
    }
    for (const Request &request : chunked.requests) {
        if (request.max_needed > request.consumed) {
            fail("bytes_needed() promised more bytes than the request had");
        }
    }
    if (whole.failed && whole.error.empty()) {
        fail("a protocol error without a message");
    }
    return 0;
}
