// redis's glob-style pattern matching (KEYS, SCAN MATCH, CONFIG GET patterns).
#pragma once

#include <string_view>

namespace redis {

// redis's glob matcher (stringmatchlen): *, ?, [abc], [^a], [a-z], \x escapes.
bool glob_match(std::string_view pattern, std::string_view s, bool nocase = false);

} // namespace redis
