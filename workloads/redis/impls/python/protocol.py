"""RESP framing: the request parser and the reply encoders (RESP2, and RESP3's extra types).

Requests are either multibulk (`*N\\r\\n` then N × `$len\\r\\n<bytes>\\r\\n`) or inline (one
line split like redis's sdssplitargs). The parser turns a stream of reads into argument lists
with redis 7.0's exact semantics, quirks included: header lines end at the first `\\r` (the
byte after it is skipped unchecked), a NUL byte hides the rest of a line from the `strchr`
that looks for its end, numbers must be canonical (`string2ll`), and every limit is checked
before anything is allocated.

Parsing is where a Python server spends most of its time, so a read goes through up to three
layers, each handing over to the next where it stops:

* uniform batch (`_parse_uniform`): a pipeline of one command shape (what redis-benchmark and
  mass inserts send) is split on `\\r\\n` once and checked column by column, a few C-level
  calls per batch;
* per request (`_parse_fast`, on the same split): a multibulk request is accepted when its
  count line and every `$len` line are byte-equal to the canonical headers of the pieces that
  follow them. Equal means the bytes are exactly what the exact parser would read, so these
  shortcuts can never disagree with it. A value holding `\\r\\n`, a partial request, a
  4 KiB+ value or anything odd stops them;
* exact (`_parse_exact`): a resumable state machine written after redis's
  processMultibulkBuffer/processInlineBuffer. It keeps its state across reads, so a request
  split at any byte, or a 500 MB bulk arriving in pieces, is parsed once, without quadratic
  re-scanning or copying.
"""

from __future__ import annotations

# --- limits (redis 7.0 defaults) -------------------------------------------------------------

INLINE_MAX = 64 * 1024  # PROTO_INLINE_MAX_SIZE: a line, or a header line, without its end
BULK_MAX = 512 * 1024 * 1024  # proto-max-bulk-len
MULTIBULK_MAX = 2**31 - 1  # INT_MAX
INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1

# --- replies ---------------------------------------------------------------------------------

OK = b"+OK\r\n"
PONG = b"+PONG\r\n"
NULL_BULK = b"$-1\r\n"
NULL_ARRAY = b"*-1\r\n"
EMPTY_ARRAY = b"*0\r\n"
EMPTY_BULK = b"$0\r\n\r\n"
ZERO = b":0\r\n"
ONE = b":1\r\n"

# Pre-encoded headers: `$len` for values up to 4 KiB, `:n` for small integers. Looking one up is
# cheaper than formatting it, and most replies use one of them.
_BULK_HEADERS = [b"$%d" % n for n in range(4096)]
_INTEGERS = [b":%d\r\n" % n for n in range(1024)]


def integer(n: int) -> bytes:
    """`:n\\r\\n`."""
    if 0 <= n < 1024:
        return _INTEGERS[n]
    return b":%d\r\n" % n


def bulk(value: bytes) -> bytes:
    """`$len\\r\\n<value>\\r\\n`."""
    return b"$%d\r\n%s\r\n" % (len(value), value)


def bulk_array(items) -> bytes:
    """An array of bulk strings, built with C-level joins rather than a format per item.

    When every item has the same length (list ranges, set members of one width, ...) the
    whole reply is a single join with one separator `\r\n$len\r\n`."""
    n = len(items)
    if not n:
        return EMPTY_ARRAY
    lengths = list(map(len, items))
    try:
        if lengths.count(lengths[0]) == n:
            header = _BULK_HEADERS[lengths[0]]
            return b"*%d\r\n%s\r\n%s\r\n" % (
                n,
                header,
                (b"\r\n" + header + b"\r\n").join(items),
            )
        headers = _BULK_HEADERS
        item_headers = [headers[x] for x in lengths]
    except IndexError:  # an item of 4 KiB or more
        item_headers = [b"$%d" % x for x in lengths]
    parts = [None] * (2 * n + 2)
    parts[0] = b"*%d" % n
    parts[1:-1:2] = item_headers
    parts[2:-1:2] = items
    parts[-1] = b""
    return b"\r\n".join(parts)


def nullable_bulk_array(items, null: bytes = NULL_BULK) -> bytes:
    """An array whose None items are nulls (MGET, HMGET)."""
    out = [b"*%d\r\n" % len(items)]
    for x in items:
        out.append(null if x is None else b"$%d\r\n%s\r\n" % (len(x), x))
    return b"".join(out)


