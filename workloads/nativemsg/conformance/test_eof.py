"""SPEC §3 EOF rules: exit 0 at a frame boundary, exit 1 with a message inside a frame."""

from __future__ import annotations

import pytest
from checks import PING, assert_pong
from hostproc import frame, header


def assert_clean_exit(host, rc: int, what: str) -> None:
    host.assert_no_crash()
    assert rc == 0, f"EOF at a frame boundary ({what}) must exit 0 {host.describe()}"
    rest = host.unread_stdout()
    assert rest == b"", f"{what}: nothing may follow on stdout, got {rest[:80]!r}"


def assert_broken_stream_exit(host, rc: int, what: str) -> None:
    host.assert_no_crash()
    assert rc > 0, f"EOF {what}: must exit non-zero (not by a signal) {host.describe()}"
    assert rc == 1, f"EOF {what}: a broken stream exits with status 1 (SPEC §3) {host.describe()}"
    assert host.stderr_text().strip(), f"EOF {what}: a clear message on stderr is required"


def test_eof_before_any_frame(host):
    """stdin closed at once (a port opened and closed): exit 0, empty stdout, no crash.
    Catches: a panic/traceback on a zero-byte read, exit 1 on a clean EOF, a banner or
    log line on stdout."""
    rc = host.finish()
    assert_clean_exit(host, rc, "before any frame")
    assert host.transcript == b"", f"stdout must stay empty, got {bytes(host.transcript)[:80]!r}"


def test_eof_after_frames(host):
    """Three round trips, then stdin closed: exit 0 and nothing more on stdout.
    Catches: a host that treats EOF after traffic as an error, or writes a goodbye."""
    for _ in range(3):
        assert_pong(host.request(PING))
    rc = host.finish()
    assert_clean_exit(host, rc, "after three frames")


def test_eof_right_after_unanswered_frames(host):
    """Five pings and the EOF arrive together (stdin closed without waiting): all five get
    their pong before the host exits 0.
    Catches: a host that sees EOF in the same read as whole frames and quits without
    answering them, or one that stops at the first frame of a chunk."""
    host.send(frame(PING) * 5)
    host.close_stdin()
    for i in range(5):
        assert_pong(host.read_reply(), f"ping {i + 1} of 5 sent before EOF")
    rc = host.wait_exit()
    assert_clean_exit(host, rc, "after five unanswered frames")


@pytest.mark.parametrize("n", [1, 2, 3])
def test_eof_inside_length_prefix(host, n):
    """EOF after 1–3 bytes of a length prefix: exit 1, a message on stderr, no crash, no stdout.
    Catches: read_exact helpers that panic/raise on a short read (Rust unwrap on
    UnexpectedEof, Go panic, Python struct.error traceback), hosts that treat a partial
    header as a clean EOF (exit 0) or parse a zero-padded length."""
    host.send(header(13)[:n])
    rc = host.finish()
    assert_broken_stream_exit(host, rc, f"after {n} header bytes")
    assert host.transcript == b"", "nothing may appear on stdout"


@pytest.mark.parametrize("sent", [0, 1, 50], ids=["no-body", "1-byte", "50-bytes"])
def test_eof_inside_body(host, sent):
    """A header for a 100-byte body, then only `sent` body bytes and EOF: exit 1 with a
    message, no crash, no reply. Catches: a host that answers a truncated body, exits 0,
    loops forever on read() returning 0, or panics."""
    body = b'{"op":"ping","pad":"' + b"x" * 78 + b'"}'
    assert len(body) == 100
    host.send(header(len(body)) + body[:sent])
    rc = host.finish()
    assert_broken_stream_exit(host, rc, f"after {sent} of 100 body bytes")
    assert host.transcript == b"", f"no reply to a truncated frame: {bytes(host.transcript)!r}"


def test_eof_inside_frame_after_good_frames(host):
    """A good round trip, then a partial header and EOF: exit 1, and nothing after the pong.
    Catches: error handling that only works on the first frame."""
    assert_pong(host.request(PING))
    host.send(b"\x0d\x00")
    rc = host.finish()
    assert_broken_stream_exit(host, rc, "inside the second frame's header")
    assert host.unread_stdout() == b"", "nothing may follow the pong on stdout"
