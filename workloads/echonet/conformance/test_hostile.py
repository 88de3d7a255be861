"""Hostile input (SPEC §3, §6): malformed datagrams and format 2 are dropped without a reply and
counted in their own counter; nothing is sized from OPC or PDC; one client's flood of garbage
never stops the node from answering another client."""

from __future__ import annotations

import threading
import time

import echonet_procs as P
import echonet_spec as S
import pytest
from echonet_spec import CONTROLLER, GET, NODE_PROFILE, h

GET_80 = S.get_request(0x3001, NODE_PROFILE, [0x80])  # 10 81 30 01 05 FF 01 0E F0 01 62 01 80 00

# name -> (datagram, the counter it lands in)
HOSTILE: dict[str, tuple[bytes, str]] = {
    "empty": (b"", "dropped_malformed"),
    "1-byte": (h("10"), "dropped_malformed"),
    "11-bytes": (GET_80[:11], "dropped_malformed"),
    "ehd1-wrong": (h("11") + GET_80[1:], "dropped_malformed"),
    "ehd2-wrong": (h("10 80") + GET_80[2:], "dropped_malformed"),
    "ehd2-ff": (h("10 FF") + GET_80[2:], "dropped_malformed"),
    "opc-0": (GET_80[:11] + h("00"), "dropped_malformed"),
    "opc-past-payload": (GET_80[:11] + h("02 80 00"), "dropped_malformed"),
    "opc-255-one-property": (GET_80[:11] + h("FF 80 00"), "dropped_malformed"),
    "pdc-past-end": (GET_80[:11] + h("01 80 05 01 02"), "dropped_malformed"),
    "pdc-255-past-end": (GET_80[:11] + h("01 80 FF") + bytes(200), "dropped_malformed"),
    "epc-without-pdc": (GET_80[:11] + h("01 80"), "dropped_malformed"),
    "trailing-byte": (GET_80 + h("00"), "dropped_malformed"),
    "65000-bytes": (GET_80 + bytes(65000 - len(GET_80)), "dropped_malformed"),
    "setget-13-bytes": (GET_80[:10] + h("6E 00 00"), "dropped_malformed"),
    "setget-no-opcget": (GET_80[:10] + h("6E 01 80 01 30"), "dropped_malformed"),
    "setget-opcget-past-end": (GET_80[:10] + h("6E 00 02 80 00"), "dropped_malformed"),
    "format2": (h("10 82 00 07") + bytes(range(20)), "dropped_format2"),
    "format2-shaped-like-get": (h("10 82") + GET_80[2:], "dropped_format2"),
}


@pytest.mark.semantics
@pytest.mark.parametrize("name", list(HOSTILE))
def test_hostile_datagram_is_dropped_and_counted(fresh_node, peer, name):
    data, counter = HOSTILE[name]
    n = fresh_node()
    peer.assert_no_reply(n.addr, data, f"{name} ({len(data)} bytes)")
    c = n.counters()
    want = {"received": 2, "requests": 1, "replies": 1, "ignored": 0, "dropped_malformed": 0,
            "dropped_format2": 0}  # fmt: skip
    want[counter] = 1
    assert {k: c[k] for k in want} == want, f"{name}: counters {c}"


def test_hostile_datagrams_get_no_reply(node, peer):
    """Every hostile datagram to one node: none answered, the node still answers afterwards
    (the floor too: it answers nothing it does not recognise)."""
    for name, (data, _) in HOSTILE.items():
        peer.assert_no_reply(node.addr, data, name)
    assert node.alive()


def _garbage(i: int) -> bytes:
    kinds = [b"", h("10"), GET_80[:11], GET_80 + h("00"), h("10 82") + GET_80[2:],
             GET_80[:11] + h("05 80 00"), bytes(range(64)), h("11") + GET_80[1:]]  # fmt: skip
    return kinds[i % len(kinds)]


def test_flood_of_garbage_does_not_starve_a_client(fresh_node):
    """20,000 garbage datagrams from one client while another asks 200 Gets: every Get is
    answered with the right bytes (a Get may be resent: the kernel may drop datagrams when the
    socket's buffer overflows, which no node can prevent, but the node must keep serving)."""
    n = fresh_node()
    done = threading.Event()
    sent = [0]

    def flood() -> None:
        with P.Peer(0) as bad:
            for i in range(20_000):
                if done.is_set():
                    break
                try:
                    bad.send(n.addr, _garbage(i))
                    sent[0] += 1
                except OSError:
                    time.sleep(0.001)

    flooder = threading.Thread(target=flood, daemon=True)
    flooder.start()
    attempts = 0
    try:
        with P.Peer(0) as good:
            for k in range(200):
                # Get k goes out once the flood has sent 100 k datagrams: the Gets are spread
                # over the whole flood, not asked before it gets going.
                deadline = time.monotonic() + 5
                while sent[0] < 100 * k and flooder.is_alive() and time.monotonic() < deadline:
                    time.sleep(0.0002)
                # The seed's 12-property Get: one the floor answers too.
                epcs = S.NODE_PROFILE_EPCS
                req = S.get_request(0x4000 + k, NODE_PROFILE, epcs)
                want = S.get_reply(req, NODE_PROFILE, S.node_profile(n.addr), epcs)
                for _attempt in range(5):
                    attempts += 1
                    good.send(n.addr, req)
                    got = good.recv(0.3)
                    while got is not None and got[0] != want and got[0][2:4] != req[2:4]:
                        got = good.recv(0.3)  # a late answer to an earlier resend
                    if got is not None:
                        break
                assert got is not None, f"Get {k} unanswered after 5 tries during the flood"
                assert got[0] == want, f"Get {k}: wrong reply {got[0].hex(' ')}"
    finally:
        done.set()
        flooder.join(10)
    assert n.alive(), f"the node died under the flood:\n{n.stderr_tail()}"
    assert attempts < 200 * 2, f"{attempts} sends for 200 Gets: the flood starves the client"
    status, lines = n.stop()
    assert status == 0, f"exit status {status} after the flood:\n{n.stderr_tail()}"
    c = P.parse_counters(lines)
    assert c["requests"] >= 200 and c["replies"] == c["requests"], c
    assert c["received"] <= sent[0] + attempts, c


@pytest.mark.semantics
def test_flood_is_counted(fresh_node, peer):
    """A burst of malformed and format-2 datagrams (few enough for the socket buffer): every
    one counted."""
    n = fresh_node()
    for i in range(200):
        peer.send(n.addr, _garbage(i))
        if i % 50 == 49:
            peer.fence(n.addr)
    c = n.counters()
    format2 = sum(1 for i in range(200) if _garbage(i)[:2] == h("10 82"))
    assert c["dropped_format2"] == format2, c
    assert c["dropped_malformed"] == 200 - format2, c
    assert (c["requests"], c["replies"], c["ignored"]) == (4, 4, 0), c


@pytest.mark.semantics
def test_get_to_every_epc_value(node, peer):
    """A Get of each EPC 0x00-0xFF alone: readable ones answered with their value, every other
    one Get_SNA with PDC 0; never a crash."""
    np = S.node_profile(node.addr)
    for epc in range(256):
        req = S.frame(0x5000 + epc, CONTROLLER, NODE_PROFILE, GET, [(epc, b"")])
        want = S.get_reply(req, NODE_PROFILE, np, [epc])
        got = peer.ask(node.addr, req)
        assert got == want, f"EPC 0x{epc:02X}: {got.hex(' ')} (want {want.hex(' ')})"
