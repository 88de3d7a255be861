"""Reading the node (SPEC §5, §6): every property's exact bytes, the SPEC's 36-byte Get and its
94-byte reply, property maps, TIDs, the reply's destination, instance 0x00, unknown objects,
duplicates and Get_SNA. These only read, so they share one node per module."""

from __future__ import annotations

import echonet_procs as P
import echonet_spec as S
import pytest
from echonet_spec import AIRCON, CONTROLLER, GET, GET_SNA, NODE_PROFILE, h


def _hexdiff(got: bytes, want: bytes) -> str:
    at = next((i for i, (a, b) in enumerate(zip(got, want, strict=False)) if a != b),
              min(len(got), len(want)))  # fmt: skip
    return (f"\n got  ({len(got)} bytes): {got.hex(' ')}\n want ({len(want)} bytes): "
            f"{want.hex(' ')}\n first difference at offset {at}")  # fmt: skip


def assert_bytes(got: bytes, want: bytes, what: str) -> None:
    assert got == want, f"{what}:{_hexdiff(got, want)}"


def test_spec_36_byte_get(node, peer):
    """The seed's Get exactly as SPEC §6 writes it (SEOJ 0x0EF001, TID 0x0002)."""
    got = peer.ask(node.addr, S.SPEC_GET_36)
    assert_bytes(got, S.spec_reply_94(node.addr), "reply to the SPEC's 36-byte Get")


def test_twelve_properties_from_a_controller(node, peer):
    req = S.get_request(0x0102, NODE_PROFILE, S.NODE_PROFILE_EPCS)
    want = S.get_reply(req, NODE_PROFILE, S.node_profile(node.addr), S.NODE_PROFILE_EPCS)
    assert_bytes(peer.ask(node.addr, req), want, "12-property Get")


@pytest.mark.parametrize("epc", S.NODE_PROFILE_EPCS, ids=lambda e: f"{e:02x}")
def test_node_profile_property_alone(node, peer, epc):
    req = S.get_request(0x0100 + epc, NODE_PROFILE, [epc])
    want = S.get_reply(req, NODE_PROFILE, S.node_profile(node.addr), [epc])
    assert_bytes(peer.ask(node.addr, req), want, f"Get of node profile 0x{epc:02X}")


@pytest.mark.semantics
@pytest.mark.parametrize("epc", list(S.aircon_initial()), ids=lambda e: f"{e:02x}")
def test_aircon_property_alone(node, peer, epc):
    req = S.get_request(0x0200 + epc, AIRCON, [epc])
    want = S.get_reply(req, AIRCON, S.aircon_initial(), [epc])
    assert_bytes(peer.ask(node.addr, req), want, f"Get of air conditioner 0x{epc:02X}")


@pytest.mark.semantics
def test_aircon_every_property_at_once(node, peer):
    epcs = list(S.aircon_initial())
    req = S.get_request(0x0300, AIRCON, epcs)
    want = S.get_reply(req, AIRCON, S.aircon_initial(), epcs)
    assert_bytes(peer.ask(node.addr, req), want, "18-property Get of the air conditioner")


@pytest.mark.semantics
@pytest.mark.parametrize(
    "obj,epc,n,form",
    [(NODE_PROFILE, 0x9D, 2, "list"), (NODE_PROFILE, 0x9E, 0, "list"),
     (NODE_PROFILE, 0x9F, 12, "list"), (AIRCON, 0x9D, 4, "list"), (AIRCON, 0x9E, 5, "list"),
     (AIRCON, 0x9F, 18, "bitmap")],
    ids=["np-9d", "np-9e", "np-9f", "ac-9d", "ac-9e", "ac-9f"],
)  # fmt: skip
def test_property_map_encoding(node, peer, obj, epc, n, form):
    """SPEC §4: N, then the EPCs ascending below 16, else the 16-byte bitmap (N the true count)."""
    req = S.get_request(0x0400 + epc, obj, [epc])
    reply = S.decode(peer.ask(node.addr, req))
    assert reply.esv == S.GET_RES and reply.epcs == [epc], reply
    edt = reply.props[0][1]
    want = S.objects(node.addr)[obj][epc]
    assert len(S.propmap_epcs(want)) == n
    assert edt[:1] == bytes([n]), f"0x{epc:02X}: N is {edt[0] if edt else None}, not {n}"
    if form == "bitmap":
        assert len(edt) == 17, f"0x{epc:02X} with {n} EPCs must be the 16-byte bitmap form"
        assert S.propmap_epcs(edt) == S.propmap_epcs(want), (
            f"0x{epc:02X}: the bitmap holds "
            f"{[hex(e) for e in S.propmap_epcs(edt)]}, not {[hex(e) for e in S.propmap_epcs(want)]}"
        )
    assert_bytes(edt, want, f"property map 0x{epc:02X}")


@pytest.mark.parametrize("tid", [0x0000, 0xFFFF, 0x1234, 0x8001], ids=lambda t: f"{t:04x}")
def test_tid_is_echoed_verbatim(node, peer, tid):
    req = S.get_request(tid, NODE_PROFILE, [0x80])
    got = peer.ask(node.addr, req)
    assert got[2:4] == req[2:4], f"TID {got[2:4].hex()} in the reply to TID {req[2:4].hex()}"
    assert_bytes(got, S.get_reply(req, NODE_PROFILE, {0x80: h("30")}, [0x80]), "reply")


