"""responder: how a node answers (SPEC §6), byte for byte."""

from __future__ import annotations

import random
import socket

import pytest
from echonet_py import frame, objects
from echonet_py.responder import Responder

GET_36 = bytes.fromhex(
    "1081 0002 0ef001 0ef001 62 0c 8000 8200 8300 8a00 9d00 9e00 9f00 d300 d400 d500 d600 d700"
)
# SPEC §6: the reply of a node whose address is 127.0.0.1 (94 bytes).
REPLY_94 = bytes.fromhex(
    """
    10 81 00 02 0E F0 01 0E F0 01 72 0C 80 01 30 82 04 01 0E 01 00 83 11 FE FF FF FF 00 00 00 00 00
    00 00 00 00 7F 00 00 01 8A 03 FF FF FF 9D 03 02 80 D5 9E 01 00 9F 0D 0C 80 82 83 8A 9D 9E 9F D3
    D4 D5 D6 D7 D3 03 00 00 01 D4 02 00 02 D5 04 01 01 30 01 D6 04 01 01 30 01 D7 03 01 01 30
    """
)


@pytest.fixture
def node() -> Responder:
    return Responder(objects.node_objects(socket.inet_aton("127.0.0.1")))


def ask(node: Responder, hexdata: str) -> list[str] | None:
    """The replies to one request, as hex without spaces (None: ignored)."""
    out = node.answer(frame.decode(bytes.fromhex(hexdata)))
    return None if out is None else [r.hex() for r in out]


def h(text: str) -> str:
    return bytes.fromhex(text).hex()


def test_the_36_byte_get_gets_the_94_byte_reply(node):
    assert len(REPLY_94) == 94
    assert node.answer(frame.decode(GET_36)) == (REPLY_94,)


def test_get_of_one_property_each(node):
    assert ask(node, "1081 0001 05ff01 0ef001 62 01 8000") == [
        h("1081 0001 0ef001 05ff01 72 01 800130")
    ]
    assert ask(node, "1081 ffff 05ff01 013001 62 01 b300") == [
        h("1081 ffff 013001 05ff01 72 01 b30114")
    ]
    # A Get's EDTs are ignored.
    assert ask(node, "1081 0001 05ff01 013001 62 01 8002 0000") == [
        h("1081 0001 013001 05ff01 72 01 800131")
    ]


def test_get_with_an_unreadable_property_is_get_sna_in_request_order(node):
    assert ask(node, "1081 0007 05ff01 013001 62 04 b300 f000 8000 b300") == [
        h("1081 0007 013001 05ff01 52 04 b30114 f000 800131 b30114")
    ]


def test_duplicates_are_answered_as_often_as_asked(node):
    assert ask(node, "1081 0001 05ff01 0ef001 62 03 d600 d600 d600") == [
        h("1081 0001 0ef001 05ff01 72 03" + " d60401013001" * 3)
    ]


def test_reply_goes_back_to_the_requests_seoj(node):
    assert ask(node, "1081 1234 0ef001 0ef001 62 01 8a00") == [
        h("1081 1234 0ef001 0ef001 72 01 8a03ffffff")
    ]


def test_instance_zero_answers_for_every_instance(node):
    assert ask(node, "1081 0001 05ff01 0ef000 62 01 d600") == [
        h("1081 0001 0ef001 05ff01 72 01 d60401013001")
    ]
    assert ask(node, "1081 0001 05ff01 013000 62 01 8000") == [
        h("1081 0001 013001 05ff01 72 01 800131")
    ]


def test_instance_zero_with_two_devices_answers_once_per_object():
    devices = [objects.air_conditioner(1), objects.air_conditioner(2)]
    node = Responder([objects.node_profile(b"\x7f\x00\x00\x01", devices), *devices])
    assert ask(node, "1081 0001 05ff01 013000 62 01 8000") == [
        h("1081 0001 013001 05ff01 72 01 800131"),
        h("1081 0001 013002 05ff01 72 01 800131"),
    ]
    assert ask(node, "1081 0001 05ff01 013000 60 01 8001 30") == []  # both accepted: silence
    assert ask(node, "1081 0001 05ff01 0ef001 62 02 d300 d600") == [
        h("1081 0001 0ef001 05ff01 72 02 d303000002 d60702013001013002")
    ]


IGNORED = {
    "other instance": "1081 0001 05ff01 0ef002 62 01 8000",
    "other class": "1081 0001 05ff01 013101 62 01 8000",
    "the controller's class": "1081 0001 0ef001 05ff01 62 01 8000",
    "Get_Res": "1081 0001 05ff01 0ef001 72 01 800130",
    "Get_SNA": "1081 0001 05ff01 0ef001 52 01 8000",
    "INF": "1081 0001 0ef001 0ef001 73 01 d50401013001",
    "INFC_Res": "1081 0001 05ff01 0ef001 7a 01 d500",
    "SetGet_Res": "1081 0001 05ff01 013001 7e 01 8000 01 800130",
    "unknown ESV 0x64": "1081 0001 05ff01 0ef001 64 01 8000",
    "unknown ESV 0x00": "1081 0001 05ff01 0ef001 00 01 8000",
}