# --- RESP3 (after HELLO 3) ---------------------------------------------------------------
# RESP3 adds types to what RESP2 sends as bulk strings and flat arrays: `_` null, `,` double,
# `%` map, `~` set, `=` verbatim string. Handlers choose by the client's `resp`; the common
# nulls are the client's `null`/`null_array` attributes, so RESP2 pays nothing for this.

NULL3 = b"_\r\n"
EMPTY_MAP3 = b"%0\r\n"
EMPTY_SET3 = b"~0\r\n"


def double(value: float, resp: int) -> bytes:
    """A score: `%.17g` as a bulk string in RESP2, a double in RESP3."""
    text = format_double(value)
    if resp == 3:
        return b",%s\r\n" % text
    return b"$%d\r\n%s\r\n" % (len(text), text)


def map_reply(flat, resp: int) -> bytes:
    """key, value, key, value...: a flat array in RESP2, a map in RESP3."""
    reply = bulk_array(flat)
    if resp == 3:
        return b"%%%d\r\n%s" % (len(flat) // 2, reply[reply.index(b"\r\n") + 2 :])
    return reply


def set_reply(items, resp: int) -> bytes:
    """Set members: an array in RESP2, a set in RESP3."""
    reply = bulk_array(items)
    if resp == 3:
        return b"~%d\r\n%s" % (len(items), reply[reply.index(b"\r\n") + 2 :])
    return reply


def verbatim(text: bytes, resp: int) -> bytes:
    """Human-readable text (INFO, CLIENT LIST): a bulk string, or RESP3's verbatim `txt`."""
    if resp == 3:
        return b"=%d\r\ntxt:%s\r\n" % (len(text) + 4, text)
    return b"$%d\r\n%s\r\n" % (len(text), text)


def error(message: bytes) -> bytes:
    """An error reply as redis's addReplyErrorFormat builds it: `-ERR ` unless the message
    has its own code, trailing CR/LF trimmed, CR/LF inside turned into spaces."""
    message = message.rstrip(b"\r\n").replace(b"\r", b" ").replace(b"\n", b" ")
    if not message.startswith(b"-"):
        message = b"-ERR " + message
    return message + b"\r\n"


def c_string(arg: bytes) -> bytes:
    """What C's `%s` prints of an argument: everything before its first NUL byte."""
    nul = arg.find(b"\0")
    return arg if nul < 0 else arg[:nul]


def format_double(value: float) -> bytes:
    """A double as redis 7.0 replies it in RESP2: `%.17g`, with `inf`/`-inf` spelled out."""
    if value != value + 1.0 or value == 0.0:  # finite (or zero): the common case
        return b"%.17g" % value
    if value == float("inf"):
        return b"inf"
    if value == float("-inf"):
        return b"-inf"
    return b"%.17g" % value  # huge finite values where v + 1 == v


# --- parsing helpers -------------------------------------------------------------------------


def parse_int64(text: bytes) -> int | None:
    """redis's string2ll: the canonical decimal spelling of a signed 64-bit integer, nothing
    else (no sign `+`, no spaces, no leading zeros, no `-0`). None when it is not one."""
    if len(text) > 20:
        return None
    try:
        value = int(text)
    except ValueError:
        return None
    if b"%d" % value != text or not INT64_MIN <= value <= INT64_MAX:
        return None
    return value


class ProtocolError(Exception):
    """A request the server cannot frame: reply with this error, then close the connection."""

    def __init__(self, message: bytes):
        super().__init__(message)
        self.reply = b"-ERR Protocol error: " + message + b"\r\n"


# Canonical count lines the fast path accepts (`*0`, `*-1` are valid and mean "no request").
_COUNT_LINES = {b"*%d" % n: n for n in range(-1, 1024)}
_count_of = _COUNT_LINES.get


def split_inline(line: bytes) -> list[bytes] | None:
    """redis's sdssplitargs: split an inline request on blanks, honouring "double" quotes
    (with \\n \\r \\t \\b \\a \\xHH and \\<any> escapes) and 'single' quotes (with \\').
    None for unbalanced quotes, or a closing quote not followed by a blank.

    Like the C original, a NUL byte ends the line; blanks before an argument are the C
    locale's isspace set, but an unquoted argument ends only at space, \\n, \\r or \\t (so
    `a\\vb` is one argument)."""
    nul = line.find(b"\0")
    if nul >= 0:
        line = line[:nul]
    if b'"' in line or b"'" in line:
        return _split_quoted(line)
    args = []
    for word in line.translate(_TERMINATORS_TO_SPACE).split(b" "):
        if word[:1] in _VT_FF:
            word = word.lstrip(b"\x0b\x0c")
        if word:
            args.append(word)
    return args


_TERMINATORS_TO_SPACE = bytes.maketrans(b"\t\r\n", b"   ")
_VT_FF = (b"\x0b", b"\x0c")
_SPACES = b" \t\n\r\x0b\x0c"
_ESCAPES = {ord("n"): 10, ord("r"): 13, ord("t"): 9, ord("b"): 8, ord("a"): 7}
_HEX = b"0123456789abcdefABCDEF"


def _split_quoted(line: bytes) -> list[bytes] | None:
    args: list[bytes] = []
    n = len(line)
    i = 0
    while True:
        while i < n and line[i] in _SPACES:
            i += 1
        if i >= n:
            return args
        current = bytearray()
        in_double = in_single = False
        while True:
            c = line[i] if i < n else 0
            if in_double:
                if (
                    c == 92  # backslash
                    and i + 3 < n + 0
                    and line[i + 1] == 120  # x
                    and line[i + 2] in _HEX
                    and line[i + 3] in _HEX
                ):
                    current.append(int(line[i + 2 : i + 4], 16))
                    i += 3
                elif c == 92 and i + 1 < n:
                    i += 1
                    current.append(_ESCAPES.get(line[i], line[i]))
                elif c == 34:  # closing "
                    if i + 1 < n and line[i + 1] not in _SPACES:
                        return None
                    i += 1
                    break
                elif i >= n:
                    return None
                else:
                    current.append(c)
            elif in_single:
                if c == 92 and i + 1 < n and line[i + 1] == 39:
                    i += 1
                    current.append(39)
                elif c == 39:  # closing '
                    if i + 1 < n and line[i + 1] not in _SPACES:
                        return None
                    i += 1
                    break
                elif i >= n:
                    return None
                else:
                    current.append(c)
            elif i >= n or c in b" \n\r\t":
                if i < n:
                    i += 1
                break
            elif c == 34:
                in_double = True
            elif c == 39:
                in_single = True
            else:
                current.append(c)
            i += 1
        args.append(bytes(current))


class RequestParser:
    """Turns the bytes of one connection into requests (argument lists).

    `feed(data, limit)` returns the complete requests found, at most `limit` of them; the rest
    stay buffered (`ready` tells) and come out of the next call, which may be `feed(b"")`.
    A framing error is kept in `error` after the requests before it have been returned: the
    caller answers those, then sends `error.reply` and closes the connection.
    """

    __slots__ = ("_chunks", "_have", "_need", "_base", "_argv", "_left", "_bulk_len", "error")

    def __init__(self) -> None:
        self._chunks: list[bytes] = []  # unparsed bytes, joined only once enough has arrived
        self._have = 0  # bytes in _chunks
        self._need = 0  # bytes _chunks must hold before parsing can make progress (0: now)
        self._base = 0  # stream offset of the first unparsed byte (for the line limits)
        self._argv: list[bytes] | None = None  # arguments of a multibulk request in progress
        self._left = 0  # arguments it still expects
        self._bulk_len = -1  # length of the bulk being read, -1 while reading its header
        self.error: ProtocolError | None = None

    @property
    def ready(self) -> bool:
        """Whether buffered bytes may hold more requests (the last feed stopped at limit)."""
        return self._have > 0 and self._need == 0 and self.error is None

    def feed(self, data: bytes, limit: int) -> list[list[bytes]]:
        if self.error is not None:
            return []
        if self._chunks:
            if data:
                self._chunks.append(data)
                self._have += len(data)
            if self._have < self._need:
                return []
            data = b"".join(self._chunks)
            self._chunks = []
            self._have = 0
        elif not data:
            return []
        requests: list[list[bytes]] = []
        pos = 0
        if self._argv is None:
            pos = self._parse_fast(data, requests, limit)
        if pos < len(data) and len(requests) < limit:
            try:
                pos = self._parse_exact(data, pos, requests, limit)
            except ProtocolError as e:
                self.error = e
                return requests
        self._base += pos
        rest = len(data) - pos
        if rest:
            self._chunks = [data[pos:] if pos else data]
            self._have = rest
            if len(requests) >= limit:
                self._need = 0
            elif self._bulk_len >= 0:
                self._need = self._bulk_len + 2  # the tail starts at the bulk's first byte
            else:
                self._need = rest + 1
        return requests

    def _parse_fast(self, data: bytes, requests: list, limit: int) -> int:
        """Parse whole canonical requests; return the offset where the exact parser resumes.

        Each `$len` line is checked against the length of the piece after it by comparing it
        with the pre-encoded header for that length (an IndexError means 4 KiB or more: the
        exact parser handles it). Requests of one to three arguments, nearly all of them,
        are unrolled: tuple unpacking is much cheaper than building lists to compare."""
        lines = data.split(b"\r\n")
        last = len(lines) - 1  # lines[last] has no \r\n after it: never a complete line
        # Every request takes at least one line, so stopping after `limit` lines bounds the
        # requests too, at the price of one comparison per request.
        stop = min(last, limit - len(requests))
        i = _parse_uniform(lines, stop, requests)
        headers = _BULK_HEADERS
        append = requests.append
        try:
            while i < stop:
                count = _count_of(lines[i])
                if count == 3:
                    end = i + 7
                    if end > last:
                        break
                    h1, a1, h2, a2, h3, a3 = lines[i + 1 : end]
                    if h1 != headers[len(a1)] or h2 != headers[len(a2)] or h3 != headers[len(a3)]:
                        break
                    append([a1, a2, a3])
                elif count == 2:
                    end = i + 5
                    if end > last:
                        break
                    h1, a1, h2, a2 = lines[i + 1 : end]
                    if h1 != headers[len(a1)] or h2 != headers[len(a2)]:
                        break
                    append([a1, a2])
                elif count == 1:
                    end = i + 3
                    if end > last:
                        break
                    h1, a1 = lines[i + 1 : end]
                    if h1 != headers[len(a1)]:
                        break
                    append([a1])
                elif count is not None:
                    if count <= 0:  # `*0` and `*-1`: nothing to run
                        i += 1
                        continue
                    end = i + 1 + 2 * count
                    if end > last:
                        break
                    args = lines[i + 2 : end : 2]
                    j = i + 1
                    for arg in args:
                        if lines[j] != headers[len(arg)]:
                            break
                        j += 2
                    else:
                        append(args)
                        i = end
                        continue
                    break
                else:
                    line = lines[i]
                    if line.isalnum():  # the usual inline request: one word (PING)
                        append([line])
                    elif not line:  # an empty line is ignored
                        pass
                    elif (
                        line[0] == 42  # `*` but not a small canonical count
                        or len(line) > INLINE_MAX
                        or b"\n" in line
                        or b"\0" in line
                    ):
                        break
                    else:
                        args = split_inline(line)
                        if args is None:
                            break
                        if args:
                            append(args)
                    end = i + 1
                i = end
        except IndexError:  # a bulk of 4 KiB or more
            pass
        if i == 0:
            return 0
        if i == last:
            return len(data) - len(lines[last])
        return sum(map(len, lines[:i])) + 2 * i

    def _parse_exact(self, data: bytes, pos: int, requests: list, limit: int) -> int:
        """redis's processInputBuffer, one step at a time; returns the offset parsed up to."""
        n = len(data)
        while pos < n:
            argv = self._argv
            if argv is None:
                if len(requests) >= limit:
                    return pos
                if data[pos] != 42:  # not `*`: an inline request
                    nl = _find_before_nul(data, b"\n", pos)
                    if self._line_too_long(data, pos, nl):
                        raise ProtocolError(b"too big inline request")
                    if nl < 0:
                        return pos
                    end = nl - 1 if nl > pos and data[nl - 1] == 13 else nl
                    args = split_inline(data[pos:end])
                    if args is None:
                        raise ProtocolError(b"unbalanced quotes in request")
                    pos = nl + 1
                    if args:
                        requests.append(args)
                    continue
                cr = _find_before_nul(data, b"\r", pos)
                if self._line_too_long(data, pos, cr):
                    raise ProtocolError(b"too big mbulk count string")
                if cr < 0 or cr + 1 >= n:  # redis also waits for the byte after \r
                    return pos
                count = parse_int64(data[pos + 1 : cr])
                if count is None or count > MULTIBULK_MAX:
                    raise ProtocolError(b"invalid multibulk length")
                pos = cr + 2
                if count <= 0:
                    continue
                # The argument list grows as arguments arrive: never `count` slots up front.
                self._argv = argv = []
                self._left = count
            if self._bulk_len < 0:  # a `$len` header
                cr = _find_before_nul(data, b"\r", pos)
                if self._line_too_long(data, pos, cr):
                    raise ProtocolError(b"too big bulk count string")
                if cr < 0 or cr + 1 >= n:
                    return pos
                if data[pos] != 36:  # `$`
                    raise ProtocolError(_expected_dollar(data[pos]))
                length = parse_int64(data[pos + 1 : cr])
                if length is None or not 0 <= length <= BULK_MAX:
                    raise ProtocolError(b"invalid bulk length")
                pos = cr + 2
                self._bulk_len = length
            length = self._bulk_len
            if n - pos < length + 2:
                return pos  # feed() asks for the whole bulk before the next try
            argv.append(data[pos : pos + length])
            pos += length + 2  # redis skips the two bytes after a bulk without looking
            self._bulk_len = -1
            self._left -= 1
            if not self._left:
                requests.append(argv)
                self._argv = None
        return pos

    def _line_too_long(self, data: bytes, start: int, end: int) -> bool:
        """Whether redis would reject the line at `start` (ending at `end`, -1 if unseen) for
        having more than 64 KiB without its end.

        redis checks after each read, and reads 16 KiB at a time: it fails a line when a read
        leaves over 64 KiB of it buffered with no end in sight. So a 70 KB line that arrives
        whole is accepted (the read that crosses 64 KiB brings its end) and a 90 KB one is not.
        The same reads are modelled here on stream offsets, whatever our own reads were."""
        if end >= 0 and end - start <= INLINE_MAX:
            return False
        line_start = self._base + start
        boundary = ((line_start + INLINE_MAX) // _READ_SIZE + 1) * _READ_SIZE
        if end >= 0:
            return self._base + end >= boundary
        seen = self._base + len(data)
        return seen >= boundary or seen - line_start > INLINE_MAX


def _parse_uniform(lines: list[bytes], stop: int, requests: list) -> int:
    """Parse a run of requests that all have the same argument count, as a pipeline of one
    command has, column by column: a few C-level calls per batch instead of bytecode per
    request. Returns the number of lines consumed (0 when the batch is not such a run).

    With `period` lines per request, lines[0::period] are the count lines, and for argument
    k lines[2k+2::period] are the values and lines[2k+1::period] their `$len` headers. Every
    header is checked against its value's length exactly as in the per-request loop, so the
    result is the same; any mismatch leaves the whole batch to that loop."""
    first = lines[0]
    count = _count_of(first)
    if count is None or count <= 0:
        return 0
    period = 1 + 2 * count
    n = stop // period
    if n < 2:
        return 0
    end = n * period
    if lines[0:end:period].count(first) != n:
        return 0
    columns = []
    headers = _BULK_HEADERS
    try:
        for k in range(1, 2 * count, 2):
            values = lines[k + 1 : end : period]
            column_headers = lines[k:end:period]
            # A column of one value (the command name always) or of one length is checked
            # with two C-level counts; any other column one header at a time.
            first = values[0]
            if values.count(first) == n:
                if column_headers.count(headers[len(first)]) != n:
                    return 0
            else:
                lengths = list(map(len, values))
                if lengths.count(lengths[0]) == n:
                    if column_headers.count(headers[lengths[0]]) != n:
                        return 0
                elif [headers[x] for x in lengths] != column_headers:
                    return 0
            columns.append(values)
    except IndexError:  # a bulk of 4 KiB or more
        return 0
    requests.extend(zip(*columns, strict=True))
    return end


_READ_SIZE = 16 * 1024  # PROTO_IOBUF_LEN: redis's read size


def _find_before_nul(data: bytes, byte: bytes, start: int) -> int:
    """`strchr(data + start, byte)`: the first `byte` at or after start, or -1 when a NUL byte
    (which ends a C string) comes first."""
    at = data.find(byte, start)
    if at < 0:
        return -1
    nul = data.find(b"\0", start, at)
    return at if nul < 0 else -1


def _expected_dollar(byte: int) -> bytes:
    """The message for a bulk header that is not `$`: the byte as `%c`, CR/LF made spaces.
    (It is never NUL: a NUL there hides the header's end, and the parser waits.)"""
    if byte in (10, 13):
        byte = 32
    return b"expected '$', got '%c'" % byte
