"""SPEC §1/§3: stdout carries frames and nothing else — 4-byte little-endian byte counts — and
every reply is flushed before the next request is read."""

from __future__ import annotations

import signal
import struct

from checks import PING, assert_echo, assert_pong, echo_body
from hostproc import CRASH_SIGNATURES, MAX_REPLY, describe_length_prefix, frame
from jsoneq import NotJSON, loads, parse_reply, preview

UNICODE_DATA = '"é € 😀 中 ü"'.encode()  # 9 characters in the string, 18 bytes of UTF-8


def split_frames(stream: bytes) -> list[bytes]:
    """Cut a whole stdout capture into frame bodies, exactly as a browser reads it, or fail
    saying where and how the stream stops being frames."""
    bodies = []
    pos = 0
    while pos < len(stream):
        where = f"frame {len(bodies) + 1} at stdout offset {pos}"
        if len(stream) - pos < 4:
            raise AssertionError(
                f"{where}: {len(stream) - pos} stray bytes after the last frame: {stream[pos:]!r}"
            )
        prefix = stream[pos : pos + 4]
        n = struct.unpack("<I", prefix)[0]
        if n > MAX_REPLY:
            raise AssertionError(
                f"{where}: {describe_length_prefix(prefix, stream[pos + 4 : pos + 24])}; "
                f"stdout starts {preview(stream[pos:], 60)}"
            )
        if pos + 4 + n > len(stream):
            raise AssertionError(
                f"{where}: length prefix says {n} bytes but only {len(stream) - pos - 4} follow "
                f"(a length that counts characters, not bytes, or a reply cut short?)"
            )
        body = stream[pos + 4 : pos + 4 + n]
        try:
            value = loads(body)
        except NotJSON as e:
            raise AssertionError(
                f"{where}: body is not JSON ({e}): {preview(body)}; a misplaced frame boundary "
                "means the previous length was wrong (8-byte, big-endian or character count) "
                "or something else was written to stdout"
            ) from None
        assert isinstance(value, dict), f"{where}: body is not a JSON object: {preview(body)}"
        bodies.append(body)
        pos += 4 + n
    return bodies


def test_stdout_is_only_frames(host):
    """A session of good and bad requests, then EOF; the WHOLE stdout capture must cut into
    exactly one frame per request, each length prefix equal to its body's BYTE count, each
    body a JSON object, nothing before, between or after.

    How this catches the framing bugs: the capture is read exactly as a browser reads it, 4
    bytes of length, then that many bytes. An 8-byte length leaves four zero bytes at the
    start of every "body" (not JSON); a big-endian length reads as a length of hundreds of
    MB (over the cap); a character count instead of a byte count ends the body too early
    and starts the next frame in the middle of the JSON; a log line or banner on stdout is
    read as a nonsense length. Any of those fails here."""
    requests = [
        PING,
        echo_body(UNICODE_DATA),
        b"\xff\xfe",
        b"",
        b"[1,2]",
        b'{"op":"frob"}',
        b'{"op":"fill","bytes":100}',
        echo_body(b'{"k":["\\u00e9\\ud83d\\ude00",1e300,null]}'),
        PING,
    ]
    for body in requests:
        host.send_frame(body)
        host.read_reply()  # one at a time: each reply awaited, as a browser's caller does
    rc = host.finish()
    host.assert_no_crash()
    assert rc == 0, f"exit status after EOF must be 0 {host.describe()}"
    frames = split_frames(bytes(host.transcript))
    assert len(frames) == len(requests), (
        f"{len(requests)} requests got {len(frames)} reply frames: exactly one reply each"
    )


