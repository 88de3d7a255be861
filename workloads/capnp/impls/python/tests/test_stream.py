"""stream: messages on a pipe, unpacked and packed: framing, a clean end told from a cut, the
limits of SPEC §6 checked before the body is read, runs past a message's end, writing."""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass

import pytest
from capnp_py import stream
from capnp_py.failures import InvalidMessage
from capnp_py.rng import Rng
from conftest import make_case


@pytest.fixture(scope="module")
def carsales():
    return make_case("carsales")


@dataclass
class Lot:
    plain: bytes  # as to_bytes writes it
    packed: bytes  # as to_bytes_packed writes it
    amount: int


@pytest.fixture(scope="module")
def lots(carsales) -> list[Lot]:
    """Carsales requests: multi-segment (the default builder) and one-segment ones."""
    rng = Rng()
    out = []
    for words in (None, 16384, None, 16384, None):
        lot = carsales.request_type.new_message(num_first_segment_words=words)
        amount = carsales.build_request(lot, rng)
        plain = lot.to_bytes()
        lot.clear_write_flag()
        out.append(Lot(plain, lot.to_bytes_packed(), amount))
    segments = [struct.unpack_from("<I", lot.plain)[0] + 1 for lot in out]
    assert max(segments) > 1 and min(segments) == 1
    return out


def amounts(carsales, roots) -> list[int]:
    totals = []
    for root in roots:
        response = carsales.response_type.new_message()
        carsales.serve(root, response)
        totals.append(response.amount)
    return totals


# ---- unpacked ----------------------------------------------------------------------------


def read_all(data: bytes, read=lambda r: r.read()) -> list[bytes]:
    reader = stream.MessageReader(io.BufferedReader(io.BytesIO(data)))
    out = []
    while (message := read(reader)) is not None:
        out.append(bytes(message))
    return out


def test_messages_back_to_back_are_read_one_by_one(carsales, lots):
    data = [lot.plain for lot in lots]
    got = read_all(b"".join(data))
    assert got == data
    roots = [stream.read_root(carsales.request_type, m) for m in got]
    assert amounts(carsales, roots) == [lot.amount for lot in lots]


