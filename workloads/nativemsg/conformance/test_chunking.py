"""SPEC §3: frames in arbitrary chunks behave exactly as one frame per write.

A pipe merges writes that the reader has not consumed yet, so every split below sleeps between
writes: the host really sees the short reads a slow or busy browser produces.
"""

from __future__ import annotations

from checks import PING, assert_echo, assert_pong, echo_body
from hostproc import frame

# Non-ASCII, so that some splits land inside a multi-byte UTF-8 character.
ECHO_DATA = '{"t":"é€😀中","n":[1,2]}'.encode()
ECHO = echo_body(ECHO_DATA)


def test_one_byte_per_write(host):
    """A ping and then an echo, each delivered one byte per write with a pause after each.
    Catches: a host that assumes one read() returns a whole frame (or a whole header), and
    treats a short read as EOF or as the frame."""
    for body, check in ((PING, assert_pong), (ECHO, lambda r: assert_echo(r, ECHO_DATA))):
        data = frame(body)
        host.send_in_pieces(data, list(range(1, len(data))), pause=0.001)
        check(host.read_reply())


def test_split_at_every_offset(host):
    """Two frames (echo + ping) written in two parts, split at EVERY byte offset in turn
    (one host session, pause between the parts); both replies must come back each time.
    Catches: a split inside the header, between header and body, inside a UTF-8 character,
    or across the frame boundary (leftover bytes of the next frame dropped or misparsed)."""
    data = frame(ECHO) + frame(PING)
    for cut in range(1, len(data)):
        host.send_in_pieces(data, [cut])
        try:
            assert_echo(host.read_reply(), ECHO_DATA)
            assert_pong(host.read_reply())
        except AssertionError as e:
            raise AssertionError(f"split at byte {cut} of {len(data)}: {e}") from None


def test_many_frames_in_one_write(host):
    """1000 frames (echo of its index, every third one a ping) in ONE write: 1000 replies, in
    order. Catches: a host that handles one frame per read() and drops the rest of the
    buffer, reorders replies, or deadlocks by not writing replies while input is pending."""
    count = 1000
    bodies = [PING if i % 3 == 2 else echo_body(b"%d" % i) for i in range(count)]
    host.send(b"".join(frame(b) for b in bodies))
    for i, body in enumerate(bodies):
        reply = host.read_reply()
        try:
            if body == PING:
                assert_pong(reply)
            else:
                assert_echo(reply, b"%d" % i)
        except AssertionError as e:
            raise AssertionError(f"reply {i} of {count}: {e}") from None


def test_large_frames_back_to_back(host):
    """Echo frames of awkward sizes around common buffer sizes (4 KiB, 64 KiB, 128 KiB),
    written back to back in pieces of a prime size (7919 bytes), so frame boundaries fall
    everywhere relative to the host's read buffer; every reply must come back, in order.
    Catches: bugs in buffer growth and compaction (a frame larger than the read buffer, a
    header split across a refill, leftover bytes of the next frame lost after a big one)."""
    sizes = [1, 4090, 4096, 65530, 65536, 65537, 7, 131072, 300_001, 3, 65536 * 3 + 5, 0]
    datas = [b'"' + bytes([97 + i]) * n + b'"' for i, n in enumerate(sizes)]
    stream = b"".join(frame(echo_body(d)) for d in datas)
    host.send_in_pieces(stream, list(range(7919, len(stream), 7919)), pause=0)
    for n, data in zip(sizes, datas, strict=True):
        try:
            assert_echo(host.read_reply(), data)
        except AssertionError as e:
            raise AssertionError(f"echo of a {n}-character string: {e}") from None
