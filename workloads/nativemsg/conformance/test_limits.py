"""SPEC §1/§3 size rules: the 1 MiB reply cap, the 64 MiB request cap and its length check."""

from __future__ import annotations

import pytest
from checks import PING, assert_echo, assert_error_reply, assert_pong, echo_body
from hostproc import MAX_REPLY, MAX_REQUEST, header

# ------------------------------------------------------------------------------ reply cap


def test_echo_over_reply_cap_gets_error(host):
    """Echo of a 2 MiB string would need a 2 MiB reply: the host must send an error reply
    instead (Chromium drops the port at 1,048,577 bytes) and keep serving.
    Catches: no reply cap at all, a cap checked against the wrong number, a host that exits
    or goes silent instead of answering."""
    data = b'"' + b"a" * (2 * MAX_REPLY) + b'"'
    assert_error_reply(host.request(echo_body(data)), "echo of a 2 MiB string")
    assert_pong(host.request(PING), "ping after the refused 2 MiB echo")


def test_echo_just_under_reply_cap(host):
    """Echo of a 1,000,000-byte string (reply ≈ 1,000,025 bytes, under 1 MiB) is answered.
    Catches: a cap set too low (1,000,000, 64 KiB, a fixed-size reply buffer) or applied to
    the request instead of the reply."""
    data = b'"' + b"b" * 1_000_000 + b'"'
    assert_echo(host.request(echo_body(data)), data)


def test_reply_cap_applies_to_the_serialised_reply(host):
    """Echo of 300,000 '<' (a 300 KB request): a serialiser that escapes '<' as \\u003c
    (Go's default) would make a 1.8 MB reply. Either a correct echo within 1 MiB or an error
    reply is right; a reply frame over 1 MiB is not (read_frame rejects it).
    Catches: a cap checked on the request size or the data's length before serialising."""
    data = b'"' + b"<" * 300_000 + b'"'
    reply = host.request(echo_body(data))
    if "error" in reply:
        assert_error_reply(reply, "echo whose serialised reply may exceed 1 MiB")
    else:
        assert_echo(reply, data)
    assert_pong(host.request(PING))


# ------------------------------------------------------------------------------ length prefix


@pytest.mark.parametrize(
    "length",
    [MAX_REQUEST + 1, 2**31, 2**32 - 1, 2**31 + 23],
    ids=["64MiB+1", "2^31", "2^32-1", "2^31+23"],
)
def test_oversized_length_prefix_exits_at_once(host, length):
    """A length prefix above 64 MiB: a clear stderr message and exit status 1 AT ONCE — only
    the 4-byte header is sent and stdin stays OPEN, so a host that waits for (or allocates and
    reads) the claimed body hangs and fails here. Nothing may appear on stdout.
    Catches: no cap before reading the body, a signed 32-bit length (2^31 reads as negative
    and slips under `n > cap`), a big-endian read of the prefix (64 MiB + 1 read big-endian
    is 16 MiB: under the cap, so the host waits), an 8-byte length read (waits for 4 more
    bytes), an allocation of 4 GiB that crashes, a panic instead of a message."""
    host.send(header(length))
    rc = host.wait_exit(why=f"a {length}-byte length prefix (stdin left open)")
    host.assert_no_crash()
    assert rc == 1, f"length prefix {length}: exit status must be 1 {host.describe()}"
    assert host.stderr_text().strip(), "no message on stderr about the oversized length"
    assert host.transcript == b"", f"stdout must stay empty, got {bytes(host.transcript[:80])!r}"


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_request_of_exactly_64_mib_is_answered(host):
    """A ping whose body is exactly 67,108,864 bytes (a huge padding member) → pong, and the
    host keeps serving. Catches: a cap off by one (`>=` instead of `>`), a fixed input buffer
    below 64 MiB, a 64 MiB read done as one read() call that returns short."""
    prefix = b'{"op":"ping","pad":"'
    body = prefix + b"p" * (MAX_REQUEST - len(prefix) - 2) + b'"}'
    assert len(body) == MAX_REQUEST
    host.send_frame(body, timeout=60)
    assert_pong(host.read_reply(timeout=60), "64 MiB ping")
    assert_pong(host.request(PING), "ping after the 64 MiB request")
