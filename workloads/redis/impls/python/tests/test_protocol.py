"""protocol: the request parser (fast and exact paths must agree, at any split), its limits
and error messages (redis 7.0.15's), inline splitting, and the reply encoders."""

import pytest
from redis_impl.protocol import (
    INLINE_MAX,
    RequestParser,
    bulk_array,
    format_double,
    parse_int64,
    split_inline,
)


def command(*args) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        a = a if isinstance(a, bytes) else str(a).encode()
        out.append(b"$%d\r\n%s\r\n" % (len(a), a))
    return b"".join(out)


def parse(*chunks: bytes, limit: int = 1 << 30):
    """Feed the chunks; (requests as lists, error reply or None)."""
    parser = RequestParser()
    requests = []
    for chunk in chunks:
        requests += parser.feed(chunk, limit)
        while parser.ready:
            requests += parser.feed(b"", limit)
        if parser.error:
            break
    return [list(r) for r in requests], (parser.error.reply if parser.error else None)


STREAMS = [
    command("SET", "key", "value") * 3,
    command("GET", "a") + command("SET", "b", "c") + command("PING"),
    b"PING\r\n" * 5 + command("ECHO", "x") + b"ECHO a b\r\n",
    command("SET", "k", b"a\r\nb\r\n$1\r\n") + command("GET", "k"),  # CRLF inside values
    command("SET", "big", b"x" * 5000) + command("GET", "big"),  # past the header table
    command("MSET", *[f"k{i}" for i in range(40)]) + command("DEL", "k1"),
    b"*0\r\n*-1\r\n\r\n\r\nPING\r\n",
    b'SET "a b" \'c d\'\r\nECHO "\\x41\\n"\r\n',
    command(*["HSET", "h"] + ["f", "v"] * 3) * 4 + command("HGET", "h", "f"),
    command("ECHO", b"") * 3,
    b"*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$3\r\nabc\r\n",
]


@pytest.mark.parametrize("stream", STREAMS, ids=range(len(STREAMS)))
def test_every_split_gives_the_same_requests(stream):
    whole = parse(stream)
    assert whole[1] is None and whole[0]
    assert parse(*[stream[i : i + 1] for i in range(len(stream))]) == whole
    for cut in range(1, len(stream)):
        assert parse(stream[:cut], stream[cut:]) == whole, cut


def test_values_are_binary_safe():
    value = bytes(range(256)) + b"\r\n\r\n*1\r\n$4\r\nPING\r\n"
    assert parse(command("SET", b"\x00\r\n", value)) == ([[b"SET", b"\x00\r\n", value]], None)


def test_uniform_pipeline_and_mixed_tail():
    stream = command("SET", "a", "1") * 100 + command("GET", "a") + b"*2\r\n$3\r\nGET"
    requests, err = parse(stream)
    assert err is None
    assert requests == [[b"SET", b"a", b"1"]] * 100 + [[b"GET", b"a"]]


def test_limit_leaves_the_rest_for_the_next_turn():
    parser = RequestParser()
    stream = command("PING") * 50
    first = parser.feed(stream, 10)
    assert 0 < len(first) <= 10 and parser.ready
    rest = []
    while parser.ready:
        rest += parser.feed(b"", 10)
    assert len(first) + len(rest) == 50


def test_a_big_bulk_arriving_in_pieces():
    value = b"v" * (1 << 20)
    stream = command("SET", "k", value)
    pieces = [stream[i : i + 1000] for i in range(0, len(stream), 1000)]
    assert parse(*pieces) == ([[b"SET", b"k", value]], None)


def test_requests_before_a_protocol_error_are_returned_first():
    requests, err = parse(command("PING") + b"*1\r\n+PING\r\n" + command("PING"))
    assert requests == [[b"PING"]]
    assert err == b"-ERR Protocol error: expected '$', got '+'\r\n"


