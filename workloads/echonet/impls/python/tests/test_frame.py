"""frame: the format-1 decoder (every malformed case of SPEC §3, format 2) and the encoder."""

from __future__ import annotations

import random

import pytest
from echonet_py import frame
from echonet_py.frame import Format2, Malformed

# SPEC §6: the seed's 12-property Get of the node profile, TID 0x0002.
GET_36 = bytes.fromhex(
    "1081 0002 0ef001 0ef001 62 0c 8000 8200 8300 8a00 9d00 9e00 9f00 d300 d400 d500 d600 d700"
)
NODE_EPCS = [0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7]


def test_the_36_byte_get_decodes_field_by_field():
    assert len(GET_36) == 36
    f = frame.decode(GET_36)
    assert f.tid == b"\x00\x02"
    assert f.seoj == f.deoj == frame.NODE_PROFILE == bytes.fromhex("0ef001")
    assert f.esv == frame.GET == 0x62
    assert f.properties == [(epc, b"") for epc in NODE_EPCS]
    assert f.get_properties is None
    assert all(type(edt) is bytes for _, edt in f.properties)


def test_the_36_byte_get_encodes_to_the_same_bytes():
    encoded = frame.encode(
        b"\x00\x02", frame.NODE_PROFILE, frame.NODE_PROFILE, frame.GET,
        [(epc, b"") for epc in NODE_EPCS],
    )  # fmt: skip
    assert encoded == GET_36


def test_properties_with_data_and_duplicates_keep_their_order():
    data = bytes.fromhex("1081 abcd 05ff01 013001 61 03 8001 30 b301 19 8001 31")
    f = frame.decode(data)
    assert f.tid == b"\xab\xcd" and f.seoj == frame.CONTROLLER and f.deoj == frame.AIR_CONDITIONER
    assert f.properties == [(0x80, b"\x30"), (0xB3, b"\x19"), (0x80, b"\x31")]
    assert frame.encode(f.tid, f.seoj, f.deoj, f.esv, f.properties) == data


def test_setget_has_two_parts():
    data = bytes.fromhex("1081 0001 05ff01 013001 6e 01 8001 31 02 8000 b300")
    f = frame.decode(data)
    assert f.esv == frame.SETGET
    assert f.properties == [(0x80, b"\x31")]
    assert f.get_properties == [(0x80, b""), (0xB3, b"")]
    assert frame.encode(f.tid, f.seoj, f.deoj, f.esv, f.properties, f.get_properties) == data
    # Either part may be empty, not both; the replies 0x7E and 0x5E have the same layout.
    only_get = bytes.fromhex("1081 0001 05ff01 013001 6e 00 01 8000")
    assert frame.decode(only_get).properties == []
    only_set = bytes.fromhex("1081 0001 013001 05ff01 7e 01 8000 00")
    assert frame.decode(only_set).get_properties == []
    assert frame.decode(bytes.fromhex("1081 0001 013001 05ff01 5e 00 01 8000")).esv == 0x5E


MALFORMED = {
    "empty": "",
    "11 bytes": "1081 0001 05ff01 0ef001 62",
    "EHD1 not 0x10": "1181 0001 05ff01 0ef001 62 01 8000",
    "EHD2 0x80": "1080 0001 05ff01 0ef001 62 01 8000",
    "EHD2 0x83": "1083 0001 05ff01 0ef001 62 01 8000",
    "OPC 0": "1081 0001 05ff01 0ef001 62 00",
    "OPC 0 with a property after it": "1081 0001 05ff01 0ef001 62 00 8000",
    "PDC past the end": "1081 0001 05ff01 0ef001 61 01 8002 30",
    "PDC 255 past the end": "1081 0001 05ff01 0ef001 61 01 80ff 30",
    "OPC larger than the properties": "1081 0001 05ff01 0ef001 62 03 8000 8200",
    "OPC 255, one property": "1081 0001 05ff01 0ef001 62 ff 8000",
    "half a property": "1081 0001 05ff01 0ef001 62 02 8000 82",
    "bytes left over": "1081 0001 05ff01 0ef001 62 01 8000 00",
    "12 bytes, OPC 1, no property": "1081 0001 05ff01 0ef001 62 01",
    "SetGet of 12 bytes": "1081 0001 05ff01 013001 6e 00",
    "SetGet of 13 bytes": "1081 0001 05ff01 013001 6e 00 00",
    "SetGet, OPCSet + OPCGet = 0": "1081 0001 05ff01 013001 6e 00 00 00",
    "SetGet without OPCGet": "1081 0001 05ff01 013001 6e 01 8001 30",
    "SetGet, get part short": "1081 0001 05ff01 013001 6e 00 02 8000",
    "SetGet, set PDC past the end": "1081 0001 05ff01 013001 6e 01 8005 30 01 8000",
    "SetGet, bytes left over": "1081 0001 05ff01 013001 6e 00 01 8000 ff",
    "SetGet_Res, OPCs 0": "1081 0001 013001 05ff01 7e 00 00 0000",
}


