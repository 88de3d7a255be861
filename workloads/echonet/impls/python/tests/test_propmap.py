"""propmap: exact encoding (list below 16 EPCs, bitmap from 16) and a decoder that ignores N."""

from __future__ import annotations

import pytest
from echonet_py import propmap

# SPEC §5: the air conditioner's get map, 18 EPCs in the bitmap form.
AIRCON_GET = [
    0x80, 0x81, 0x82, 0x88, 0x8A, 0x8F, 0x93, 0x97, 0x98, 0x9D, 0x9E, 0x9F,
    0xA0, 0xB0, 0xB1, 0xB3, 0xBA, 0xBB,
]  # fmt: skip
AIRCON_GET_MAP = bytes.fromhex("12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03")


def test_list_form_below_16_is_ascending():
    assert propmap.encode([0xD5, 0x80]) == bytes.fromhex("02 80 D5")
    assert propmap.encode([]) == b"\x00"
    assert propmap.encode([0xB3, 0xB0, 0xA0, 0x81, 0x80]) == bytes.fromhex("05 80 81 A0 B0 B3")
    fifteen = list(range(0x80, 0x8F))
    assert propmap.encode(fifteen) == bytes((15, *fifteen))


def test_bitmap_form_from_16():
    assert propmap.encode(AIRCON_GET) == AIRCON_GET_MAP
    sixteen = propmap.encode(range(0x80, 0x90))
    assert sixteen == bytes((16,)) + bytes([1] * 16)
    # 0x80 -> byte 0 bit 0, 0xD6 -> byte 6 bit 5 (SPEC §4).
    m = propmap.encode([0x80, 0xD6, *range(0xE0, 0xEE)])
    assert m[0] == 16 and m[1 + 0] & 1 and m[1 + 6] == 1 << 5 | 1 << 6
    everything = propmap.encode(range(0x80, 0x100))
    assert everything == bytes((128,)) + b"\xff" * 16


def test_encode_refuses_epcs_no_map_can_hold():
    with pytest.raises(ValueError):
        propmap.encode([0x7F])
    with pytest.raises(ValueError):
        propmap.encode([0x100])


def test_decode_round_trips():
    for epcs in ([], [0x80], [0x80, 0xD5], AIRCON_GET, list(range(0x80, 0x100))):
        assert propmap.decode(propmap.encode(epcs)) == epcs


def test_decode_reads_the_bitmap_not_n():
    # A known peer bug: N written as 16 while the bitmap holds 18 EPCs, some at 0xC0 and above.
    assert propmap.decode(b"\x10" + AIRCON_GET_MAP[1:]) == AIRCON_GET
    bitmap = bytearray(16)
    bitmap[3] = 0b1111_0000  # 0xC3, 0xD3, 0xE3, 0xF3
    assert propmap.decode(b"\x10" + bytes(bitmap)) == [0xC3, 0xD3, 0xE3, 0xF3]
    assert propmap.decode(b"\xff" + bytes(bitmap)) == [0xC3, 0xD3, 0xE3, 0xF3]


def test_decode_takes_what_is_present():
    assert propmap.decode(b"") == []
    assert propmap.decode(bytes.fromhex("05 80 81")) == [0x80, 0x81]  # list cut short
    assert propmap.decode(bytes.fromhex("12 0D 09")) == [0x80, 0x81, 0xA0, 0xB0, 0xB1]