@pytest.mark.parametrize(
    "stream, message",
    [
        (b"*abc\r\n", b"invalid multibulk length"),
        (b"*3000000000\r\n", b"invalid multibulk length"),
        (b"*01\r\n", b"invalid multibulk length"),
        (b"*-0\r\n", b"invalid multibulk length"),
        (b"*1\r\n+PING\r\n", b"expected '$', got '+'"),
        (b"*1\r\n\r\n", b"expected '$', got ' '"),
        (b"*2\r\n$4\r\nPING\r\n$-1\r\n", b"invalid bulk length"),
        (b"*1\r\n$536870913\r\n", b"invalid bulk length"),
        (b"*1\r\n$+4\r\nPING\r\n", b"invalid bulk length"),
        (b'"unbalanced\r\n', b"unbalanced quotes in request"),
        (b"ECHO 'a'b\r\n", b"unbalanced quotes in request"),
        (b"a" * 100_000, b"too big inline request"),
        (b"*" + b"1" * 100_000, b"too big mbulk count string"),
        (b"*1\r\n$" + b"1" * 100_000, b"too big bulk count string"),
    ],
)
def test_protocol_errors(stream, message):
    requests, err = parse(stream)
    assert requests == []
    assert err == b"-ERR Protocol error: " + message + b"\r\n"


def test_a_bulk_within_limits_is_never_allocated_up_front():
    parser = RequestParser()
    assert parser.feed(b"*1\r\n$536870912\r\nabc", 10) == []
    assert parser.error is None  # waiting for 512 MiB that will not come, holding 3 bytes


def test_long_inline_lines_follow_redis_16k_reads():
    # redis reads 16 KiB at a time and fails a line only when a read leaves more than
    # 64 KiB of it without its end: a 70 KB line arriving whole passes, a 90 KB one fails.
    assert parse(b"ECHO " + b"a" * 70_000 + b"\r\n")[1] is None
    assert parse(b"ECHO " + b"a" * 90_000 + b"\r\n")[1] is not None
    assert parse(b"a" * (INLINE_MAX + 1))[1] is not None  # nothing more is coming


def test_header_lines_end_at_cr_like_redis():
    # redis looks for \r only and skips the byte after it unchecked; NUL hides the rest.
    assert parse(b"*1\rX$4\r\nPING\r\n") == ([[b"PING"]], None)
    assert parse(b"PI\x00NG\r\n") == ([], None)  # waits, as strchr stops at the NUL


@pytest.mark.parametrize(
    "line, args",
    [
        (b"SET a b", [b"SET", b"a", b"b"]),
        (b"  PING   ", [b"PING"]),
        (b"", []),
        (b"a\x0bb \x0bc", [b"a\x0bb", b"c"]),
        (b'"a b" c', [b"a b", b"c"]),
        (b'"\\x41\\x4a\\x4" "\\t\\z"', [b"AJx4", b"\tz"]),
        (b"'it\\'s' x", [b"it's", b"x"]),
        (b"\"\" ''", [b"", b""]),
        (b'a"b c" d', [b"ab c", b"d"]),
        (b'a"b c"d', None),
        (b"PING\x00 ignored", [b"PING"]),
        (b'"a"b', None),
        (b'"open', None),
        (b"'open", None),
    ],
)
def test_split_inline(line, args):
    assert split_inline(line) == args


@pytest.mark.parametrize(
    "text, value",
    [
        (b"0", 0),
        (b"-5", -5),
        (b"9223372036854775807", 2**63 - 1),
        (b"-9223372036854775808", -(2**63)),
        (b"9223372036854775808", None),
        (b"01", None),
        (b"-0", None),
        (b"+1", None),
        (b" 1", None),
        (b"1_0", None),
        (b"", None),
    ],
)
def test_parse_int64_is_string2ll(text, value):
    assert parse_int64(text) == value


def test_bulk_array():
    assert bulk_array([]) == b"*0\r\n"
    assert bulk_array([b"a", b"bb", b""]) == b"*3\r\n$1\r\na\r\n$2\r\nbb\r\n$0\r\n\r\n"
    assert bulk_array([b"xy", b"zw"]) == b"*2\r\n$2\r\nxy\r\n$2\r\nzw\r\n"
    big = b"z" * 5000
    assert bulk_array([big, big]) == b"*2\r\n" + (b"$5000\r\n" + big + b"\r\n") * 2


@pytest.mark.parametrize(
    "value, text",
    [
        (0.1, b"0.10000000000000001"),
        (1.0, b"1"),
        (-0.0, b"-0"),
        (1e20, b"1e+20"),
        (1.5e-7, b"1.4999999999999999e-07"),
        (float("inf"), b"inf"),
        (float("-inf"), b"-inf"),
    ],
)
def test_format_double_is_percent_17g(value, text):
    assert format_double(value) == text
