"""controller: TIDs, matching replies (TID, source, ESV), timeouts and retries, discovery."""

from __future__ import annotations

import socket
import threading
import time

import pytest
from conftest import CONTROLLER_ADDR, NODE_ADDR, OTHER_ADDR
from echonet_py import frame, objects, transport
from echonet_py.controller import Controller, instance_list
from echonet_py.responder import Responder


class FakeNode:
    """A node in a thread of this process: `script(request_bytes, source)` -> [(datagram,
    from_addr)] to send; by default the real responder answers from NODE_ADDR."""

    def __init__(self, port: int, script=None) -> None:
        self.port = port
        self.socks = {}
        for addr in (NODE_ADDR, OTHER_ADDR):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.bind((addr, port))
            s.settimeout(0.05)
            self.socks[addr] = s
        self.responder = Responder(objects.node_objects(socket.inet_aton(NODE_ADDR)))
        self.script = script or self.answer
        self.received: list[bytes] = []
        self._stop = False
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def answer(self, data: bytes, source):
        return [(r, NODE_ADDR) for r in self.responder.answer(frame.decode(data)) or ()]

    def _run(self) -> None:
        s = self.socks[NODE_ADDR]
        while not self._stop:
            try:
                data, source = s.recvfrom(65536)
            except TimeoutError:
                continue
            self.received.append(data)
            for datagram, from_addr in self.script(data, source):
                self.socks[from_addr].sendto(datagram, source)

    def close(self) -> None:
        self._stop = True
        self._thread.join(2)
        for s in self.socks.values():
            s.close()


@pytest.fixture
def make(port):
    made = []

    def make(script=None, timeout_s=0.2, retries=2):
        node = FakeNode(port, script)
        sock = transport.open_socket(CONTROLLER_ADDR, port, CONTROLLER_ADDR)
        ctl = Controller(sock, port, timeout_s, retries)
        made.append((node, sock))
        return node, ctl

    yield make
    for node, sock in made:
        node.close()
        sock.close()


def test_tids_start_at_1_and_skip_0_when_they_wrap(make):
    _, ctl = make()
    assert [ctl.next_tid() for _ in range(3)] == [b"\x00\x01", b"\x00\x02", b"\x00\x03"]
    ctl._tid = 0xFFFE
    assert [ctl.next_tid() for _ in range(3)] == [b"\xff\xff", b"\x00\x01", b"\x00\x02"]


def test_a_get_and_its_reply(make):
    node, ctl = make()
    reply, attempts = ctl.request(
        NODE_ADDR, frame.NODE_PROFILE, frame.GET, [(0x80, b""), (0xD6, b"")]
    )
    assert attempts == 1 and ctl.ignored == 0 and ctl.resent == 0
    assert reply.esv == frame.GET_RES and reply.tid == b"\x00\x01"
    assert reply.properties == [(0x80, b"\x30"), (0xD6, bytes.fromhex("01013001"))]
    assert node.received == [bytes.fromhex("1081 0001 05ff01 0ef001 62 02 8000 d600")]


def test_unmatched_datagrams_are_ignored_and_the_wait_goes_on(make):
    def noisy(data, source):
        req = frame.decode(data)
        good = frame.encode(req.tid, req.deoj, req.seoj, frame.GET_RES, [(0x80, b"\x30")])
        wrong_tid = frame.encode(b"\x99\x99", req.deoj, req.seoj, frame.GET_RES, [(0x80, b"0")])
        wrong_esv = frame.encode(req.tid, req.deoj, req.seoj, frame.SET_RES, [(0x80, b"")])
        return [
            (wrong_tid, NODE_ADDR),
            (good, OTHER_ADDR),  # right TID and ESV, wrong source
            (wrong_esv, NODE_ADDR),
            (b"\x10\x81" + req.tid + b"garbage", NODE_ADDR),  # malformed
            (good, NODE_ADDR),
            (good, NODE_ADDR),  # a duplicate: arrives while nobody waits for it
        ]

    _, ctl = make(noisy)
    reply, attempts = ctl.request(NODE_ADDR, frame.NODE_PROFILE, frame.GET, [(0x80, b"")])
    assert reply is not None and attempts == 1 and ctl.ignored == 4
    # The duplicate is ignored by the next request, which then gets its own reply.
    reply, attempts = ctl.request(NODE_ADDR, frame.NODE_PROFILE, frame.GET, [(0x80, b"")])
    assert reply.tid == b"\x00\x02" and ctl.ignored == 4 + 1 + 4


