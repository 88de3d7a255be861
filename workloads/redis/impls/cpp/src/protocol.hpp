// RESP2 on the wire: the request parser (multibulk and inline requests, with redis 7.0's
// exact limits and error texts) and the reply encoder.
#pragma once

#include "byte_buffer.hpp"
#include "numeric.hpp"

#include <algorithm>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace redis {

// redis's limits (PROTO_INLINE_MAX_SIZE, proto-max-bulk-len).
inline constexpr std::size_t kMaxInlineBytes = 64 * 1024;
inline constexpr std::int64_t kMaxBulkBytes = 512LL * 1024 * 1024;
inline constexpr std::int64_t kMaxMultibulkCount = 0x7FFF'FFFF; // INT_MAX
// Pending reply bytes past which a client is disconnected (redis's client-output-buffer-limit
// "normal 64mb 0 0", as the lab starts the reference).
inline constexpr std::size_t kMaxOutputBytes = 64 * 1024 * 1024;

// Parses one request at a time out of a byte stream. The caller passes every byte it has from
// the start of the current request; between calls the same bytes may only be followed by more
// (the buffer itself may move). The parser remembers how far it got, so a request arriving in
// many reads is scanned once, not once per read.
class RequestParser {
  public:
    enum class Status {
        complete,   // args() holds the request (possibly empty: nothing to run)
        incomplete, // wait for more bytes
        error,      // protocol error: reply error() and close the connection
    };

    Status parse(std::string_view input);

    // After complete: the arguments (they point into the input or into the parser) and the
    // number of input bytes the request used. Valid until the next parse() or reset().
    [[nodiscard]] std::span<const std::string_view> args() const {
        return args_;
    }
    [[nodiscard]] std::size_t consumed() const {
        return consumed_;
    }
    // After error: the message, without "-" and CRLF ("ERR Protocol error: ...").
    [[nodiscard]] std::string_view error() const {
        return error_;
    }
    // While incomplete: how many input bytes the request is known to need at least (so a
    // reader can make room for a large bulk argument; it never exceeds what the announced
    // lengths say, and they are bounded by the protocol limits).
    [[nodiscard]] std::size_t bytes_needed() const {
        return needed_;
    }

    // Starts the next request (after complete).
    void reset();

  private:
    // The common case, a whole request with no empty or oversized argument already in `in`:
    // arguments straight into args_ in one pass. False (args_ left empty) sends it to the
    // general, resumable path below, which gives redis's answer to everything else.
    bool parse_whole(std::string_view in);
    Status parse_multibulk(std::string_view in);
    Status parse_multibulk_args(std::string_view in);
    Status parse_inline(std::string_view in);
    Status fail(std::string_view message);

    enum class Kind { unknown, multibulk, inline_ };
    Kind kind_ = Kind::unknown;
    std::size_t pos_ = 0;        // next unparsed offset in the request
    std::int64_t remaining_ = 0; // multibulk: arguments still to read
    std::int64_t bulk_len_ = -1; // multibulk: length of the argument being read, -1 = header
    std::size_t needed_ = 0;     // see bytes_needed()
    std::size_t consumed_ = 0;
    // Multibulk arguments as (offset, length) until complete: the buffer may move meanwhile.
    std::vector<std::pair<std::size_t, std::size_t>> spans_;
    std::vector<std::string_view> args_;
    std::string inline_storage_; // inline arguments, unescaped
    std::string_view error_;
    std::string error_text_; // storage for an error message built from the input
};

// Splits an inline request line the way redis's sdssplitargs does: arguments separated by
// blanks, "double quotes" with \n \r \t \b \a \xHH and \<char> escapes, 'single quotes' with \'.
// Appends each argument to `storage` and its (offset, length) to `spans`. Returns false on
// unbalanced quotes (or a closing quote followed by something other than a blank).
bool split_inline_args(std::string_view line, std::string &storage,
                       std::vector<std::pair<std::size_t, std::size_t>> &spans);

