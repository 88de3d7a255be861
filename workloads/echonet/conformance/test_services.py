"""Writing the node and the other services (SPEC §5, §6): SetI, SetC and their refusals, the
range of every settable property, SetGet, INF_REQ, INFC, and what is not a request. Each test
that changes the node has a node of its own."""

from __future__ import annotations

import echonet_spec as S
import pytest
from echonet_spec import AIRCON, CONTROLLER, NODE_PROFILE, h
from test_get import assert_bytes

pytestmark = pytest.mark.semantics


def current(peer, node, epcs: list[int], obj: int = AIRCON) -> dict[int, bytes]:
    """The node's values of `epcs` now (one Get)."""
    r = S.decode(peer.ask(node.addr, S.get_request(0x7F00, obj, epcs)))
    return dict(r.props)


def expect_values(peer, node, want: dict[int, bytes], why: str, obj: int = AIRCON) -> None:
    got = current(peer, node, list(want), obj)
    diff = {f"{e:02x}": (got.get(e, b"").hex(), v.hex()) for e, v in want.items()
            if got.get(e) != v}  # fmt: skip
    assert not diff, f"{why}: EPC: (now, expected) {diff}"


def setf(tid: int, esv: int, sets: list[tuple[int, bytes]], obj: int = AIRCON) -> bytes:
    return S.frame(tid, CONTROLLER, obj, esv, sets)


# ---- SetI ----------------------------------------------------------------------------------


def test_seti_success_sends_nothing_and_persists(fresh_node, peer):
    n = fresh_node()
    sets = [(0x80, h("30")), (0xB3, h("19")), (0xB0, h("42"))]
    peer.assert_no_reply(n.addr, setf(0x1001, S.SETI, sets), "a SetI that succeeds")
    expect_values(peer, n, dict(sets), "values after the SetI")
    expect_values(peer, n, dict(sets), "values a second Get later")


def test_seti_sna(fresh_node, peer):
    n = fresh_node()
    sets = [(0x80, h("30")), (0xB3, h("33")), (0x88, h("41")), (0xA0, h("35 35")),
            (0x81, h("2A"))]  # fmt: skip
    req = setf(0x1002, S.SETI, sets)
    want = S.reply(req, AIRCON, S.SETI_SNA,
                   [(0x80, b""), (0xB3, h("33")), (0x88, h("41")), (0xA0, h("35 35")),
                    (0x81, b"")])  # fmt: skip
    assert_bytes(
        peer.ask(n.addr, req),
        want,
        "SetI_SNA: accepted EPCs PDC 0, refused ones with the request's PDC and EDT",
    )
    expect_values(
        peer,
        n,
        {0x80: h("30"), 0x81: h("2A"), 0xB3: h("14"), 0x88: h("42"), 0xA0: h("41")},
        "accepted Sets of a refused SetI stay applied, refused ones change nothing",
    )


# ---- SetC ----------------------------------------------------------------------------------


def test_setc_success(fresh_node, peer):
    n = fresh_node()
    sets = [(0x80, h("30")), (0x81, h("05")), (0xA0, h("35")), (0xB0, h("42")),
            (0xB3, h("1A"))]  # fmt: skip
    req = setf(0x1003, S.SETC, sets)
    want = S.reply(req, AIRCON, S.SET_RES, [(e, b"") for e, _ in sets])
    assert_bytes(peer.ask(n.addr, req), want, "Set_Res: every EPC with PDC 0")
    expect_values(peer, n, dict(sets), "values after the SetC")


def test_setc_sna_keeps_accepted_sets(fresh_node, peer):
    n = fresh_node()
    sets = [(0xB3, h("19")), (0xB3, h("FF")), (0x80, h("32")), (0x81, h("7F")), (0xBB, h("15"))]
    req = setf(0x1004, S.SETC, sets)
    want = S.reply(req, AIRCON, S.SETC_SNA,
                   [(0xB3, b""), (0xB3, h("FF")), (0x80, h("32")), (0x81, b""),
                    (0xBB, h("15"))])  # fmt: skip
    assert_bytes(peer.ask(n.addr, req), want, "SetC_SNA")
    expect_values(peer, n, {0xB3: h("19"), 0x80: h("31"), 0x81: h("7F"), 0xBB: h("14")},
                  "after a partly refused SetC")  # fmt: skip


