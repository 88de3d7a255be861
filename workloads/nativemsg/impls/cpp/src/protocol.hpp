// The request -> reply logic: ping, echo, fill, error replies and the 1 MiB reply cap.
#pragma once

// RapidJSON's SIMD scanners (whitespace, strings) are opt-in macros. Every file that sees
// RapidJSON must agree on them (its headers are inline code), so they are set here, from the
// instruction set the build flags target, and RapidJSON is included only through this header.
#if defined(__SSE4_2__)
#define RAPIDJSON_SSE42
#elif defined(__SSE2__)
#define RAPIDJSON_SSE2
#endif

#include <rapidjson/allocators.h>
#include <rapidjson/document.h>
#include <rapidjson/reader.h>
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <array>
#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace nativemsg {

// Nesting deeper than this gets an error reply. RapidJSON parses iteratively (no depth limit),
// but writing a value back walks it recursively; the limit keeps that walk far from the end of
// the stack, and no real message nests this deep (Chromium's own JSON reader stops at 200).
inline constexpr std::size_t kMaxDepth = 1000;

// Bytes in {"op":"fill","data":""}: the smallest fill reply.
inline constexpr std::size_t kMinFillBytes = 23;

// Answers requests one at a time, reusing its buffers: a reply costs no allocation unless it is
// larger than any before it.
class Responder {
  public:
    Responder();
    Responder(const Responder &) = delete;
    Responder &operator=(const Responder &) = delete;

    // Answers one request body. The body is parsed in place (modified); it must be followed by a
    // NUL and kBodySlack more readable bytes, as FrameReader provides. The reply is at most
    // kMaxReplyBytes and stays valid until the next call.
    std::string_view respond(std::span<char> request);

  private:
    std::string_view answer(const rapidjson::Document &request);
    std::string_view echo(const rapidjson::Value &data);
    std::string_view fill(const rapidjson::Value &bytes);
    std::string_view error(std::string_view message);
    void start_reply();

    // Small requests are parsed without touching the heap: the DOM of a ping fits here.
    alignas(std::max_align_t) std::array<char, 4096> first_chunk_;
    rapidjson::CrtAllocator heap_;
    rapidjson::MemoryPoolAllocator<> pool_;
    rapidjson::Reader reader_;
    rapidjson::StringBuffer out_;
    rapidjson::Writer<rapidjson::StringBuffer> writer_;
    std::string filler_;
    // Whether a string of the request last parsed holds a byte 0x1A..0x1F (see CappedWriter).
    bool strings_hold_1a_to_1f_ = false;
};

} // namespace nativemsg