// The most bytes put_bulk adds to a string's own.
inline constexpr std::size_t kBulkRoom = kNumberChars + 5;
// What Reply::bulks reserves at a time.
inline constexpr std::size_t kBulkChunk = 4096;

// Writes "$<n>\r\n<bytes>\r\n" at p (room for s.size() + kBulkRoom) and returns its end.
// Most strings in replies are short: a length of one or two digits is written directly and
// the bytes are moved by copy_bytes, not the general formatter and a memcpy call.
inline char *put_bulk(char *p, std::string_view s) {
    const std::size_t n = s.size();
    if (n < 10) { // "$<digit>\r\n" as one 4-byte store, the bytes, then "\r\n"
        static_assert(std::endian::native == std::endian::little);
        const auto head =
            static_cast<std::uint32_t>('$' | ('0' + n) << 8 | '\r' << 16 | '\n' << 24);
        std::memcpy(p, &head, 4);
        copy_bytes(p + 4, s.data(), n);
        std::memcpy(p + 4 + n, "\r\n", 2);
        return p + n + 6;
    }
    *p++ = '$';
    if (n < 100) {
        p[0] = static_cast<char>('0' + n / 10);
        p[1] = static_cast<char>('0' + n % 10);
        p += 2;
    } else {
        p += format_int64(static_cast<std::int64_t>(n), p).size();
    }
    p[0] = '\r';
    p[1] = '\n';
    copy_bytes(p + 2, s.data(), n);
    p += n + 2;
    p[0] = '\r';
    p[1] = '\n';
    return p + 2;
}

// Writes "$<n>\r\n<bytes>\r\n" for n <= 7 bytes held as the low bytes of `word` (a list
// element stored in its slot): the bytes go out as one 8-byte store, so put_bulk's length
// branches and copy_bytes are skipped. Needs room for 12 bytes; returns the end (p + n + 6).
inline char *put_small_bulk(char *p, std::uint64_t word, std::size_t n) {
    static_assert(std::endian::native == std::endian::little);
    const auto head = static_cast<std::uint32_t>('$' | ('0' + n) << 8 | '\r' << 16 | '\n' << 24);
    std::memcpy(p, &head, 4);
    std::memcpy(p + 4, &word, 8);
    std::memcpy(p + 4 + n, "\r\n", 2);
    return p + n + 6;
}
inline constexpr std::size_t kSmallBulkRoom = 12;

// An iterator whose elements may be short enough to hand over as one word (List::Iterator):
// small(word) returns the length (<= 7) with the bytes in word's low bytes, or -1.
template <class It>
concept SmallElements = requires(const It &it, std::uint64_t &word) {
    { it.small(word) } -> std::same_as<int>;
};

// Appends replies to a buffer, in RESP2 or (after HELLO 3) RESP3: the methods name what a
// reply means (a map, a set, a null, a double) and each protocol spells it its own way.
class Reply {
  public:
    explicit Reply(ByteBuffer &out, int protocol = 2) : out_(&out), resp3_(protocol == 3) {}

    void set_protocol(int protocol) {
        resp3_ = protocol == 3;
    }
    [[nodiscard]] bool resp3() const {
        return resp3_;
    }

    void retarget(ByteBuffer &out) {
        out_ = &out;
    }
    [[nodiscard]] ByteBuffer &buffer() const {
        return *out_;
    }

    // True once the buffer holds more than the output limit: a command producing an unbounded
    // reply stops there (the connection is closed afterwards anyway).
    [[nodiscard]] bool full() const {
        return out_->size() > kMaxOutputBytes;
    }