def test_sets_apply_in_order(fresh_node, peer):
    n = fresh_node()
    sets = [(0xB3, h("10")), (0xB3, h("11")), (0xB3, h("12"))]
    req = setf(0x1005, S.SETC, sets)
    assert_bytes(peer.ask(n.addr, req), S.reply(req, AIRCON, S.SET_RES,
                 [(0xB3, b"")] * 3), "Set_Res")  # fmt: skip
    expect_values(peer, n, {0xB3: h("12")}, "the last of three Sets of 0xB3 wins")


@pytest.mark.parametrize("epc", sorted(S.SETTABLE), ids=lambda e: f"{e:02x}")
def test_set_range(fresh_node, peer, epc):
    """Every one-byte value, then PDC 0 and PDC 2: accepted exactly within SPEC §5's range, and
    a refused value leaves the last accepted one in place."""
    n = fresh_node()
    value = S.aircon_initial()[epc]
    wrong = []
    for v in [*range(256), None, -1]:
        edt = b"" if v is None else bytes([0x30, 0x30]) if v == -1 else bytes([v])
        req = setf(0x2000 + (v if isinstance(v, int) and v >= 0 else 0x100), S.SETC,
                   [(epc, edt)])  # fmt: skip
        ok = S.set_accepts(epc, edt)
        want = S.reply(req, AIRCON, S.SET_RES if ok else S.SETC_SNA,
                       [(epc, b"" if ok else edt)])  # fmt: skip
        got = peer.ask(n.addr, req)
        if got != want:
            wrong.append(f"EDT {edt.hex() or '(PDC 0)'}: reply {got.hex(' ')} "
                         f"(want {want.hex(' ')})")  # fmt: skip
        if ok:
            value = edt
        now = current(peer, n, [epc]).get(epc)
        if now != value:
            wrong.append(
                f"after Set {edt.hex() or '(PDC 0)'} ({'accepted' if ok else 'refused'}"
                f"): value {now.hex() if now else None}, want {value.hex()}"
            )
        if len(wrong) > 4:
            break
    assert not wrong, f"0x{epc:02X}:\n" + "\n".join(wrong)


@pytest.mark.parametrize(
    "obj,epc,edt",
    [(NODE_PROFILE, 0x80, h("30")), (NODE_PROFILE, 0xD6, h("01 01 30 01")),
     (AIRCON, 0x82, h("00 00 52 01")), (AIRCON, 0x88, h("41")), (AIRCON, 0xBB, h("15")),
     (AIRCON, 0xF0, h("01"))],
    ids=["np-80", "np-d6", "ac-82", "ac-88", "ac-bb", "ac-f0"],
)  # fmt: skip
def test_set_of_unsettable_property_is_refused(fresh_node, peer, obj, epc, edt):
    n = fresh_node()
    before = S.objects(n.addr)[obj]
    req = setf(0x1006, S.SETC, [(epc, edt)], obj)
    assert_bytes(peer.ask(n.addr, req), S.reply(req, obj, S.SETC_SNA, [(epc, edt)]),
                 f"SetC of {obj:06x} 0x{epc:02X}, not in its set map")  # fmt: skip
    if epc in before:
        expect_values(peer, n, {epc: before[epc]}, "a refused Set changed the value", obj)


# ---- SetGet --------------------------------------------------------------------------------


def test_setget_success(fresh_node, peer):
    n = fresh_node()
    sets, gets = [(0x80, h("30")), (0xB3, h("18"))], [0x80, 0xB3, 0xBB]
    req = S.setget_frame(0x1101, CONTROLLER, AIRCON, S.SETGET, sets, [(e, b"") for e in gets])
    want = S.reply(req, AIRCON, S.SETGET_RES, [(0x80, b""), (0xB3, b"")],
                   [(0x80, h("30")), (0xB3, h("18")), (0xBB, h("14"))])  # fmt: skip
    assert_bytes(
        peer.ask(n.addr, req),
        want,
        "SetGet_Res (0x7E): the Set part as Set_Res, the Get part after the Sets",
    )
    expect_values(peer, n, dict(sets), "values after the SetGet")


