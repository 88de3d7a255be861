"""objects: every property value of SPEC §5, the property maps, and the Set rules."""

from __future__ import annotations

import socket

import pytest
from echonet_py import objects

ADDR = socket.inet_aton("127.0.0.1")

NODE_PROFILE = {
    0x80: "30",
    0x82: "01 0E 01 00",
    0x83: "FE FF FF FF 00 00 00 00 00 00 00 00 00 7F 00 00 01",
    0x8A: "FF FF FF",
    0x9D: "02 80 D5",
    0x9E: "00",
    0x9F: "0C 80 82 83 8A 9D 9E 9F D3 D4 D5 D6 D7",
    0xD3: "00 00 01",
    0xD4: "00 02",
    0xD5: "01 01 30 01",
    0xD6: "01 01 30 01",
    0xD7: "01 01 30",
}

AIR_CONDITIONER = {
    0x80: "31",
    0x81: "00",
    0x82: "00 00 52 01",
    0x88: "42",
    0x8A: "FF FF FF",
    0x8F: "42",
    0x93: "42",
    0x97: "0C 00",
    0x98: "07 E6 01 01",
    0x9D: "04 80 81 88 B0",
    0x9E: "05 80 81 A0 B0 B3",
    0x9F: "12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03",
    0xA0: "41",
    0xB0: "41",
    0xB1: "41",
    0xB3: "14",
    0xBA: "32",
    0xBB: "14",
}


def test_node_profile_values_are_exactly_the_spec():
    profile, device = objects.node_objects(ADDR)
    assert profile.eoj.hex() == "0ef001" and device.eoj.hex() == "013001"
    assert profile.epcs == sorted(NODE_PROFILE)
    for epc, edt in NODE_PROFILE.items():
        assert profile.edt(epc) == bytes.fromhex(edt), hex(epc)
        assert profile.wire[epc] == bytes((epc, len(bytes.fromhex(edt)))) + bytes.fromhex(edt)


def test_node_address_goes_into_the_identification_number():
    profile = objects.node_objects(socket.inet_aton("10.201.0.2"))[0]
    assert profile.edt(0x83) == bytes.fromhex("FEFFFFFF" + "00" * 9 + "0AC90002")
    with pytest.raises(ValueError):
        objects.node_profile(b"\x7f\x00\x01", [])


def test_air_conditioner_values_are_exactly_the_spec():
    device = objects.air_conditioner()
    assert device.epcs == sorted(AIR_CONDITIONER)
    for epc, edt in AIR_CONDITIONER.items():
        assert device.edt(epc) == bytes.fromhex(edt), hex(epc)
    assert device.edt(0x90) is None


ACCEPTED = {
    0x80: {0x30, 0x31},
    0x81: set(range(256)),
    0xA0: set(range(0x31, 0x39)) | {0x41},
    0xB0: set(range(0x40, 0x46)),
    0xB3: set(range(0x00, 0x33)),
}


@pytest.mark.parametrize("epc", sorted(ACCEPTED))
def test_set_accepts_exactly_the_spec_range(epc):
    device = objects.air_conditioner()
    for value in range(256):
        before = device.edt(epc)
        ok = device.set(epc, bytes((value,)))
        assert ok == (value in ACCEPTED[epc]), (hex(epc), value)
        assert device.edt(epc) == (bytes((value,)) if ok else before)


def test_set_refuses_other_pdcs_and_properties():
    device = objects.air_conditioner()
    assert not device.set(0x80, b"")
    assert not device.set(0x80, b"\x30\x30")
    for epc in AIR_CONDITIONER:
        if epc not in ACCEPTED:
            assert not device.set(epc, device.edt(epc)[:1]), hex(epc)
    assert not device.set(0xF0, b"\x00")
    assert device.edt(0x80) == b"\x31"
    profile = objects.node_objects(ADDR)[0]
    assert not any(profile.set(epc, b"\x30") for epc in range(256))  # nothing settable
    assert profile.edt(0x80) == b"\x30"


def test_accepted_values_persist():
    device = objects.air_conditioner()
    assert device.set(0xB3, b"\x19") and device.set(0x80, b"\x30")
    assert device.edt(0xB3) == b"\x19" and device.wire[0xB3] == b"\xb3\x01\x19"
    assert device.edt(0x80) == b"\x30"
