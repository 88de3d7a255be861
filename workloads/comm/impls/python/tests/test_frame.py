"""frame: the header codec, the cap, and the client's decoder at every split."""

import pytest
from comm_py import frame
from comm_py.frame import HEADER_SIZE, BodyTooLarge, FrameDecoder


def test_header_is_type_then_big_endian_length():
    assert frame.encode_header(frame.REPLY, 0x0102030405060708) == bytes(
        [2, 1, 2, 3, 4, 5, 6, 7, 8]
    )
    assert frame.decode_header(b"\xff" + b"\xff" * 8) == (255, (1 << 64) - 1)
    assert frame.decode_header(b"xx" + frame.encode_header(4, 9), 2) == (4, 9)
    assert HEADER_SIZE == 9
    assert frame.END_FRAME == b"\x04" + bytes(8)
    assert frame.encode(frame.TEXT, b"hi") == b"\x01" + bytes(7) + b"\x02hi"


def test_type_codes_and_session_ends():
    codes = [frame.DEFAULT, frame.TEXT, frame.REPLY, frame.END, frame.QUIT, frame.FLUSH]
    assert codes == [0, 1, 2, 4, 8, 16]
    assert (frame.STRING, frame.BINARY) == (64, 128)
    assert [k for k in range(256) if frame.ends_session(k)] == [4, 8]


def feed(decoder: FrameDecoder, data: bytes, step: int) -> list:
    """Push data through the decoder as a socket would, at most `step` bytes per read."""
    out = []
    view = memoryview(data)
    while view:
        target = decoder.writable()
        n = min(len(target), step, len(view))
        target[:n] = view[:n]
        view = view[n:]
        out += decoder.commit(n)
    return out


MESSAGES = [(0, b"hello"), (1, b""), (128, bytes(range(256)) * 3), (2, b"x" * 40), (3, b"z")]
STREAM = b"".join(frame.encode(k, b) for k, b in MESSAGES)


@pytest.mark.parametrize("step", [1, 2, 8, 9, 10, 31, 64, 1000, 1 << 20])
def test_decoder_gives_the_same_frames_at_any_read_size(step):
    decoder = FrameDecoder(size=64)  # smaller than the 768-byte body: that one goes "big"
    assert feed(decoder, STREAM, step) == MESSAGES
    assert decoder.at_boundary


def test_decoder_split_at_every_offset():
    for cut in range(len(STREAM) + 1):
        decoder = FrameDecoder(size=4096)
        got = feed(decoder, STREAM[:cut], 1 << 20) + feed(decoder, STREAM[cut:], 1 << 20)
        assert got == MESSAGES, cut
        assert decoder.at_boundary


def test_decoder_bodies_are_independent_bytes():
    decoder = FrameDecoder(size=64)
    first = feed(decoder, frame.encode(0, b"abc"), 100)
    feed(decoder, frame.encode(0, b"XYZ"), 100)
    assert first == [(0, b"abc")] and type(first[0][1]) is bytes


def test_decoder_reports_a_partial_frame():
    decoder = FrameDecoder(size=64)
    feed(decoder, frame.encode(0, b"abc")[:5], 100)
    assert not decoder.at_boundary
    big = FrameDecoder(size=16)
    feed(big, frame.encode(0, b"y" * 100)[:50], 100)
    assert not big.at_boundary


def test_decoder_refuses_a_length_above_the_cap_from_the_header_alone():
    decoder = FrameDecoder(max_body=1000, size=64)
    assert feed(decoder, frame.encode(0, b"k" * 1000), 7) == [(0, b"k" * 1000)]
    with pytest.raises(BodyTooLarge) as e:
        feed(decoder, frame.encode(3, b"ok") + frame.encode_header(0, 1001), 100)
    assert e.value.length == 1001 and "1001" in str(e.value)
    assert e.value.frames == [(3, b"ok")]  # the good frames of the same read are kept
    with pytest.raises(BodyTooLarge):
        feed(FrameDecoder(), frame.encode_header(0, (1 << 64) - 1), 9)