def test_a_lost_request_is_resent_with_the_same_tid(make):
    def drop_first_two(data, source, seen=[]):  # noqa: B006 - state across calls on purpose
        seen.append(data)
        return [] if len(seen) <= 2 else node.answer(data, source)

    node, ctl = make(drop_first_two, timeout_s=0.05, retries=2)
    start = time.monotonic()
    reply, attempts = ctl.request(NODE_ADDR, frame.AIR_CONDITIONER, frame.GET, [(0xB3, b"")])
    assert attempts == 3 and ctl.resent == 2
    assert reply.properties == [(0xB3, b"\x14")]
    assert len(set(node.received)) == 1 and len(node.received) == 3  # same datagram each time
    assert 0.09 < time.monotonic() - start < 1.0


def test_no_reply_after_every_attempt(make):
    node, ctl = make(lambda data, source: [], timeout_s=0.05, retries=3)
    start = time.monotonic()
    reply, attempts = ctl.request(NODE_ADDR, frame.NODE_PROFILE, frame.GET, [(0x80, b"")])
    assert reply is None and attempts == 4 and ctl.resent == 3
    assert 0.19 < time.monotonic() - start < 1.5
    assert len(node.received) == 4


def test_seti_waits_one_timeout_for_a_refusal(make):
    node, ctl = make(timeout_s=0.05, retries=3)
    reply, attempts = ctl.request(
        NODE_ADDR, frame.AIR_CONDITIONER, frame.SETI, [(0x80, b"\x30")], attempts=1
    )
    assert reply is None and attempts == 1 and len(node.received) == 1
    reply, attempts = ctl.request(
        NODE_ADDR, frame.AIR_CONDITIONER, frame.SETI, [(0x80, b"\x39")], attempts=1
    )
    assert reply.esv == frame.SETI_SNA and reply.properties == [(0x80, b"\x39")]


def test_instance_list_takes_what_is_present():
    assert instance_list(bytes.fromhex("01013001")) == [bytes.fromhex("013001")]
    assert instance_list(bytes.fromhex("02013001013002")) == [b"\x01\x30\x01", b"\x01\x30\x02"]
    assert instance_list(bytes.fromhex("05013001")) == [b"\x01\x30\x01"]  # count overstated
    assert instance_list(bytes.fromhex("0201300101")) == [b"\x01\x30\x01"]
    assert instance_list(b"") == [] and instance_list(b"\x00") == []


@pytest.fixture
def unicast_discovery(monkeypatch):
    """Discovery without multicast: the "group" is every address in `targets`."""
    targets: list[tuple[str, int]] = []

    def multicast(sock, datagram, port):
        for target in targets:
            sock.sendto(datagram, target)

    monkeypatch.setattr(transport, "multicast", multicast)
    return targets


def test_discover_collects_distinct_nodes_sorted_by_address(make, port, unicast_discovery):
    def two_nodes(data, source):
        replies = [(r, NODE_ADDR) for r in node.responder.answer(frame.decode(data))]
        other = frame.encode(
            data[2:4], frame.NODE_PROFILE, frame.CONTROLLER, frame.GET_RES,
            [(0xD6, bytes.fromhex("02013001013002"))],
        )  # fmt: skip
        return [(other, OTHER_ADDR), *replies, *replies]  # the second reply is a duplicate

    node, ctl = make(two_nodes, timeout_s=0.3, retries=2)
    unicast_discovery.append((NODE_ADDR, port))
    found = ctl.discover(expect=2, wait_s=1.0)
    assert [(n.host, n.eoj.hex(), [i.hex() for i in n.instances]) for n in found.nodes] == [
        (NODE_ADDR, "0ef001", ["013001"]),
        (OTHER_ADDR, "0ef001", ["013001", "013002"]),
    ]
    assert found.attempts == 1 and 0 < found.elapsed_s < 0.3
    assert node.received == [bytes.fromhex("1081 0001 05ff01 0ef001 62 01 d600")]


def test_discover_without_expect_waits_and_reports_whoever_answered(make, port, unicast_discovery):
    node, ctl = make(timeout_s=0.05, retries=5)
    unicast_discovery.append((NODE_ADDR, port))
    start = time.monotonic()
    found = ctl.discover(expect=None, wait_s=0.3)
    assert time.monotonic() - start >= 0.29
    assert [n.host for n in found.nodes] == [NODE_ADDR] and found.attempts == 1
    assert len(node.received) == 1


def test_discover_expecting_more_resends_then_gives_up(make, port, unicast_discovery):
    node, ctl = make(timeout_s=0.05, retries=2)
    unicast_discovery.append((NODE_ADDR, port))
    found = ctl.discover(expect=2, wait_s=1.0)
    assert [n.host for n in found.nodes] == [NODE_ADDR]
    assert found.attempts == 3 and len(node.received) == 3
    assert ctl.ignored == 2  # the node's answers to the two resends