@pytest.mark.parametrize("from_port", ["ephemeral", "3610"])
def test_reply_goes_to_the_source_port(node, from_port):
    """SPEC §2: the reply goes to the request's source address AND port."""
    with P.Peer(0 if from_port == "ephemeral" else S.PORT) as p:
        # From an ephemeral port, the test also holds ADDR:3610, where a reply sent to the
        # wrong port lands (and is reported) instead of being lost.
        decoy = P.Peer(S.PORT, addr=p.addr) if from_port == "ephemeral" else None
        try:
            req = S.get_request(0x0501, NODE_PROFILE, [0x80])
            p.send(node.addr, req)
            got = p.recv(1.0)
            if got is None and decoy is not None and decoy.recv(0.05) is not None:
                raise AssertionError(
                    f"the reply went to {p.addr}:3610, not to the request's source port "
                    f"{p.port} (SPEC §2)"
                )
            assert got is not None, f"no reply at {p.addr}:{p.port}, the request's source"
            assert got[1] == (node.addr, S.PORT), f"reply from {got[1]}"
        finally:
            if decoy is not None:
                decoy.close()


@pytest.mark.parametrize("seoj", [CONTROLLER, NODE_PROFILE, 0x029001], ids=lambda e: f"{e:06x}")
def test_reply_is_addressed_to_the_request_seoj(node, peer, seoj):
    req = S.get_request(0x0600, NODE_PROFILE, [0x80], seoj=seoj)
    got = peer.ask(node.addr, req)
    assert_bytes(got, S.get_reply(req, NODE_PROFILE, {0x80: h("30")}, [0x80]),
                 "DEOJ of the reply = SEOJ of the request")  # fmt: skip


@pytest.mark.semantics
@pytest.mark.parametrize(
    "deoj,answerer,epc",
    [(0x0EF000, NODE_PROFILE, 0xD6), (0x013000, AIRCON, 0xB3)],
    ids=["0ef000", "013000"],
)  # fmt: skip
def test_instance_zero_means_every_instance(node, peer, deoj, answerer, epc):
    req = S.get_request(0x0700, deoj, [epc])
    want = S.get_reply(req, answerer, S.objects(node.addr)[answerer], [epc])
    assert_bytes(peer.ask(node.addr, req), want, f"Get to {deoj:06x} (instance 0x00), "
                 f"answered by {answerer:06x} with its own EOJ as SEOJ")  # fmt: skip
    peer.fence(node.addr)  # one object of the class: exactly one reply


@pytest.mark.parametrize(
    "deoj",
    [0x0EF002, 0x013002, 0x0130FF, 0x029001, 0x000000, 0x05FF01],
    ids=lambda e: f"{e:06x}",
)
def test_unknown_object_is_ignored(node, peer, deoj):
    req = S.get_request(0x0800, deoj, [0x80])
    peer.assert_no_reply(node.addr, req, f"Get to {deoj:06x}, which the node does not have")


@pytest.mark.semantics
def test_duplicates_answered_as_often_as_asked(node, peer):
    epcs = [0x80, 0x80, 0xD6, 0x80, 0xD6]
    req = S.get_request(0x0900, NODE_PROFILE, epcs)
    want = S.get_reply(req, NODE_PROFILE, S.node_profile(node.addr), epcs)
    assert_bytes(peer.ask(node.addr, req), want, "Get with duplicate EPCs")


@pytest.mark.semantics
@pytest.mark.parametrize(
    "obj,epcs",
    [(NODE_PROFILE, [0x80, 0x81, 0x9F, 0xFF, 0xD6, 0x00]),
     (NODE_PROFILE, [0xE0]),
     (AIRCON, [0xB3, 0xC0, 0x80, 0x83, 0xBB]),
     (NODE_PROFILE, [0x81, 0x80])],
    ids=["np-mixed", "np-none-readable", "ac-mixed", "np-first-unreadable"],
)  # fmt: skip
def test_get_sna_keeps_readable_values_in_request_order(node, peer, obj, epcs):
    req = S.get_request(0x0A00, obj, epcs)
    want = S.get_reply(req, obj, S.objects(node.addr)[obj], epcs)
    assert want[10] == GET_SNA
    got = peer.ask(node.addr, req)
    assert got[10:11] == bytes([GET_SNA]), f"ESV {got[10]:#04x}, not Get_SNA 0x52"
    assert_bytes(got, want, "Get_SNA: readable EPCs with their EDT, the others PDC 0, same order")


@pytest.mark.semantics
def test_get_ignores_the_request_edts(node, peer):
    req = S.frame(0x0B00, CONTROLLER, NODE_PROFILE, GET, [(0x80, h("31 32")), (0xD4, h("FF"))])
    want = S.get_reply(req, NODE_PROFILE, S.node_profile(node.addr), [0x80, 0xD4])
    assert_bytes(peer.ask(node.addr, req), want, "Get whose request carries EDTs")


@pytest.mark.semantics
def test_largest_get_is_answered(node, peer):
    """255 properties, each with a 252-byte EDT the node ignores: a 64,782-byte Get is a legal
    datagram, read whole (SPEC §2: 65,536-byte buffers)."""
    req = S.frame(0x0C00, CONTROLLER, NODE_PROFILE, GET, [(0x80, bytes(252))] * 255)
    assert len(req) == 64782
    want = S.get_reply(req, NODE_PROFILE, {0x80: h("30")}, [0x80] * 255)
    assert_bytes(peer.ask(node.addr, req), want, "reply to a 255-property Get")