@pytest.mark.parametrize(
    "sets,gets,set_part,get_part",
    [([(0x80, h("30")), (0xB3, h("FF"))], [0x80, 0xB3],
      [(0x80, b""), (0xB3, h("FF"))], [(0x80, h("30")), (0xB3, h("14"))]),
     ([(0xB0, h("43"))], [0xB0, 0xFF],
      [(0xB0, b"")], [(0xB0, h("43")), (0xFF, b"")]),
     ([(0x88, h("41"))], [0x88],
      [(0x88, h("41"))], [(0x88, h("42"))])],
    ids=["set-refused", "get-unreadable", "unsettable"],
)  # fmt: skip
def test_setget_sna(fresh_node, peer, sets, gets, set_part, get_part):
    n = fresh_node()
    req = S.setget_frame(0x1102, CONTROLLER, AIRCON, S.SETGET, sets, [(e, b"") for e in gets])
    want = S.reply(req, AIRCON, S.SETGET_SNA, set_part, get_part)
    assert_bytes(peer.ask(n.addr, req), want, "SetGet_SNA (0x5E), both parts")


# ---- INF_REQ, INFC -------------------------------------------------------------------------


@pytest.mark.parametrize(
    "obj,epcs",
    [(NODE_PROFILE, [0xD5]), (AIRCON, [0x80, 0xB3]), (AIRCON, [0x80, 0xFF]),
     (NODE_PROFILE, [0x9E, 0x81])],
    ids=["np-d5", "ac-80-b3", "ac-sna", "np-sna"],
)  # fmt: skip
def test_inf_req_is_answered_by_unicast(node, peer, obj, epcs):
    req = S.frame(0x1201, CONTROLLER, obj, S.INF_REQ, [(e, b"") for e in epcs])
    want = S.get_reply(req, obj, S.objects(node.addr)[obj], epcs, ok=S.INF, sna=S.INF_SNA)
    assert_bytes(peer.ask(node.addr, req), want,
                 "INF_REQ: INF (0x73) or INF_SNA (0x53) unicast to the requester")  # fmt: skip


@pytest.mark.parametrize("obj", [NODE_PROFILE, AIRCON], ids=["np", "ac"])
def test_infc_is_answered_with_infc_res(node, peer, obj):
    props = [(0xD5, h("01 01 30 01")), (0x80, h("30"))]
    req = S.frame(0x1301, CONTROLLER, obj, S.INFC, props)
    want = S.reply(req, obj, S.INFC_RES, [(e, b"") for e, _ in props])
    assert_bytes(peer.ask(node.addr, req), want, "INFC_Res (0x7A): each EPC with PDC 0")


# ---- what is not a request -----------------------------------------------------------------

NOT_REQUESTS = [S.SET_RES, S.GET_RES, S.INF, S.INFC_RES, S.SETI_SNA, S.SETC_SNA, S.GET_SNA,
                S.INF_SNA, 0x00, 0x64, 0x6F, 0xFF]  # fmt: skip
NOT_REQUESTS_SETGET = [S.SETGET_RES, S.SETGET_SNA]


def _not_request(esv: int, tid: int) -> bytes:
    if esv in NOT_REQUESTS_SETGET:
        return S.setget_frame(tid, CONTROLLER, NODE_PROFILE, esv, [(0x80, b"")],
                              [(0x80, h("30"))])  # fmt: skip
    return S.frame(tid, CONTROLLER, NODE_PROFILE, esv, [(0x80, h("30"))])


def test_replies_and_inf_sent_to_the_node_are_ignored_and_counted(fresh_node, peer):
    n = fresh_node()
    esvs = NOT_REQUESTS + NOT_REQUESTS_SETGET
    for i, esv in enumerate(esvs):
        peer.assert_no_reply(n.addr, _not_request(esv, 0x1400 + i), f"ESV 0x{esv:02X}")
    c = n.counters()
    want = {"received": 2 * len(esvs), "requests": len(esvs), "replies": len(esvs),
            "ignored": len(esvs), "dropped_malformed": 0, "dropped_format2": 0}  # fmt: skip
    assert {k: c[k] for k in want} == want, c


def test_unknown_objects_are_counted_as_ignored(fresh_node, peer):
    n = fresh_node()
    deojs = [0x0EF002, 0x013002, 0x029001, 0x05FF01]
    for i, deoj in enumerate(deojs):
        peer.assert_no_reply(n.addr, S.get_request(0x1500 + i, deoj, [0x80]), f"DEOJ {deoj:06x}")
    c = n.counters()
    want = {"received": 8, "requests": 4, "replies": 4, "ignored": 4}
    assert {k: c[k] for k in want} == want, c
