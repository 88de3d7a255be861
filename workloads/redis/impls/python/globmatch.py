"""Glob-style matching of keys (KEYS, SCAN MATCH, CONFIG GET) with redis's rules.

redis's stringmatchlen: `*` any run of bytes, `?` one byte, `[abc]`, `[^abc]`, `[a-z]` (a
reversed range is swapped), `\\x` a literal x, inside brackets too. Its quirks are kept: an
unterminated `[` matches as if the bracket were closed at the end of the pattern, a trailing
`\\` is a literal backslash, and range bounds compare as C's signed `char`, so bytes 0x80-0xFF
sort below 0x00.

Patterns without any special byte are compared for equality; `*` alone is handled by the
callers. Everything else runs the matcher below, whose `*` gives up early (as redis does
since 7.0.9) once the rest of the pattern has failed at every position, so a pattern with
many stars cannot take exponential time.
"""

from __future__ import annotations

from collections.abc import Callable

_SPECIAL = b"*?[\\"


def compile_pattern(pattern: bytes) -> Callable[[bytes], bool]:
    """A predicate telling whether a key matches pattern."""
    if not any(c in pattern for c in _SPECIAL):
        return pattern.__eq__
    prefix = pattern[:-1]
    if prefix and pattern.endswith(b"*") and not any(c in prefix for c in _SPECIAL):
        return lambda key: key.startswith(prefix)
    return lambda key: match(pattern, key)


def match(pattern: bytes, string: bytes) -> bool:
    return _match(pattern, 0, string, 0, [False])


def _signed(byte: int) -> int:
    return byte - 256 if byte >= 128 else byte


def _match(p: bytes, pi: int, s: bytes, si: int, give_up: list[bool]) -> bool:
    plen = len(p)
    slen = len(s)
    while pi < plen and si < slen:
        c = p[pi]
        if c == 42:  # *
            while pi + 1 < plen and p[pi + 1] == 42:
                pi += 1
            if pi + 1 == plen:
                return True
            while si < slen:
                if _match(p, pi + 1, s, si, give_up):
                    return True
                if give_up[0]:
                    return False
                si += 1
            give_up[0] = True
            return False
        elif c == 63:  # ?
            si += 1
        elif c == 91:  # [
            pi += 1
            negate = pi < plen and p[pi] == 94  # ^
            if negate:
                pi += 1
            matched = False
            ch = s[si]
            while True:
                if pi < plen and p[pi] == 92 and plen - pi >= 2:  # \x inside brackets
                    pi += 1
                    if p[pi] == ch:
                        matched = True
                elif pi < plen and p[pi] == 93:  # ]
                    break
                elif pi >= plen:  # unterminated: the pattern ends here
                    pi -= 1
                    break
                elif plen - pi >= 3 and p[pi + 1] == 45:  # a-z
                    start, end = _signed(p[pi]), _signed(p[pi + 2])
                    if start > end:
                        start, end = end, start
                    pi += 2
                    if start <= _signed(ch) <= end:
                        matched = True
                elif p[pi] == ch:
                    matched = True
                pi += 1
            if negate:
                matched = not matched
            if not matched:
                return False
            si += 1
        elif c == 92 and plen - pi >= 2:  # \x: x literally
            pi += 1
            if p[pi] != s[si]:
                return False
            si += 1
        else:
            if c != s[si]:
                return False
            si += 1
        pi += 1
        if si == slen:
            while pi < plen and p[pi] == 42:
                pi += 1
            break
    return pi == plen and si == slen
