#include "protocol.hpp"

#include "framing.hpp"
#include "utf8.hpp"

#include <rapidjson/error/en.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <system_error>

namespace nativemsg {

namespace {

using rapidjson::SizeType;

// DOMs larger than Responder::first_chunk_ grow in chunks of this size (RapidJSON's default).
constexpr std::size_t kPoolChunkBytes = 64 * 1024;
// Initial size of the document's value stack during a parse (RapidJSON's default).
constexpr std::size_t kParseStackBytes = 1024;

constexpr std::string_view kPong = R"({"op":"pong"})";

// In place: strings stay in the request buffer instead of being copied into the DOM.
// Iterative: a million '[' cannot exhaust the stack.
// Numbers as strings: GuardedBuilder converts them with std::from_chars (correctly rounded).
// RapidJSON 1.1.0's own conversion is off by a few ulps by default, and its full-precision mode
// crashes on a long run of fraction digits (0.000…0001 with 400 zeros) and mis-reads 1e-324.
// No kParseValidateEncodingFlag: see GuardedBuilder.
constexpr unsigned kParseFlags = rapidjson::kParseInsituFlag | rapidjson::kParseIterativeFlag |
                                 rapidjson::kParseNumbersAsStringsFlag;

// Builds the DOM from the parser's events, converting numbers, and refuses what the library lets
// through: nesting beyond kMaxDepth, strings that are not UTF-8, and numbers beyond the range of
// a double. Refusing stops the parse (kParseErrorTermination).
//
// UTF-8 is checked here, on each decoded string, rather than by kParseValidateEncodingFlag: that
// flag decodes one character at a time and turns off RapidJSON's SIMD string scanner (a 512 KiB
// echo took ~10x longer). Checking decoded strings is enough: a non-ASCII byte outside a string
// is a syntax error anyway. It also catches what RapidJSON 1.1.0 lets through: a lone
// \uDC00..\uDFFF escape, which it decodes to the bytes of a surrogate (ED B0 80), not UTF-8.
class GuardedBuilder {
  public:
    explicit GuardedBuilder(rapidjson::Document &doc) : doc_(doc) {}

    enum class Refusal { none, too_deep, not_utf8, out_of_range };

    [[nodiscard]] Refusal refusal() const {
        return refusal_;
    }
    // Whether a string or key holds a byte 0x1A..0x1F, which only CappedWriter's slow path
    // writes correctly (see write_string). Found by the same pass as the UTF-8 check, so the
    // writer need not scan every string again.
    [[nodiscard]] bool saw_control_1a_to_1f() const {
        return saw_control_1a_to_1f_;
    }

    bool Null() {
        return doc_.Null();
    }
    bool Bool(bool b) {
        return doc_.Bool(b);
    }
    bool Int(int i) {
        return doc_.Int(i);
    }
    bool Uint(unsigned u) {
        return doc_.Uint(u);
    }
    bool Int64(std::int64_t i) {
        return doc_.Int64(i);
    }
    bool Uint64(std::uint64_t u) {
        return doc_.Uint64(u);
    }
    bool Double(double d) {
        return doc_.Double(d);
    }
    // `text` is a JSON number the parser has checked against the grammar.
    bool RawNumber(const char *text, SizeType length, bool /*copy*/) {
        const char *end = text + length;
        // Integers stay integers (written back without a fraction) while they fit 64 bits.
        if (std::find_if(text, end, [](char c) { return c == '.' || c == 'e' || c == 'E'; }) ==
            end) {
            if (text[0] == '-') {
                std::int64_t i = 0;
                if (std::from_chars(text, end, i).ec == std::errc{}) {
                    return doc_.Int64(i);
                }
            } else {
                std::uint64_t u = 0;
                if (std::from_chars(text, end, u).ec == std::errc{}) {
                    return doc_.Uint64(u);
                }
            }
        }
        double d = 0;
        if (std::from_chars(text, end, d).ec == std::errc{}) {
            return doc_.Double(d);
        }
        // from_chars reports overflow and underflow alike. strtod tells them apart: an underflow
        // is ±0 (as in JavaScript and Python), an overflow has no JSON form.
        d = std::strtod(std::string(text, length).c_str(), nullptr);
        if (std::isinf(d)) {
            refusal_ = Refusal::out_of_range;
            return false;
        }
        return doc_.Double(d);
    }
    bool String(const char *str, SizeType length, bool copy) {
        return accept_string(str, length) && doc_.String(str, length, copy);
    }
    bool Key(const char *str, SizeType length, bool copy) {
        return accept_string(str, length) && doc_.Key(str, length, copy);
    }
    bool StartObject() {
        return enter() && doc_.StartObject();
    }
    bool EndObject(SizeType members) {
        --depth_;
        return doc_.EndObject(members);
    }
    bool StartArray() {
        return enter() && doc_.StartArray();
    }
    bool EndArray(SizeType elements) {
        --depth_;
        return doc_.EndArray(elements);
    }