def test_reply_length_prefix_is_4_byte_little_endian(host):
    """One ping, stdin closed, the raw stdout inspected: it must be exactly
    <u32 little-endian n><n bytes of JSON>. Closing stdin first isolates the framing from
    flushing. Catches, by name: an 8-byte length (Rust usize / C size_t written whole — the
    bug that started this lab), a big-endian (network order) length, a length that does not
    match the body."""
    host.send_frame(PING)
    rc = host.finish()
    out = bytes(host.transcript)
    assert len(out) >= 4, f"expected one reply frame on stdout, got {out!r} {host.describe()}"
    n_le32 = struct.unpack("<I", out[:4])[0]
    if n_le32 != len(out) - 4:
        if len(out) >= 8 and struct.unpack("<Q", out[:8])[0] == len(out) - 8:
            raise AssertionError(f"8-byte length prefix: {out!r} — the length must be 4 bytes")
        if struct.unpack(">I", out[:4])[0] == len(out) - 4:
            raise AssertionError(f"big-endian length prefix: {out!r} — it must be little-endian")
        raise AssertionError(
            f"stdout is not one frame (len {n_le32}, {len(out) - 4} bytes follow): {out!r}"
        )
    assert_pong(parse_reply(out[4:], host.describe), "the raw reply")
    assert rc == 0, f"exit status after EOF must be 0 {host.describe()}"


def test_reply_length_counts_bytes_not_characters(host):
    """Echo of "é € 😀 中 ü" (9 characters, 18 bytes of UTF-8), stdin closed, the raw stdout
    inspected: the length prefix must equal the body's byte count.
    Catches: a length taken from a string's character count (Python len(str), JS-like
    length, Go len([]rune)) or UTF-16 code units."""
    host.send_frame(echo_body(UNICODE_DATA))
    host.finish()
    out = bytes(host.transcript)
    assert len(out) >= 4, f"expected one reply frame on stdout, got {out!r} {host.describe()}"
    n = struct.unpack("<I", out[:4])[0]
    body = out[4:]
    if n != len(body):
        chars = len(body.decode("utf-8", "replace"))
        hint = " — it counts characters, not bytes" if n == chars else ""
        raise AssertionError(f"length prefix {n}, body is {len(body)} bytes{hint}: {out!r}")
    assert_echo(parse_reply(body, host.describe), UNICODE_DATA)


def test_each_reply_flushed_before_next_request(host):
    """100 request/reply round trips on one connection, each reply awaited with stdin still
    OPEN (as connectNative does). Catches: replies left in a stdio/BufWriter/bufio buffer
    (C stdio on a pipe is fully buffered, Python's sys.stdout too, Rust's stdout() is
    line-buffered so a frame without a newline stays put), which hang the caller."""
    for i in range(100):
        if i % 2:
            assert_pong(host.request(PING), f"round trip {i}")
        else:
            data = b'{"i":%d,"s":"%s"}' % (i, b"y" * (i * 37))
            assert_echo(host.request(echo_body(data)), data)


def test_large_reply_flushed_whole(host):
    """A 700 KB echo reply must arrive complete while stdin stays open.
    Catches: a writer that flushes only its first buffer-full, or writes a large reply with
    one write() and ignores a short count."""
    data = b'"' + b"z" * 700_000 + b'"'
    assert_echo(host.request(echo_body(data)), data)
    host.send(frame(PING))
    assert_pong(host.read_reply(), "ping after a large reply")


def test_reader_gone_ends_the_host_cleanly(host):
    """The reader closes its end of stdout while stdin stays open; the host's next reply fails
    to write. SPEC §3: a write error ends the host with status 1 and a message, at once and
    without a panic or traceback. Death by SIGPIPE (the default disposition a browser's
    child starts with) is the platform's way of reporting the same error and is accepted.
    Catches: Python's BrokenPipeError traceback, a Rust panic on EPIPE (println!/unwrap),
    a host that ignores the failed write and keeps reading (it never exits: stdin is open),
    a retry loop that spins on EPIPE."""
    assert_pong(host.request(PING))
    host.close_stdout()
    host.send_frame(PING)
    rc = host.wait_exit(why="its stdout reader went away (stdin left open)")
    assert rc in (1, -signal.SIGPIPE), (
        f"a write error must end the host with status 1 (or SIGPIPE) {host.describe()}"
    )
    err = host.stderr_text()
    for sig in CRASH_SIGNATURES:
        assert sig not in err, f"crash signature {sig!r} on stderr {host.describe()}"
