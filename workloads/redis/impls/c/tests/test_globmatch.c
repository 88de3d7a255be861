/* Unit tests of globmatch.c: redis's glob matching. */
#include "check.h"
#include "globmatch.h"

#include <string.h>

static bool m(const char *pat, const char *s) {
    return glob_match(pat, strlen(pat), s, strlen(s), false);
}

static void test_glob(void) {
    /* As redis's matcher: "*" never matches the empty string (KEYS * has its own shortcut). */
    CHECK(!m("*", "") && m("*", "abc") && m("**", "abc") && m("a*", "a"));
    CHECK(m("h?llo", "hello") && !m("h?llo", "hllo"));
    CHECK(m("h*llo", "hllo") && m("h*llo", "heeeello"));
    CHECK(m("h[ae]llo", "hallo") && !m("h[ae]llo", "hillo"));
    CHECK(m("h[^e]llo", "hallo") && !m("h[^e]llo", "hello"));
    CHECK(m("h[a-b]llo", "hbllo") && m("h[b-a]llo", "hallo"));
    CHECK(m("a\\*b", "a*b") && !m("a\\*b", "axb"));
    CHECK(m("a[\\*]b", "a*b") && m("a[*]b", "a*b"));
    /* "a-]" is a range up to ']', which then leaves the class unclosed: nothing matches. */
    CHECK(!m("[a-]1", "a1"));
    CHECK(m("[!a]1", "a1") && m("[!a]1", "!1")); /* only '^' negates */
    CHECK(m("a[bc", "ab") && m("a[bc", "ac"));   /* an unclosed class ends the pattern */
    CHECK(!m("a", "A") && glob_match("a", 1, "A", 1, true));
    CHECK(m("*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaab") &&
          !m("*a*a*a*a*a*a*a*a*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
}

int main(void) {
    RUN(test_glob);
    return TESTS_DONE();
}