  private:
    bool enter() {
        if (++depth_ > kMaxDepth) {
            refusal_ = Refusal::too_deep;
            return false;
        }
        return true;
    }
    bool accept_string(const char *str, SizeType length) {
        const StringCheck check = check_string({str, length});
        if (!check.utf8) {
            refusal_ = Refusal::not_utf8;
            return false;
        }
        saw_control_1a_to_1f_ = saw_control_1a_to_1f_ || check.control_1a_to_1f;
        return true;
    }

    rapidjson::Document &doc_;
    std::size_t depth_ = 0;
    Refusal refusal_ = Refusal::none;
    bool saw_control_1a_to_1f_ = false;
};

std::string describe(const rapidjson::ParseResult &result, GuardedBuilder::Refusal refusal) {
    std::string reason;
    switch (refusal) {
    case GuardedBuilder::Refusal::too_deep:
        reason = "nesting deeper than " + std::to_string(kMaxDepth) + " levels";
        break;
    case GuardedBuilder::Refusal::not_utf8:
        reason = "a string is not valid UTF-8 (or escapes a lone UTF-16 surrogate)";
        break;
    case GuardedBuilder::Refusal::out_of_range:
        reason = "a number is too large for a double";
        break;
    case GuardedBuilder::Refusal::none:
        reason = rapidjson::GetParseError_En(result.Code());
        break;
    }
    return "invalid JSON at byte " + std::to_string(result.Offset()) + ": " + reason;
}

// Writes `text` as a JSON string value or key. RapidJSON 1.1.0's Writer::String copies the bytes
// 0x1A..0x1F unescaped when its SIMD scanner reaches them (see find_control_1a_to_1f), which makes
// the reply invalid JSON. A string holding one (decoded from a \u001A..\u001F escape: raw ones are
// refused before parsing) is escaped here instead and handed to the writer as a raw value.
bool write_string(rapidjson::Writer<rapidjson::StringBuffer> &writer, const char *text,
                  SizeType length) {
    const std::string_view view(text, length);
    if (find_control_1a_to_1f(view) == std::string_view::npos) {
        return writer.String(text, length);
    }
    static constexpr char kHex[] = "0123456789ABCDEF";
    std::string json = "\"";
    for (const char c : view) {
        const auto byte = static_cast<unsigned char>(c);
        switch (c) {
        case '"':
            json += "\\\"";
            break;
        case '\\':
            json += "\\\\";
            break;
        case '\b':
            json += "\\b";
            break;
        case '\f':
            json += "\\f";
            break;
        case '\n':
            json += "\\n";
            break;
        case '\r':
            json += "\\r";
            break;
        case '\t':
            json += "\\t";
            break;
        default:
            if (byte < 0x20) {
                json += "\\u00";
                json += kHex[byte >> 4];
                json += kHex[byte & 0xF];
            } else {
                json += c;
            }
        }
    }
    json += '"';
    return writer.RawValue(json.data(), json.size(), rapidjson::kStringType);
}

// Passes the events of Value::Accept on to the writer but stops, before writing, at the first
// string or value that would take the reply past kMaxReplyBytes: an echo of a 64 MiB string
// costs a size check, not a 64 MiB buffer. `strings_may_hold_1a_to_1f` is false when the parse
// found no byte 0x1A..0x1F in any string: RapidJSON's writer then writes every string correctly
// and none needs write_string's scan.
class CappedWriter {
  public:
    CappedWriter(rapidjson::Writer<rapidjson::StringBuffer> &writer,
                 const rapidjson::StringBuffer &out, bool strings_may_hold_1a_to_1f)
        : writer_(writer), out_(out), strings_may_hold_1a_to_1f_(strings_may_hold_1a_to_1f) {}