@pytest.mark.parametrize("case", MALFORMED)
def test_malformed_datagrams_raise_malformed(case):
    with pytest.raises(Malformed):
        frame.decode(bytes.fromhex(MALFORMED[case]))


def test_format_2_is_its_own_drop_reason():
    with pytest.raises(Format2):
        frame.decode(bytes.fromhex("1082 0001 05ff01 0ef001 62 01 8000"))
    with pytest.raises(Format2):  # free-form after the TID: any content
        frame.decode(bytes.fromhex("1082 0001") + bytes(range(40)))
    # Shorter than 12 bytes is malformed first, whatever EHD2 says (SPEC §3 lists it first).
    with pytest.raises(Malformed):
        frame.decode(bytes.fromhex("1082 0001 05ff01"))


def test_decoding_never_raises_anything_else():
    """Random datagrams and every truncation and byte flip of good ones: Malformed, Format2 or a
    frame that encodes back to the same bytes, nothing else."""
    rng = random.Random(2024)
    good = [
        GET_36,
        bytes.fromhex("1081 0001 05ff01 013001 6e 01 8001 31 02 8000 b300"),
        bytes.fromhex("1081 abcd 05ff01 013001 61 03 8001 30 b301 19 8001 31"),
    ]
    samples = [bytes(rng.randrange(256) for _ in range(rng.randrange(40))) for _ in range(3000)]
    samples += [b"\x10\x81" + s for s in samples]
    for g in good:
        samples += [g[:i] for i in range(len(g))]
        for i in range(len(g)):
            for v in (0, 1, 0x7F, 0xFF, g[i] ^ 0x10):
                samples.append(g[:i] + bytes((v,)) + g[i + 1 :])
    for data in samples:
        try:
            f = frame.decode(data)
        except (Malformed, Format2):
            continue
        assert frame.encode(f.tid, f.seoj, f.deoj, f.esv, f.properties, f.get_properties) == data


def test_encode_refuses_what_the_format_cannot_carry():
    tid, eoj = b"\x00\x01", frame.NODE_PROFILE
    with pytest.raises(ValueError):
        frame.encode(tid, eoj, eoj, frame.GET, [(0x80, b"")] * 256)
    with pytest.raises(ValueError):
        frame.encode(tid, eoj, eoj, frame.SETC, [(0x80, bytes(256))])
    with pytest.raises(ValueError):
        frame.encode(b"\x01", eoj, eoj, frame.GET, [(0x80, b"")])
    with pytest.raises(ValueError):
        frame.encode(tid, eoj, eoj, frame.GET, [(0x80, b"")], [(0x80, b"")])
    with pytest.raises(ValueError):  # 255 x 257 bytes: more than one UDP datagram
        frame.encode(tid, eoj, eoj, frame.SETC, [(0x80, bytes(255))] * 255)
    assert frame.property_bytes(0x83, b"\x01\x02") == b"\x83\x02\x01\x02"


def test_service_and_object_codes():
    assert (frame.SETI, frame.SETC, frame.GET, frame.INF_REQ, frame.SETGET) == (
        0x60, 0x61, 0x62, 0x63, 0x6E,
    )  # fmt: skip
    assert (frame.SET_RES, frame.GET_RES, frame.INF, frame.INFC, frame.INFC_RES) == (
        0x71, 0x72, 0x73, 0x74, 0x7A,
    )  # fmt: skip
    assert frame.SETGET_RES == 0x7E
    assert (frame.SETI_SNA, frame.SETC_SNA, frame.GET_SNA, frame.INF_SNA, frame.SETGET_SNA) == (
        0x50, 0x51, 0x52, 0x53, 0x5E,
    )  # fmt: skip
    assert frame.REPLY_ESVS[frame.GET] == {0x72, 0x52}
    assert frame.REPLY_ESVS[frame.SETI] == {0x50}
    assert frame.AIR_CONDITIONER.hex() == "013001" and frame.CONTROLLER.hex() == "05ff01"
    assert (frame.PORT, frame.MULTICAST_GROUP) == (3610, "224.0.23.0")
