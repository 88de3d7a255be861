#include "protocol.hpp"

#include <algorithm>
#include <cstring>

namespace redis {

namespace {

// Where redis's strchr(buf + from, c) would stop: the first `c` at or after `from`, or npos
// when the bytes end first or a NUL byte comes first (redis's query buffer is a C string, so
// its line searches end at a NUL; a header line with a NUL in it therefore never completes).
std::size_t find_in_c_string(std::string_view in, std::size_t from, char c) {
    const char *p = in.data();
    const std::size_t n = in.size();
    // Header lines ("$3", "*2") are a few bytes: a plain loop beats two library calls.
    const std::size_t short_end = std::min(n, from + 32);
    std::size_t i = from;
    for (; i < short_end; ++i) {
        if (p[i] == c) {
            return i;
        }
        if (p[i] == '\0') {
            return std::string_view::npos;
        }
    }
    if (i == n) {
        return std::string_view::npos;
    }
    const void *hit = std::memchr(p + i, c, n - i);
    const std::size_t end = hit ? static_cast<std::size_t>(static_cast<const char *>(hit) - p) : n;
    if (std::memchr(p + i, '\0', end - i) != nullptr) {
        return std::string_view::npos;
    }
    return hit ? end : std::string_view::npos;
}

// The common header line, parsed in one pass: the type byte at `at`, then 1 to 9 digits with
// no leading zero, then '\r' and the byte after it. Returns the number and sets `next` past the
// line, or -1 when the general path must decide (incomplete, unusual or invalid line), which
// then gives exactly redis's answer.
std::int64_t fast_header(std::string_view in, std::size_t at, std::size_t &next) {
    const char *p = in.data();
    const std::size_t n = in.size();
    std::size_t i = at + 1;
    if (i >= n || p[i] < '1' || p[i] > '9') {
        return -1;
    }
    std::int64_t v = p[i] - '0';
    const std::size_t limit = std::min(n, i + 9);
    for (++i; i < limit && p[i] >= '0' && p[i] <= '9'; ++i) {
        v = v * 10 + (p[i] - '0');
    }
    if (i + 1 >= n || p[i] != '\r') {
        return -1;
    }
    next = i + 2;
    return v;
}

bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

int hex_value(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return c - 'A' + 10;
}

// isspace() in the C locale.
bool is_blank(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

} // namespace

bool split_inline_args(std::string_view line, std::string &storage,
                       std::vector<std::pair<std::size_t, std::size_t>> &spans) {
    // redis splits a C string: a NUL ends the line. The caller never passes one (see
    // parse_inline), but reading "the byte after" as NUL past the end keeps the rules identical.
    const std::size_t n = line.size();
    auto at = [&](std::size_t i) { return i < n ? line[i] : '\0'; };
    std::size_t i = 0;
    for (;;) {
        while (i < n && is_blank(line[i])) {
            ++i;
        }
        if (i >= n) {
            return true;
        }
        const std::size_t start = storage.size();
        bool in_double = false;
        bool in_single = false;
        for (bool done = false; !done;) {
            const char c = at(i);
            if (in_double) {
                if (c == '\\' && at(i + 1) == 'x' && is_hex(at(i + 2)) && is_hex(at(i + 3))) {
                    storage.push_back(
                        static_cast<char>(hex_value(at(i + 2)) * 16 + hex_value(at(i + 3))));
                    i += 3;
                } else if (c == '\\' && at(i + 1) != '\0') {
                    ++i;
                    switch (at(i)) {
                    case 'n':
                        storage.push_back('\n');
                        break;
                    case 'r':
                        storage.push_back('\r');
                        break;
                    case 't':
                        storage.push_back('\t');
                        break;
                    case 'b':
                        storage.push_back('\b');
                        break;
                    case 'a':
                        storage.push_back('\a');
                        break;
                    default:
                        storage.push_back(at(i));
                        break;
                    }
                } else if (c == '"') {
                    // A closing quote must be followed by a blank or the end.
                    if (at(i + 1) != '\0' && !is_blank(at(i + 1))) {
                        return false;
                    }
                    done = true;
                } else if (c == '\0') {
                    return false; // unterminated quotes
                } else {
                    storage.push_back(c);
                }
            } else if (in_single) {
                if (c == '\\' && at(i + 1) == '\'') {
                    ++i;
                    storage.push_back('\'');
                } else if (c == '\'') {
                    if (at(i + 1) != '\0' && !is_blank(at(i + 1))) {
                        return false;
                    }
                    done = true;
                } else if (c == '\0') {
                    return false;
                } else {
                    storage.push_back(c);
                }
            } else {
                switch (c) {
                case ' ':
                case '\n':
                case '\r':
                case '\t':
                case '\0':
                    done = true;
                    break;
                case '"':
                    in_double = true;
                    break;
                case '\'':
                    in_single = true;
                    break;
                default:
                    storage.push_back(c);
                    break;
                }
            }
            if (at(i) != '\0') {
                ++i;
            }
        }
        spans.emplace_back(start, storage.size() - start);
    }
}

void RequestParser::reset() {
    kind_ = Kind::unknown;
    pos_ = 0;
    remaining_ = 0;
    bulk_len_ = -1;
    needed_ = 0;
    consumed_ = 0;
    spans_.clear();
    args_.clear();
    error_ = {};
}

RequestParser::Status RequestParser::fail(std::string_view message) {
    error_ = message;
    return Status::error;
}

RequestParser::Status RequestParser::parse(std::string_view input) {
    if (kind_ == Kind::unknown) {
        if (input.empty()) {
            return Status::incomplete;
        }
        kind_ = input[0] == '*' ? Kind::multibulk : Kind::inline_;
    }
    return kind_ == Kind::multibulk ? parse_multibulk(input) : parse_inline(input);
}

bool RequestParser::parse_whole(std::string_view in) {
    const char *p = in.data();
    const char *const end = p + in.size();
    // fast_header's line at p (type byte, 1-9 digits without a leading zero, '\r' and the
    // byte after it, taken as '\n' unchecked as redis does), inlined with pointers: it runs
    // once per argument, and as a call it cost ~45 instructions of the ~300 a SET takes.
    const auto header = [&p, end](char type) -> std::int64_t {
        if (end - p < 4 || p[0] != type) {
            return -1;
        }
        auto digit = static_cast<unsigned>(static_cast<unsigned char>(p[1]) - '0');
        if (digit - 1 > 8) {
            return -1;
        }
        auto v = static_cast<std::int64_t>(digit);
        const char *q = p + 2;
        const char *const limit = end - p > 11 ? p + 11 : end;
        while (q < limit &&
               (digit = static_cast<unsigned>(static_cast<unsigned char>(*q) - '0')) <= 9) {
            v = v * 10 + digit;
            ++q;
        }
        if (end - q < 2 || *q != '\r') {
            return -1;
        }
        p = q + 2;
        return v;
    };
    const std::int64_t count = header('*');
    if (count <= 0) {
        return false;
    }
    for (std::int64_t i = 0; i < count; ++i) {
        const std::int64_t len = header('$');
        // The data and its CRLF (skipped unchecked, as redis does) must be there.
        if (len <= 0 || len > kMaxBulkBytes || end - p < len + 2) {
            args_.clear();
            return false;
        }
        args_.emplace_back(p, static_cast<std::size_t>(len));
        p += len + 2;
    }
    consumed_ = static_cast<std::size_t>(p - in.data());
    return true;
}

RequestParser::Status RequestParser::parse_multibulk(std::string_view in) {
    if (pos_ == 0) {
        if (parse_whole(in)) {
            return Status::complete;
        }
        // "*<count>\r\n". Like redis, the byte after '\r' is taken as the '\n' unchecked.
        if (const std::int64_t count = fast_header(in, 0, pos_); count > 0) {
            remaining_ = count;
            bulk_len_ = -1;
            return parse_multibulk_args(in);
        }
        const std::size_t cr = find_in_c_string(in, 0, '\r');
        if (cr == std::string_view::npos) {
            if (in.size() > kMaxInlineBytes) {
                return fail("ERR Protocol error: too big mbulk count string");
            }
            return Status::incomplete;
        }
        if (cr + 2 > in.size()) {
            return Status::incomplete;
        }
        std::int64_t count = 0;
        if (!parse_int64(in.substr(1, cr - 1), count) || count > kMaxMultibulkCount) {
            return fail("ERR Protocol error: invalid multibulk length");
        }
        pos_ = cr + 2;
        if (count <= 0) {
            consumed_ = pos_;
            return Status::complete; // "*0", "*-1": nothing to run
        }
        remaining_ = count;
        bulk_len_ = -1;
    }
    return parse_multibulk_args(in);
}

RequestParser::Status RequestParser::parse_multibulk_args(std::string_view in) {
    while (remaining_ > 0) {
        if (bulk_len_ < 0 && pos_ < in.size() && in[pos_] == '$') {
            std::size_t next = 0;
            const std::int64_t len = fast_header(in, pos_, next);
            if (len > 0 && len <= kMaxBulkBytes) {
                pos_ = next;
                bulk_len_ = len;
            }
        }
        if (bulk_len_ < 0) {
            const std::size_t cr = find_in_c_string(in, pos_, '\r');
            if (cr == std::string_view::npos) {
                if (in.size() - pos_ > kMaxInlineBytes) {
                    return fail("ERR Protocol error: too big bulk count string");
                }
                needed_ = in.size() + 1;
                return Status::incomplete;
            }
            if (cr + 2 > in.size()) {
                needed_ = cr + 2;
                return Status::incomplete;
            }
            if (in[pos_] != '$') {
                // (The byte cannot be NUL: the line search above would have stopped there.)
                error_text_ = "ERR Protocol error: expected '$', got '";
                error_text_ += in[pos_];
                error_text_ += '\'';
                return fail(error_text_);
            }
            std::int64_t len = 0;
            if (!parse_int64(in.substr(pos_ + 1, cr - pos_ - 1), len) || len < 0 ||
                len > kMaxBulkBytes) {
                return fail("ERR Protocol error: invalid bulk length");
            }
            pos_ = cr + 2;
            bulk_len_ = len;
        }
        const auto need = static_cast<std::size_t>(bulk_len_) + 2; // the data and its CRLF
        if (in.size() - pos_ < need) {
            needed_ = pos_ + need;
            return Status::incomplete;
        }
        // The two bytes after the data are skipped unchecked, as redis does.
        spans_.emplace_back(pos_, static_cast<std::size_t>(bulk_len_));
        pos_ += need;
        bulk_len_ = -1;
        --remaining_;
    }
    args_.clear();
    args_.reserve(spans_.size());
    for (const auto &[offset, len] : spans_) {
        args_.emplace_back(in.data() + offset, len);
    }
    consumed_ = pos_;
    return Status::complete;
}

RequestParser::Status RequestParser::parse_inline(std::string_view in) {
    // The line ends at '\n' (a '\r' before it is dropped). Resume the search where the last
    // call stopped: the bytes before were already searched.
    const std::size_t nl = find_in_c_string(in, pos_, '\n');
    if (nl == std::string_view::npos) {
        if (in.size() > kMaxInlineBytes) {
            return fail("ERR Protocol error: too big inline request");
        }
        // Everything so far was searched, unless a NUL stopped the search: then the request
        // can never complete (as in redis) and only the size limit ends it.
        if (std::memchr(in.data() + pos_, '\0', in.size() - pos_) == nullptr) {
            pos_ = in.size();
        }
        return Status::incomplete;
    }
    std::size_t line_end = nl;
    if (line_end != 0 && in[line_end - 1] == '\r') {
        --line_end;
    }
    inline_storage_.clear();
    spans_.clear();
    if (!split_inline_args(in.substr(0, line_end), inline_storage_, spans_)) {
        return fail("ERR Protocol error: unbalanced quotes in request");
    }
    args_.clear();
    for (const auto &[offset, len] : spans_) {
        args_.emplace_back(inline_storage_.data() + offset, len);
    }
    consumed_ = nl + 1;
    return Status::complete;
}

void Reply::simple(std::string_view s) {
    char *p = out_->reserve(s.size() + 3);
    *p++ = '+';
    std::memcpy(p, s.data(), s.size());
    p += s.size();
    *p++ = '\r';
    *p = '\n';
    out_->commit(s.size() + 3);
}

void Reply::error(std::string_view message) {
    char *p = out_->reserve(message.size() + 3);
    *p++ = '-';
    for (const char c : message) {
        *p++ = (c == '\r' || c == '\n') ? ' ' : c;
    }
    *p++ = '\r';
    *p = '\n';
    out_->commit(message.size() + 3);
}

void Reply::header(char type, std::int64_t n) {
    char *p = out_->reserve(kNumberChars + 3);
    char *start = p;
    *p++ = type;
    // Small counts are the common case (array lengths, short bulks).
    if (n >= 0 && n < 10) {
        *p++ = static_cast<char>('0' + n);
    } else {
        p += format_int64(n, p).size();
    }
    *p++ = '\r';
    *p++ = '\n';
    out_->commit(static_cast<std::size_t>(p - start));
}

void Reply::integer(std::int64_t v) {
    header(':', v);
}

void Reply::bulk_double(double v) {
    char buf[kNumberChars];
    const std::string_view text = format_double(v, buf);
    if (!resp3_) {
        bulk(text);
        return;
    }
    char *p = out_->reserve(text.size() + 3);
    *p++ = ',';
    std::memcpy(p, text.data(), text.size());
    p += text.size();
    *p++ = '\r';
    *p = '\n';
    out_->commit(text.size() + 3);
}

void Reply::verbatim(std::string_view text) {
    if (!resp3_) {
        bulk(text);
        return;
    }
    header('=', static_cast<std::int64_t>(text.size() + 4));
    raw("txt:");
    raw(text);
    raw("\r\n");
}

void Reply::bulk_int(std::int64_t v) {
    char buf[kNumberChars];
    bulk(format_int64(v, buf));
}

} // namespace redis