    bool Null() {
        return fits(4) && writer_.Null();
    }
    bool Bool(bool b) {
        return fits(5) && writer_.Bool(b);
    }
    bool Int(int i) {
        return fits(0) && writer_.Int(i);
    }
    bool Uint(unsigned u) {
        return fits(0) && writer_.Uint(u);
    }
    bool Int64(std::int64_t i) {
        return fits(0) && writer_.Int64(i);
    }
    bool Uint64(std::uint64_t u) {
        return fits(0) && writer_.Uint64(u);
    }
    bool Double(double d) {
        return fits(0) && writer_.Double(d);
    }
    bool RawNumber(const char *str, SizeType length, bool copy) {
        return fits(length) && writer_.RawNumber(str, length, copy);
    }
    bool String(const char *str, SizeType length, bool /*copy*/) {
        return fits(length) && write(str, length);
    }
    bool Key(const char *str, SizeType length, bool /*copy*/) {
        return fits(length) && write(str, length);
    }
    bool StartObject() {
        return fits(1) && writer_.StartObject();
    }
    bool EndObject(SizeType members) {
        return writer_.EndObject(members);
    }
    bool StartArray() {
        return fits(1) && writer_.StartArray();
    }
    bool EndArray(SizeType elements) {
        return writer_.EndArray(elements);
    }

    // Whether the reply went, or would have gone, past kMaxReplyBytes.
    [[nodiscard]] bool too_big() const {
        return too_big_ || out_.GetSize() > kMaxReplyBytes;
    }

  private:
    // `bytes` is a lower bound of what the next event writes, so the final size still needs the
    // check in too_big().
    bool fits(std::size_t bytes) {
        too_big_ = out_.GetSize() + bytes > kMaxReplyBytes;
        return !too_big_;
    }
    bool write(const char *str, SizeType length) {
        return strings_may_hold_1a_to_1f_ ? write_string(writer_, str, length)
                                          : writer_.String(str, length);
    }

