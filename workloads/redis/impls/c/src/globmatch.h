/* redis's glob-style pattern matching (KEYS, SCAN MATCH, ...). */
#ifndef REDIS_C_GLOBMATCH_H
#define REDIS_C_GLOBMATCH_H

#include <stdbool.h>
#include <stddef.h>

/* redis's glob (stringmatchlen): *, ?, [abc], [^a], [a-z], \x; nocase folds ASCII case. */
bool glob_match(const char *pat, size_t plen, const char *s, size_t slen, bool nocase);

#endif