def test_clean_end_is_none_and_every_cut_is_an_error(lots):
    data = lots[1].plain
    assert read_all(b"") == []
    for cut in [1, 4, 7, 8, 9, 16, len(data) // 2, len(data) - 1]:
        with pytest.raises(InvalidMessage, match="end of input"):
            read_all(data + data[:cut])


def test_cut_inside_a_multi_segment_table(lots):
    data = lots[0].plain
    count = struct.unpack_from("<I", data)[0] + 1
    assert count > 2
    with pytest.raises(InvalidMessage, match="segment table"):
        read_all(data[:12])


class NoBody(io.RawIOBase):
    """A stream holding only `head`: reading past it fails the test."""

    def __init__(self, head: bytes) -> None:
        self.head = head

    def readable(self) -> bool:
        return True

    def read(self, n: int = -1) -> bytes:
        out, self.head = self.head[:n], self.head[n:]
        return out

    def readinto(self, b) -> int:
        raise AssertionError("the body was read")


@pytest.mark.parametrize(
    ("head", "match"),
    [
        (struct.pack("<II", 0xFFFFFFFF, 1), "4294967296 segments"),
        (struct.pack("<II", 511, 1), "512 segments"),
        (struct.pack("<II", 0, 1 << 30), "1073741824 words"),
        (struct.pack("<IIII", 1, 1 << 22, (1 << 22) + 1, 0), "8388609 words"),
    ],
)
def test_limits_are_checked_before_the_body_is_read(head, match):
    reader = stream.MessageReader(NoBody(head))
    with pytest.raises(InvalidMessage, match=match):
        reader.read()


def test_511_segments_and_8_mi_words_are_allowed():
    table = struct.pack("<I", 510) + struct.pack("<I", 1) * 511
    body = bytes(8 * 511)
    assert read_all(table + body) == [table + body]
    assert stream._check_words([stream.MAX_WORDS - 1, 1]) == stream.MAX_WORDS


def test_a_larger_message_gets_a_new_buffer_and_the_old_view_stays_valid(lots):
    small, large = sorted((lots[1].plain, lots[3].plain), key=len)
    reader = stream.MessageReader(io.BufferedReader(io.BytesIO(small + large)))
    reader._buf = bytearray(len(small))
    first = reader.read()
    second = reader.read()
    assert (bytes(first), bytes(second)) == (small, large)


# ---- packed ------------------------------------------------------------------------------


def read_all_packed(tmp_path, data: bytes) -> list[bytes]:
    path = tmp_path / "stream.bin"
    path.write_bytes(data)
    with open(path, "rb") as f:  # a BufferedReader over a descriptor, as stdin is
        reader = stream.PackedMessageReader(f)
        out = []
        while (message := reader.read()) is not None:
            out.append(bytes(message))
        return out


@pytest.mark.parametrize("chunk", [1, 7, 1 << 16])
def test_packed_messages_back_to_back_whatever_the_reads(
    tmp_path, monkeypatch, carsales, lots, chunk
):
    monkeypatch.setattr(stream, "_CHUNK", chunk)
    data = [lot.packed for lot in lots]
    got = read_all_packed(tmp_path, b"".join(data))
    assert got == data
    roots = [stream.read_packed_root(carsales.request_type, m) for m in got]
    assert amounts(carsales, roots) == [lot.amount for lot in lots]


def test_packed_texts_with_raw_runs(tmp_path, monkeypatch):
    catrank = make_case("catrank")
    message = catrank.request_type.new_message()
    catrank.build_request(message, Rng())
    data = message.to_bytes_packed()
    assert b"\xff" in data
    monkeypatch.setattr(stream, "_CHUNK", 5)
    assert read_all_packed(tmp_path, data + data) == [data, data]


def test_packed_clean_end_is_none_and_every_cut_is_an_error(tmp_path, lots):
    data = lots[4].packed
    assert read_all_packed(tmp_path, b"") == []
    for cut in sorted({1, 2, 5, 9, 10, 11, len(data) // 3, len(data) // 2, len(data) - 1}):
        with pytest.raises(InvalidMessage, match="end of input"):
            read_all_packed(tmp_path, data[:cut])


def test_a_packed_run_past_the_end_of_the_message_is_refused(tmp_path):
    # A one-word message (null root) whose zero word claims 255 more zero words.
    with pytest.raises(InvalidMessage, match="past the end"):
        read_all_packed(tmp_path, bytes([0x10, 0x01, 0x00, 0xFF]))
    # The same with a raw run: the body's one word followed by 3 raw words.
    raw = bytes([0x10, 0x01, 0xFF]) + b"\x01" * 8 + bytes([3]) + b"\x02" * 24
    with pytest.raises(InvalidMessage, match="past the end"):
        read_all_packed(tmp_path, raw)


def test_a_packed_table_beyond_the_cap_is_refused(tmp_path):
    # Table word: count-1 = 0, size 2^30: bytes 0-3 zero, byte 7 = 0x40.
    with pytest.raises(InvalidMessage, match="1073741824 words"):
        read_all_packed(tmp_path, bytes([0x80, 0x40]) + bytes(64))
    # count-1 = 0x01010101: tag 0x0F and four ones.
    with pytest.raises(InvalidMessage, match="segments"):
        read_all_packed(tmp_path, bytes([0x0F, 1, 1, 1, 1]) + bytes(64))


# ---- the cap on a message written -------------------------------------------------------


def test_serialised_words_are_the_segment_table_summed(lots):
    for lot in lots:  # one segment and several
        count = struct.unpack_from("<I", lot.plain)[0] + 1
        body = len(lot.plain) // 8 - (count + 2) // 2
        assert stream.serialised_words(lot.plain, False) == body
        assert stream.serialised_words(lot.packed, True) == body


@pytest.mark.parametrize(
    ("packed", "words"),
    [
        # One segment of 0x010005 words: a zero byte inside the size.
        (bytes([0x50, 5, 1]), 0x010005),
        # One segment of 0x0305 words (the size's low bytes, the common case) and of none.
        (bytes([0x30, 5, 3]), 0x0305),
        (bytes([0x00, 0]), 0),
        # Three segments of 1, 0, 0 words: the table's second word packs as a zero run.
        (bytes([0x11, 2, 1, 0x00, 0]), 1),
        # Three segments of 0x01020304, 0x05060708, 0x090A0B0C words: the second word has no
        # zero byte, so it goes raw, after a 0xFF tag and a count of no further raw words.
        (bytes([0xF1, 2, 4, 3, 2, 1, 0xFF, 8, 7, 6, 5, 12, 11, 10, 9, 0]),
         0x01020304 + 0x05060708 + 0x090A0B0C),
    ],
)  # fmt: skip
def test_a_packed_segment_table_is_unpacked_whatever_its_runs(packed, words):
    assert stream.serialised_words(packed + bytes(16), True) == words


def test_a_message_beyond_the_cap_is_refused_as_serialised(lots, monkeypatch):
    lot = lots[0]
    words = stream.serialised_words(lot.plain, False)
    monkeypatch.setattr(stream, "MAX_WORDS", words)
    stream.check_serialised(lot.plain, False)
    stream.check_serialised(lot.packed, True)
    monkeypatch.setattr(stream, "MAX_WORDS", words - 1)
    for data, packed in ((lot.plain, False), (lot.packed, True)):
        with pytest.raises(InvalidMessage, match=f"{words} words, beyond the {words - 1}-word"):
            stream.check_serialised(data, packed)


def test_a_built_message_certainly_beyond_the_cap_is_refused_before_serialising(
    carsales, monkeypatch
):
    lot = carsales.request_type.new_message()
    carsales.build_request(lot, Rng())
    lower = lot.total_size.word_count + 1  # the root pointer besides the objects
    monkeypatch.setattr(stream, "MAX_WORDS", lower)
    stream.check_built(lot)
    monkeypatch.setattr(stream, "MAX_WORDS", lower - 1)
    with pytest.raises(InvalidMessage, match=f"at least {lower} words"):
        stream.check_built(lot)
    # A lower bound: the segments hold landing pads besides (the builder's default layout).
    assert stream.serialised_words(lot.to_bytes(), False) >= lower


# ---- writing -----------------------------------------------------------------------------


def test_write_all_finishes_after_partial_writes(monkeypatch):
    written = bytearray()

    def trickle(fd: int, data) -> int:
        part = bytes(data[:3])
        written.extend(part)
        return len(part)

    monkeypatch.setattr(stream.os, "write", trickle)
    stream.write_all(1, b"0123456789abcdef")
    assert bytes(written) == b"0123456789abcdef"
