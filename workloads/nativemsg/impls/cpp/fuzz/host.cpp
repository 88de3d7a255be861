// Fuzz target `host` (workloads/nativemsg/fuzz/README.md): the input is what the host reads on
// stdin. It runs the host's own serve loop (FrameReader, Responder) over it in memory, twice:
// once handed out whole and once in chunks chosen from the input (with EINTR between some of
// them). Any difference between the two runs, a reply over 1 MiB or not a JSON object with an
// `op` or a non-empty `error`, a reply count or exit status other than the frames of the input
// imply, aborts.
#include "protocol.hpp" // first: it sets RapidJSON's SIMD macros for every file that sees it

#include "framing.hpp"
#include "host.hpp"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

namespace {

using nativemsg::ByteSource;
using nativemsg::FrameSink;

[[noreturn]] void fail(const char *what) {
    std::fprintf(stderr, "fuzz-nativemsg-cpp-host: %s\n", what);
    std::abort();
}

// The input once whole (each read takes all it asks for), or in chunks of 1..64 bytes whose sizes
// come from the input itself, with an EINTR before every fifth read.
class MemorySource final : public ByteSource {
  public:
    MemorySource(std::span<const std::uint8_t> data, bool chunked)
        : data_(data), chunked_(chunked) {}

    ssize_t read_some(std::span<char> dest) override {
        ++reads_;
        if (chunked_ && reads_ % 5 == 0) {
            errno = EINTR;
            return -1;
        }
        std::size_t n = data_.size() - at_;
        if (chunked_ && n != 0) {
            const std::size_t chunk = 1 + (data_[(at_ * 7 + 3) % data_.size()] + at_) % 64;
            n = std::min(n, chunk);
        }
        n = std::min(n, dest.size());
        std::memcpy(dest.data(), data_.data() + at_, n);
        at_ += n;
        return static_cast<ssize_t>(n);
    }

  private:
    std::span<const std::uint8_t> data_;
    bool chunked_;
    std::size_t at_ = 0;
    unsigned reads_ = 0;
};

// Keeps every reply and checks it is one a browser would take.
class MemorySink final : public FrameSink {
  public:
    std::error_code write(std::string_view body) override {
        if (body.size() > nativemsg::kMaxReplyBytes) {
            fail("reply over 1 MiB");
        }
        check_json(body);
        replies.emplace_back(body);
        return {};
    }

    std::vector<std::string> replies;

  private:
    static void check_json(std::string_view body) {
        // Zero slack behind the text: RapidJSON's SIMD scanners read whole 16-byte blocks. With
        // kParseValidateEncodingFlag it reads strings byte by byte, not with the SIMD scanner
        // that lets U+001A..U+001F through (see find_control_1a_to_1f): a strict parse.
        std::string text(body);
        text.append(nativemsg::kBodySlack, '\0');
        rapidjson::Document doc;
        doc.Parse<rapidjson::kParseValidateEncodingFlag | rapidjson::kParseIterativeFlag>(
            text.c_str(), body.size());
        if (doc.HasParseError() || !doc.IsObject()) {
            std::fprintf(stderr, "reply (first 4 KiB): %.*s\n",
                         static_cast<int>(std::min<std::size_t>(body.size(), 4096)), body.data());
            fail("reply is not a JSON object");
        }
        if (doc.HasMember("error")) {
            const rapidjson::Value &error = doc["error"];
            if (!error.IsString() || error.GetStringLength() == 0) {
                fail("error reply without a non-empty string");
            }
            return;
        }
        if (!doc.HasMember("op") || !doc["op"].IsString()) {
            fail("reply has neither `error` nor a string `op`");
        }
        const rapidjson::Value &op = doc["op"];
        const std::string_view name(op.GetString(), op.GetStringLength());
        if (name == "echo" || name == "fill") {
            if (!doc.HasMember("data") || doc.MemberCount() != 2) {
                fail("echo or fill reply without exactly `op` and `data`");
            }
        } else if (name != "pong") {
            fail("reply with an unknown `op`");
        }
    }
};

struct Run {
    int status;
    std::vector<std::string> replies;
};

Run serve(std::span<const std::uint8_t> data, bool chunked) {
    MemorySource source(data, chunked);
    MemorySink sink;
    // The log goes nowhere: a write to fd -1 fails (EBADF), which log_line ignores.
    const int status = nativemsg::serve(source, sink, -1);
    return {status, std::move(sink.replies)};
}

// What the framing rules alone say: the frames answered and the exit status.
Run expected_shape(std::span<const std::uint8_t> data) {
    std::size_t at = 0;
    std::size_t frames = 0;
    for (;;) {
        if (at == data.size()) {
            return {0, std::vector<std::string>(frames)};
        }
        if (data.size() - at < nativemsg::kHeaderBytes) {
            return {1, std::vector<std::string>(frames)};
        }
        const std::uint32_t length = static_cast<std::uint32_t>(data[at]) |
                                     static_cast<std::uint32_t>(data[at + 1]) << 8 |
                                     static_cast<std::uint32_t>(data[at + 2]) << 16 |
                                     static_cast<std::uint32_t>(data[at + 3]) << 24;
        if (length > nativemsg::kMaxRequestBytes ||
            data.size() - at - nativemsg::kHeaderBytes < length) {
            return {1, std::vector<std::string>(frames)};
        }
        at += nativemsg::kHeaderBytes + length;
        ++frames;
    }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t *data, std::size_t size) {
    const std::span<const std::uint8_t> input(data, size);
    const Run whole = serve(input, false);
    const Run chunked = serve(input, true);
    if (whole.status != chunked.status || whole.replies != chunked.replies) {
        fail("chunked input served differently from whole input");
    }
    const Run shape = expected_shape(input);
    if (whole.status != shape.status) {
        fail("exit status differs from what the framing implies");
    }
    if (whole.replies.size() != shape.replies.size()) {
        fail("reply count differs from the complete frames of the input");
    }
    return 0;
}
