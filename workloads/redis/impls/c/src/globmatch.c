#include "globmatch.h"

#include <ctype.h>

/* The matcher works on signed chars, as redis's does: that decides how byte ranges above 0x7f
 * compare in [a-z] classes. */
static bool glob_impl(const signed char *pat, size_t plen, const signed char *s, size_t slen,
                      bool nocase, bool *give_up) {
    while (plen && slen) {
        switch (pat[0]) {
        case '*':
            while (plen > 1 && pat[1] == '*') {
                pat++;
                plen--;
            }
            if (plen == 1)
                return true;
            while (slen) {
                if (glob_impl(pat + 1, plen - 1, s, slen, nocase, give_up))
                    return true;
                if (*give_up)
                    return false;
                s++;
                slen--;
            }
            /* The rest of the pattern matches nowhere in the rest of the string, so no
             * earlier '*' can help by swallowing more: stop the whole search (this keeps
             * patterns like "a*a*a*a*b" linear instead of exponential). */
            *give_up = true;
            return false;
        case '?':
            s++;
            slen--;
            break;
        case '[': {
            pat++;
            plen--;
            bool negate = plen && pat[0] == '^';
            if (negate) {
                pat++;
                plen--;
            }
            bool match = false;
            for (;;) {
                if (plen == 0) {
                    /* An unterminated class ends at the end of the pattern. */
                    pat--;
                    plen++;
                    break;
                }
                if (pat[0] == '\\' && plen >= 2) {
                    pat++;
                    plen--;
                    if (pat[0] == s[0])
                        match = true;
                } else if (pat[0] == ']') {
                    break;
                } else if (plen >= 3 && pat[1] == '-') {
                    int lo = pat[0], hi = pat[2], c = s[0];
                    if (lo > hi) {
                        int t = lo;
                        lo = hi;
                        hi = t;
                    }
                    if (nocase) {
                        lo = tolower(lo);
                        hi = tolower(hi);
                        c = tolower(c);
                    }
                    pat += 2;
                    plen -= 2;
                    if (c >= lo && c <= hi)
                        match = true;
                } else if (nocase ? tolower(pat[0]) == tolower(s[0]) : pat[0] == s[0]) {
                    match = true;
                }
                pat++;
                plen--;
            }
            if (negate)
                match = !match;
            if (!match)
                return false;
            s++;
            slen--;
            break;
        }
        case '\\':
            if (plen >= 2) {
                pat++;
                plen--;
            }
            /* fall through */
        default:
            if (nocase ? tolower(pat[0]) != tolower(s[0]) : pat[0] != s[0])
                return false;
            s++;
            slen--;
            break;
        }
        pat++;
        plen--;
        if (slen == 0) {
            while (plen && pat[0] == '*') {
                pat++;
                plen--;
            }
            break;
        }
    }
    return plen == 0 && slen == 0;
}

bool glob_match(const char *pat, size_t plen, const char *s, size_t slen, bool nocase) {
    bool give_up = false;
    return glob_impl((const signed char *)pat, plen, (const signed char *)s, slen, nocase,
                     &give_up);
}
