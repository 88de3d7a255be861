"""globmatch: redis's stringmatchlen, quirks included."""

import pytest
from redis_impl.globmatch import compile_pattern, match


@pytest.mark.parametrize(
    "pattern, key, expected",
    [
        (b"h?llo", b"hello", True),
        (b"h?llo", b"hllo", False),
        (b"h*llo", b"hllo", True),
        (b"h*llo", b"heeeello", True),
        (b"h[ae]llo", b"hallo", True),
        (b"h[ae]llo", b"hillo", False),
        (b"h[^e]llo", b"hallo", True),
        (b"h[^e]llo", b"hello", False),
        (b"h[a-b]llo", b"hbllo", True),
        (b"h[b-a]llo", b"hbllo", True),  # a reversed range is swapped
        (b"h\\[llo", b"h[llo", True),
        (b"h[llo", b"hl", True),  # unterminated bracket: closed at the pattern's end
        (b"a\\", b"a\\", True),  # trailing backslash is literal
        (b"*", b"", False),  # stringmatchlen never matches an empty key (KEYS * special-cases it)
        (b"x*", b"xyz", True),
        (b"[\x80-\xff]", b"a", False),  # signed chars: 0x80..0xff is -128..-1
        (b"[a-\xff]", b"\x10", True),
        (b"*a*a*a*a*a*a*a*a*a*b", b"a" * 40, False),  # no exponential blow-up
    ],
)
def test_match(pattern, key, expected):
    assert match(pattern, key) is expected
    assert compile_pattern(pattern)(key) is expected