    rapidjson::Writer<rapidjson::StringBuffer> &writer_;
    const rapidjson::StringBuffer &out_;
    bool strings_may_hold_1a_to_1f_;
    bool too_big_ = false;
};

// At most `limit` bytes of `text`, cut at a code point boundary so the result stays UTF-8.
std::string_view clip(std::string_view text, std::size_t limit) {
    if (text.size() <= limit) {
        return text;
    }
    std::size_t end = limit;
    while (end > 0 && (static_cast<unsigned char>(text[end]) & 0xC0) == 0x80) {
        --end;
    }
    return text.substr(0, end);
}

std::string_view string_of(const rapidjson::Value &value) {
    return {value.GetString(), value.GetStringLength()};
}

// The value of the member `name`, or nullptr. With duplicate names the last one wins, as in
// JavaScript's JSON.parse (what the extension would see) and most JSON libraries; RapidJSON's
// FindMember would return the first.
const rapidjson::Value *member(const rapidjson::Value &object, std::string_view name) {
    const rapidjson::Value *found = nullptr;
    for (const auto &m : object.GetObject()) {
        if (string_of(m.name) == name) {
            found = &m.value;
        }
    }
    return found;
}

} // namespace

Responder::Responder()
    : first_chunk_{}, pool_(first_chunk_.data(), first_chunk_.size(), kPoolChunkBytes, &heap_),
      writer_(out_) {}

std::string_view Responder::respond(std::span<char> request) {
    // RapidJSON's SIMD string scanner would let these through inside a string (see
    // find_control_1a_to_1f); nowhere in JSON text may they stand unescaped.
    if (const std::size_t at = find_control_1a_to_1f({request.data(), request.size()});
        at != std::string_view::npos) {
        return error("invalid JSON at byte " + std::to_string(at) +
                     ": a raw control character (U+001A..U+001F)");
    }
    pool_.Clear(); // drops the last request's DOM; keeps first_chunk_
    rapidjson::Document doc(&pool_, kParseStackBytes, &heap_);
    rapidjson::InsituStringStream stream(request.data());
    rapidjson::ParseResult result;
    auto refusal = GuardedBuilder::Refusal::none;
    strings_hold_1a_to_1f_ = true; // until the parse has looked at every string
    auto parse = [&](rapidjson::Document &target) {
        GuardedBuilder builder(target);
        result = reader_.Parse<kParseFlags>(stream, builder);
        refusal = builder.refusal();
        strings_hold_1a_to_1f_ = builder.saw_control_1a_to_1f();
        return !result.IsError();
    };
    doc.Populate(parse);
    if (result.IsError()) {
        return error(describe(result, refusal));
    }
    // The in-place parser takes a NUL for the end of the text, so a successful parse that stopped
    // short of the body's end hit a raw NUL there (`{"op":"ping"}\0garbage`), never valid JSON.
    if (stream.Tell() != request.size()) {
        return error("invalid JSON at byte " + std::to_string(stream.Tell()) + ": a NUL byte");
    }
    return answer(doc);
}

std::string_view Responder::answer(const rapidjson::Document &request) {
    if (!request.IsObject()) {
        return error("the request is not a JSON object");
    }
    const rapidjson::Value *op = member(request, "op");
    if (op == nullptr) {
        return error(R"(the request has no "op" member)");
    }
    if (!op->IsString()) {
        return error(R"("op" is not a string)");
    }
    const std::string_view name = string_of(*op);
    if (name == "ping") {
        return kPong;
    }
    if (name == "echo") {
        const rapidjson::Value *data = member(request, "data");
        if (data == nullptr) {
            return error(R"(echo without "data")");
        }
        return echo(*data);
    }
    if (name == "fill") {
        const rapidjson::Value *bytes = member(request, "bytes");
        if (bytes == nullptr) {
            return error(R"(fill without "bytes")");
        }
        return fill(*bytes);
    }
    return error("unknown op \"" + std::string(clip(name, 64)) + "\"");
}

std::string_view Responder::echo(const rapidjson::Value &data) {
    start_reply();
    writer_.StartObject();
    writer_.Key("op");
    writer_.String("echo");
    writer_.Key("data");
    CappedWriter capped(writer_, out_, strings_hold_1a_to_1f_);
    const bool written = data.Accept(capped) && writer_.EndObject();
    if (capped.too_big()) {
        return error("the echo reply would exceed the 1 MiB reply limit");
    }
    if (!written) { // not expected: the DOM holds no NaN or infinity, the writer's only refusals
        return error("the echo data cannot be written as JSON");
    }
    return {out_.GetString(), out_.GetSize()};
}

std::string_view Responder::fill(const rapidjson::Value &bytes) {
    // Only integer literals count: 100.0 or 1e2 is "not an integer", as in most JSON libraries.
    if (!bytes.IsUint64() || bytes.GetUint64() < kMinFillBytes ||
        bytes.GetUint64() > kMaxReplyBytes) {
        return error(R"(fill "bytes" must be an integer from )" + std::to_string(kMinFillBytes) +
                     " to " + std::to_string(kMaxReplyBytes));
    }
    const std::size_t size = bytes.GetUint64();
    const std::size_t xs = size - kMinFillBytes;
    if (filler_.size() < xs) {
        filler_.assign(xs, 'x');
    }
    start_reply();
    writer_.StartObject();
    writer_.Key("op");
    writer_.String("fill");
    writer_.Key("data");
    writer_.String(filler_.data(), static_cast<SizeType>(xs));
    writer_.EndObject();
    return {out_.GetString(), out_.GetSize()}; // exactly `size` bytes: all x, nothing to escape
}

std::string_view Responder::error(std::string_view message) {
    start_reply();
    writer_.StartObject();
    writer_.Key("error");
    write_string(writer_, message.data(), static_cast<SizeType>(message.size()));
    writer_.EndObject();
    return {out_.GetString(), out_.GetSize()};
}

void Responder::start_reply() {
    // Reset drops the state of a write the cap aborted half-way; Clear keeps the capacity.
    out_.Clear();
    writer_.Reset(out_);
}

} // namespace nativemsg
