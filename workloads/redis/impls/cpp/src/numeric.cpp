#include "numeric.hpp"

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>

namespace redis {

namespace {

bool is_c_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

// Longest text strtod/strtold is given, as redis's MAX_LONG_DOUBLE_CHARS.
constexpr std::size_t kMaxFloatChars = 5 * 1024;

// strtod needs a NUL-terminated string; arguments point into the read buffer. Small texts are
// copied to the stack, longer ones (rare, up to 5 KiB) to the heap.
template <class Fn> auto with_c_string(std::string_view s, Fn &&fn) {
    char small[128];
    std::unique_ptr<char[]> big;
    char *p = small;
    if (s.size() >= sizeof small) {
        big = std::make_unique<char[]>(s.size() + 1);
        p = big.get();
    }
    std::memcpy(p, s.data(), s.size());
    p[s.size()] = '\0';
    return fn(static_cast<const char *>(p));
}

} // namespace

bool parse_int64(std::string_view s, std::int64_t &out) {
    // Longer than any int64 ("-9223372036854775808" is 20 characters).
    if (s.empty() || s.size() > 20) {
        return false;
    }
    if (s.size() == 1 && s[0] == '0') {
        out = 0;
        return true;
    }
    std::size_t i = 0;
    const bool negative = s[0] == '-';
    if (negative && ++i == s.size()) {
        return false;
    }
    if (s[i] < '1' || s[i] > '9') {
        return false;
    }
    // Up to 19 digits fit in a uint64 without overflow checks; only a 20-digit string (which
    // can only be out of range) needs them.
    std::uint64_t v = 0;
    for (; i < s.size(); ++i) {
        const auto digit = static_cast<unsigned>(s[i] - '0');
        if (digit > 9) {
            return false;
        }
        if (__builtin_mul_overflow(v, std::uint64_t{10}, &v) ||
            __builtin_add_overflow(v, std::uint64_t{digit}, &v)) {
            return false;
        }
    }
    constexpr auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    if (negative) {
        if (v > kMax + 1) {
            return false;
        }
        out = static_cast<std::int64_t>(0 - v);
    } else {
        if (v > kMax) {
            return false;
        }
        out = static_cast<std::int64_t>(v);
    }
    return true;
}

bool parse_double(std::string_view s, double &out) {
    if (s.empty() || s.size() >= kMaxFloatChars || is_c_space(s[0])) {
        return false;
    }
    return with_c_string(s, [&](const char *p) {
        char *end = nullptr;
        errno = 0;
        const double v = std::strtod(p, &end);
        if (static_cast<std::size_t>(end - p) != s.size() || std::isnan(v)) {
            return false;
        }
        if (errno == ERANGE && (std::isinf(v) || v == 0.0)) {
            return false;
        }
        out = v;
        return true;
    });
}

bool parse_long_double(std::string_view s, long double &out) {
    if (s.empty() || s.size() >= kMaxFloatChars || is_c_space(s[0]) ||
        s.find('\0') != std::string_view::npos) {
        return false;
    }
    return with_c_string(s, [&](const char *p) {
        char *end = nullptr;
        errno = 0;
        const long double v = std::strtold(p, &end);
        if (*end != '\0' || std::isnan(v)) {
            return false;
        }
        if (errno == ERANGE && (std::isinf(v) || v == 0.0L)) {
            return false;
        }
        out = v;
        return true;
    });
}

std::string_view format_int64(std::int64_t v, char *buf) {
    const auto r = std::to_chars(buf, buf + kNumberChars, v);
    return {buf, static_cast<std::size_t>(r.ptr - buf)};
}

std::string_view format_double(double v, char *buf) {
    if (std::isinf(v)) {
        return v > 0 ? "inf" : "-inf";
    }
    // to_chars with a precision is specified as printf's %.*g, without the locale.
    const auto r = std::to_chars(buf, buf + kNumberChars, v, std::chars_format::general, 17);
    return {buf, static_cast<std::size_t>(r.ptr - buf)};
}

bool format_long_double(long double v, char *buf, std::size_t cap, std::size_t &len) {
    const int n = std::snprintf(buf, cap, "%.17Lf", v);
    if (n < 0 || static_cast<std::size_t>(n) + 1 > cap) {
        return false;
    }
    auto l = static_cast<std::size_t>(n);
    if (std::memchr(buf, '.', l) != nullptr) {
        while (buf[l - 1] == '0') {
            --l;
        }
        if (buf[l - 1] == '.') {
            --l;
        }
    }
    if (l == 2 && buf[0] == '-' && buf[1] == '0') {
        buf[0] = '0';
        l = 1;
    }
    len = l;
    return true;
}

} // namespace redis
