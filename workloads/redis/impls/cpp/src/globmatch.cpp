#include "globmatch.hpp"

#include <cctype>

namespace redis {

namespace {

int lower(int c) {
    return std::tolower(c);
}

// Returns true on a match. `give_up` is set when the rest of the pattern matched nowhere in
// the rest of the string: then an earlier '*' need not try longer matches (this bounds
// patterns like "a*a*a*a*b" to polynomial time, as redis does since 7.0.10).
bool glob(const char *p, std::size_t plen, const char *s, std::size_t slen, bool nocase,
          bool &give_up) {
    // Characters compare as the platform's signed char, as redis's C code does (this matters
    // for ranges with bytes >= 0x80).
    auto at = [](const char *q) { return static_cast<int>(static_cast<signed char>(*q)); };
    while (plen != 0 && slen != 0) {
        switch (*p) {
        case '*':
            while (plen > 1 && p[1] == '*') {
                ++p;
                --plen;
            }
            if (plen == 1) {
                return true;
            }
            while (slen != 0) {
                if (glob(p + 1, plen - 1, s, slen, nocase, give_up)) {
                    return true;
                }
                if (give_up) {
                    return false;
                }
                ++s;
                --slen;
            }
            give_up = true;
            return false;
        case '?':
            ++s;
            --slen;
            break;
        case '[': {
            ++p;
            --plen;
            const bool negate = plen != 0 && *p == '^';
            if (negate) {
                ++p;
                --plen;
            }
            bool match = false;
            for (;;) {
                if (plen >= 2 && *p == '\\') {
                    ++p;
                    --plen;
                    if (*p == *s) {
                        match = true;
                    }
                } else if (plen != 0 && *p == ']') {
                    break;
                } else if (plen == 0) {
                    // Unterminated class: step back so the outer advance lands at the end.
                    --p;
                    ++plen;
                    break;
                } else if (plen >= 3 && p[1] == '-') {
                    int start = at(p);
                    int end = at(p + 2);
                    int c = at(s);
                    if (start > end) {
                        std::swap(start, end);
                    }
                    if (nocase) {
                        start = lower(start);
                        end = lower(end);
                        c = lower(c);
                    }
                    p += 2;
                    plen -= 2;
                    if (c >= start && c <= end) {
                        match = true;
                    }
                } else if (nocase ? lower(at(p)) == lower(at(s)) : *p == *s) {
                    match = true;
                }
                ++p;
                --plen;
            }
            if (negate) {
                match = !match;
            }
            if (!match) {
                return false;
            }
            ++s;
            --slen;
            break;
        }
        case '\\':
            if (plen >= 2) {
                ++p;
                --plen;
            }
            [[fallthrough]];
        default:
            if (nocase ? lower(at(p)) != lower(at(s)) : *p != *s) {
                return false;
            }
            ++s;
            --slen;
            break;
        }
        ++p;
        --plen;
        if (slen == 0) {
            while (plen != 0 && *p == '*') {
                ++p;
                --plen;
            }
            break;
        }
    }
    return plen == 0 && slen == 0;
}

} // namespace

bool glob_match(std::string_view pattern, std::string_view s, bool nocase) {
    bool give_up = false;
    return glob(pattern.data(), pattern.size(), s.data(), s.size(), nocase, give_up);
}

} // namespace redis
