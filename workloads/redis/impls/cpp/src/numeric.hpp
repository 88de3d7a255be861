// Number parsing and formatting with redis's exact rules: which strings are integers or
// floats, and how numbers are printed in replies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace redis {

// Room for any formatted int64 or %.17g double.
inline constexpr std::size_t kNumberChars = 32;

// A strict decimal int64 (redis's string2ll): optional '-', no '+', no spaces, no leading
// zeros ("0" alone is fine, "-0" and "007" are not), no overflow.
bool parse_int64(std::string_view s, std::int64_t &out);

// A double as strtod reads it, all of `s` consumed (so no embedded NUL), no leading space, no
// NaN, no overflow to ±HUGE_VAL or underflow to zero; "inf", "-inf", "1e3", "0x10" are fine.
bool parse_double(std::string_view s, double &out);

// The same for long double (INCRBYFLOAT, HINCRBYFLOAT): redis 7.0's string2ld, which also
// requires strtold to consume all of `s`, so a value with an embedded NUL is not a number.
bool parse_long_double(std::string_view s, long double &out);

// Formats into `buf` (kNumberChars bytes) and returns the text.
std::string_view format_int64(std::int64_t v, char *buf);
// %.17g, as redis 7.0 prints scores: 0.1 -> "0.10000000000000001", 3 -> "3". Infinity
// prints as "inf" / "-inf".
std::string_view format_double(double v, char *buf);

// INCRBYFLOAT's text: %.17Lf with trailing zeros (and a bare '.') removed, "-0" as "0".
// Returns false when the text would exceed redis's 5 KiB limit.
bool format_long_double(long double v, char *buf, std::size_t cap, std::size_t &len);

} // namespace redis