@pytest.mark.parametrize("case", IGNORED)
def test_ignored(node, case):
    assert ask(node, IGNORED[case]) is None


def test_setc_success_and_persistence(node):
    assert ask(node, "1081 0003 05ff01 013001 61 02 8001 30 b301 19") == [
        h("1081 0003 013001 05ff01 71 02 8000 b300")
    ]
    assert ask(node, "1081 0004 05ff01 013001 62 02 8000 b300") == [
        h("1081 0004 013001 05ff01 72 02 800130 b30119")
    ]


def test_setc_refusal_keeps_the_accepted_ones(node):
    # b3=ff out of range, 88 not settable, 80 with PDC 2: refused; a0=38 and 81=05 accepted.
    assert ask(node, "1081 0005 05ff01 013001 61 05 a001 38 b301 ff 8801 41 8002 3030 8101 05") == [
        h("1081 0005 013001 05ff01 51 05 a000 b301ff 880141 80023030 8100")
    ]
    assert ask(node, "1081 0006 05ff01 013001 62 04 a000 b300 8000 8100") == [
        h("1081 0006 013001 05ff01 72 04 a00138 b30114 800131 810105")
    ]


def test_seti_is_silent_on_success_and_seti_sna_on_refusal(node):
    assert ask(node, "1081 0001 05ff01 013001 60 01 b001 42") == []
    assert ask(node, "1081 0002 05ff01 013001 60 02 b001 43 b001 46") == [
        h("1081 0002 013001 05ff01 50 02 b000 b00146")
    ]
    assert ask(node, "1081 0003 05ff01 013001 62 01 b000") == [
        h("1081 0003 013001 05ff01 72 01 b00143")
    ]
    # Nothing of the node profile is settable.
    assert ask(node, "1081 0004 05ff01 0ef001 60 01 8001 30") == [
        h("1081 0004 0ef001 05ff01 50 01 800130")
    ]


def test_setget(node):
    # The get part reads what the set part wrote.
    assert ask(node, "1081 0009 05ff01 013001 6e 01 8001 30 02 8000 b300") == [
        h("1081 0009 013001 05ff01 7e 01 8000 02 800130 b30114")
    ]
    assert ask(node, "1081 000a 05ff01 013001 6e 01 8001 33 01 8000") == [
        h("1081 000a 013001 05ff01 5e 01 800133 01 800130")
    ]
    assert ask(node, "1081 000b 05ff01 013001 6e 00 02 8000 f000") == [
        h("1081 000b 013001 05ff01 5e 00 02 800130 f000")
    ]
    assert ask(node, "1081 000c 05ff01 013001 6e 01 b301 20 00") == [
        h("1081 000c 013001 05ff01 7e 01 b300 00")
    ]


def test_inf_req_is_answered_by_inf_or_inf_sna(node):
    assert ask(node, "1081 0010 05ff01 0ef001 63 01 d500") == [
        h("1081 0010 0ef001 05ff01 73 01 d50401013001")
    ]
    assert ask(node, "1081 0011 05ff01 0ef001 63 02 d500 e000") == [
        h("1081 0011 0ef001 05ff01 53 02 d50401013001 e000")
    ]


def test_infc_is_acknowledged_with_pdc_0(node):
    assert ask(node, "1081 0012 0ef001 0ef001 74 02 d504 01013001 f000") == [
        h("1081 0012 0ef001 0ef001 7a 02 d500 f000")
    ]


def test_the_start_announcement(node):
    inf = node.announcement(b"\xab\xcd")
    assert inf == bytes.fromhex("1081 abcd 0ef001 0ef001 73 01 d5 04 01013001")
    assert len(inf) == 18


def test_any_well_formed_request_gets_well_formed_replies_or_none():
    """Random frames (every ESV, the node's objects and others, random EPCs and EDTs): answer()
    never raises, and every reply decodes, keeps the TID and lists the EPCs in request order."""
    rng = random.Random(7)
    node = Responder(objects.node_objects(b"\x7f\x00\x00\x01"))
    deojs = [bytes.fromhex(h) for h in ("0ef001", "0ef000", "013001", "013000", "013002", "05ff01")]

    def part(least: int) -> list[tuple[int, bytes]]:
        epc = lambda: rng.choice([0x80, 0xB3, rng.randrange(256)])  # noqa: E731
        edt = lambda: rng.randbytes(rng.choice([0, 1, 1, 2, 9]))  # noqa: E731
        return [(epc(), edt()) for _ in range(rng.randrange(least, 6))]

    for _ in range(5000):
        esv = rng.choice([*range(0x50, 0x80), rng.randrange(256)])
        setget = esv in frame.SETGET_FAMILY
        first = part(0 if setget else 1)
        second = (part(0) or [(0x80, b"")]) if setget else None
        data = frame.encode(
            rng.randbytes(2), frame.CONTROLLER, rng.choice(deojs), esv, first, second
        )
        out = node.answer(frame.decode(data))
        if out is None:
            continue
        for reply in out:
            r = frame.decode(reply)
            assert r.tid == data[2:4] and r.deoj == frame.CONTROLLER
            assert [e for e, _ in r.properties] == [e for e, _ in first]
            if second is not None:
                assert [e for e, _ in r.get_properties] == [e for e, _ in second]