    void raw(std::string_view bytes) {
        out_->append(bytes);
    }
    void ok() {
        raw("+OK\r\n");
    }
    void simple(std::string_view s);
    // `message` is the text after '-' (e.g. "ERR syntax error"); CR and LF in it become spaces
    // so that the reply stays one line, as redis does.
    void error(std::string_view message);
    void integer(std::int64_t v);
    void bulk(std::string_view s) {
        char *p = out_->reserve(s.size() + kBulkRoom);
        out_->commit(static_cast<std::size_t>(put_bulk(p, s) - p));
    }
    // The bulk strings of [first, last), LRANGE's elements: written through a local pointer,
    // the buffer's size updated once per reservation instead of per element. (Per-element
    // bulk() calls cannot keep the buffer's fields in registers: a store through a char
    // pointer may alias them. At -P 16 the LRANGE tests spent ~110 instructions per element
    // in std::to_chars, memcpy and those reloads before; ~30 now.)
    template <class It> void bulks(It first, It last) {
        char *base = nullptr;
        char *p = nullptr;
        char *limit = nullptr;
        for (; first != last; ++first) {
            if constexpr (SmallElements<It>) {
                std::uint64_t word = 0;
                const int n = first.small(word);
                if (n >= 0) {
                    if (static_cast<std::size_t>(limit - p) < kSmallBulkRoom) {
                        out_->commit(static_cast<std::size_t>(p - base));
                        base = p = out_->reserve(kBulkChunk);
                        limit = p + out_->spare();
                    }
                    p = put_small_bulk(p, word, static_cast<std::size_t>(n));
                    continue;
                }
            }
            const std::string_view s = *first;
            if (static_cast<std::size_t>(limit - p) < s.size() + kBulkRoom) {
                out_->commit(static_cast<std::size_t>(p - base));
                base = p = out_->reserve(std::max(s.size() + kBulkRoom, kBulkChunk));
                limit = p + out_->spare();
            }
            p = put_bulk(p, s);
        }
        out_->commit(static_cast<std::size_t>(p - base));
    }
    void null_bulk() {
        raw(resp3_ ? "_\r\n" : "$-1\r\n");
    }
    void null_array() {
        raw(resp3_ ? "_\r\n" : "*-1\r\n");
    }
    // n key/value pairs follow (RESP2: a flat array of 2n).
    void map(std::size_t n) {
        if (resp3_) {
            header('%', static_cast<std::int64_t>(n));
        } else {
            header('*', static_cast<std::int64_t>(n * 2));
        }
    }
    // n unordered members follow (RESP2: an array).
    void set(std::size_t n) {
        header(resp3_ ? '~' : '*', static_cast<std::int64_t>(n));
    }
    // Text for humans (INFO, CLIENT INFO): RESP3's verbatim string, RESP2's bulk.
    void verbatim(std::string_view text);
    void array(std::size_t n) {
        header('*', static_cast<std::int64_t>(n));
    }
    void empty_array() {
        raw("*0\r\n");
    }
    // A double as redis 7.0 sends it, %.17g: a bulk string in RESP2, a RESP3 double.
    void bulk_double(double v);
    void bulk_int(std::int64_t v);

  private:
    void header(char type, std::int64_t n);
    ByteBuffer *out_;
    bool resp3_;
};

// Common error texts, as redis 7.0.15 words them.
namespace errors {
inline constexpr std::string_view kWrongType =
    "WRONGTYPE Operation against a key holding the wrong kind of value";
inline constexpr std::string_view kNotInteger = "ERR value is not an integer or out of range";
inline constexpr std::string_view kNotFloat = "ERR value is not a valid float";
inline constexpr std::string_view kSyntax = "ERR syntax error";
inline constexpr std::string_view kOverflow = "ERR increment or decrement would overflow";
inline constexpr std::string_view kNoSuchKey = "ERR no such key";
inline constexpr std::string_view kOutOfRange = "ERR index out of range";
inline constexpr std::string_view kDbIndex = "ERR DB index is out of range";
inline constexpr std::string_view kPositive = "ERR value is out of range, must be positive";
inline constexpr std::string_view kStringTooLong =
    "ERR string exceeds maximum allowed size (proto-max-bulk-len)";
} // namespace errors

} // namespace redis
