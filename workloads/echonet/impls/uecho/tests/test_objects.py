"""SPEC §5's values as uecho's own responder answers them (no socket: a request is handed to
LocalNode.message_received and the reply caught at send_message). These pin what a new uecho
release would have to keep for the reference row to stay byte-exact."""

from __future__ import annotations

import objects
import pytest
from uecho import LocalNode
from uecho.protocol.message import Message

ADDR = "127.0.0.1"
# SPEC §6: the 36-byte Get of the node profile and the 94-byte reply of a node at 127.0.0.1.
GET_36 = bytes.fromhex(
    "1081 0002 0ef001 0ef001 62 0c 8000 8200 8300 8a00 9d00 9e00 9f00 d300 d400 d500 d600 d700"
)
REPLY_94 = bytes.fromhex(
    "1081 0002 0ef001 0ef001 72 0c 800130 8204010e0100 8311feffffff000000000000000000 7f000001"
    "8a03ffffff 9d030280d5 9e0100 9f0d0c8082838a9d9e9fd3d4d5d6d7 d303000001 d4020002"
    "d50401013001 d60401013001 d703010130"
)


class CaughtNode(LocalNode):
    def __init__(self) -> None:
        super().__init__()
        self.sent: list[bytes] = []

    def send_message(self, msg, addr) -> bool:
        self.sent.append(bytes(msg.to_bytes()))
        return True

    def announce_message(self, msg) -> bool:
        self.sent.append(bytes(msg.to_bytes()))
        return True


@pytest.fixture
def node() -> CaughtNode:
    n = CaughtNode()
    objects.build(n, ADDR)
    return n


def ask(node: CaughtNode, request: bytes) -> bytes | None:
    msg = Message()
    msg.parse_bytes(request)
    msg.from_addr = ("127.0.0.2", 3610)
    node.sent.clear()
    node.message_received(msg)
    assert len(node.sent) <= 1
    return node.sent[0] if node.sent else None


def test_the_spec_94_byte_reply(node):
    assert ask(node, GET_36) == REPLY_94


def test_every_aircon_property(node):
    epcs = list(objects.AIRCON_VALUES)
    req = bytes.fromhex("1081 0003 05ff01 013001 62") + bytes([len(epcs)])
    req += b"".join(bytes([e, 0]) for e in epcs)
    reply = ask(node, req)
    want = bytes.fromhex("1081 0003 013001 05ff01 72") + bytes([len(epcs)])
    want += b"".join(bytes([e, len(v)]) + v for e, v in objects.AIRCON_VALUES.items())
    assert reply == want


def test_database_properties_outside_the_spec_are_unreadable(node):
    # 0x84 and 0xB2 are in uecho's database for the class, not in SPEC §5.
    reply = ask(node, bytes.fromhex("1081 0004 05ff01 013001 62 03 8000 8400 b200"))
    assert reply == bytes.fromhex("1081 0004 013001 05ff01 52 03 800131 8400 b200")


@pytest.mark.parametrize(
    "epc, value, accepted",
    [(0x80, 0x30, True), (0x80, 0x32, False), (0xB3, 0x32, True), (0xB3, 0x33, False),
     (0xA0, 0x41, True), (0xA0, 0x39, False), (0xB0, 0x45, True), (0xB0, 0x46, False),
     (0x81, 0xFF, True), (0xBB, 0x14, False)],
)  # fmt: skip
def test_set_rules(node, epc, value, accepted):
    reply = ask(node, bytes.fromhex("1081 0005 05ff01 013001 60 01") + bytes([epc, 1, value]))
    if accepted:
        assert reply is None  # SetI that succeeds: no reply
        got = ask(node, bytes.fromhex("1081 0006 05ff01 013001 62 01") + bytes([epc, 0]))
        assert got[-1] == value
    else:
        assert reply == bytes.fromhex("1081 0005 013001 05ff01 50 01") + bytes([epc, 1, value])


def test_a_set_of_pdc_2_is_refused(node):
    reply = ask(node, bytes.fromhex("1081 0007 05ff01 013001 60 01 b3 02 1414"))
    assert reply == bytes.fromhex("1081 0007 013001 05ff01 50 01 b3 02 1414")


def test_nothing_of_the_node_profile_is_settable(node):
    reply = ask(node, bytes.fromhex("1081 0008 05ff01 0ef001 60 01 80 01 31"))
    assert reply == bytes.fromhex("1081 0008 0ef001 05ff01 50 01 80 01 31")


def test_identity_carries_the_address():
    assert objects.identity("10.201.0.3") == bytes.fromhex("feffffff" + "00" * 9 + "0ac90003")
