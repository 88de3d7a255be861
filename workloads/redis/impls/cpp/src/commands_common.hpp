// Helpers the command files share: argument parsing with redis's error replies, and typed
// key lookups.
#pragma once

#include "commands.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace redis::util {

// redis compares options with C string functions, so an argument ends at its first NUL byte
// ("EX\0junk" is EX).
inline std::string_view c_string(std::string_view s) {
    const auto nul = s.find('\0');
    return nul == std::string_view::npos ? s : s.substr(0, nul);
}

// Case-insensitive comparison with a lower-case literal.
inline bool iequals(std::string_view a, std::string_view lower) {
    if (a.size() != lower.size()) {
        return false;
    }
    for (std::size_t i = 0; i < a.size(); ++i) {
        char c = a[i];
        if (c >= 'A' && c <= 'Z') {
            c = static_cast<char>(c - 'A' + 'a');
        }
        if (c != lower[i]) {
            return false;
        }
    }
    return true;
}

// An option argument as redis's strcasecmp(arg, "option") sees it.
inline bool option_is(std::string_view arg, std::string_view lower) {
    return iequals(c_string(arg), lower);
}

// Parse helpers that reply the usual error and return false on bad input.
inline bool int_arg(Context &ctx, std::string_view s, std::int64_t &out) {
    if (!parse_int64(s, out)) {
        ctx.reply.error(errors::kNotInteger);
        return false;
    }
    return true;
}

inline bool float_arg(Context &ctx, std::string_view s, double &out) {
    if (!parse_double(s, out)) {
        ctx.reply.error(errors::kNotFloat);
        return false;
    }
    return true;
}

// "ERR wrong number of arguments for 'name' command".
void arity_error(Context &ctx, std::string_view full_name);

// When `e` exists with a type other than `t`: replies WRONGTYPE and returns true.
inline bool wrong_type(Context &ctx, const Entry *e, Type t) {
    if (e != nullptr && e->type() != t) {
        ctx.reply.error(errors::kWrongType);
        return true;
    }
    return false;
}

// The collection of a found key of type `t`, or null when the key is missing. Sets `wrong`
// (and replies WRONGTYPE) when the key holds another type.
template <class T> T *collection(Context &ctx, const Entry *e, Type t, bool &wrong) {
    wrong = wrong_type(ctx, e, t);
    if (wrong || e == nullptr) {
        return nullptr;
    }
    return e->object<T>();
}

// Turns redis's (start, stop) index pair, negative counting from the end, into a clamped
// [start, stop] range over `size` items; false when the range is empty.
inline bool clamp_range(std::int64_t &start, std::int64_t &stop, std::int64_t size) {
    if (start < 0) {
        start += size;
    }
    if (stop < 0) {
        stop += size;
    }
    if (start < 0) {
        start = 0;
    }
    if (start > stop || start >= size) {
        return false;
    }
    if (stop >= size) {
        stop = size - 1;
    }
    return true;
}

// "ERR unknown subcommand 'x'. Try NAME HELP."
void unknown_subcommand(Context &ctx, std::string_view sub, std::string_view command_upper);

} // namespace redis::util
