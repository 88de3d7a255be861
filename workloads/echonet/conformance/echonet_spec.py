"""What SPEC.md says, as bytes: the frame of §3, the property maps of §4, the objects and exact
values of §5 and the reply shapes of §6. Every expected byte of the suite comes from here, built
from the SPEC's tables; nothing is computed by calling an implementation.

(Named echonet_spec, not spec: conformance folders share one sys.path in a session that runs
several suites, and a module name must not shadow another suite's.)
"""

from __future__ import annotations

import ipaddress
import struct
from dataclasses import dataclass, field

PORT = 3610
GROUP = "224.0.23.0"

EHD1 = 0x10
FORMAT1 = 0x81
FORMAT2 = 0x82

# ESV (§3)
SETI, SETC, GET, INF_REQ, SETGET = 0x60, 0x61, 0x62, 0x63, 0x6E
SET_RES, GET_RES, INF, INFC, INFC_RES, SETGET_RES = 0x71, 0x72, 0x73, 0x74, 0x7A, 0x7E
SETI_SNA, SETC_SNA, GET_SNA, INF_SNA, SETGET_SNA = 0x50, 0x51, 0x52, 0x53, 0x5E
REQUESTS = (SETI, SETC, GET, INF_REQ, SETGET, INFC)
# What a controller accepts as the answer to each request (§8 "matches").
REPLIES_TO = {
    GET: (GET_RES, GET_SNA),
    SETC: (SET_RES, SETC_SNA),
    SETI: (SETI_SNA,),
    SETGET: (SETGET_RES, SETGET_SNA),
    INF_REQ: (INF, INF_SNA),
}

# EOJ (§3)
NODE_PROFILE = 0x0EF001
AIRCON = 0x013001
CONTROLLER = 0x05FF01


def eoj(v: int) -> bytes:
    return v.to_bytes(3, "big")


def hexs(b: bytes) -> str:
    """Hex as the controllers print it (§8: lower case, no separators)."""
    return b.hex()


def h(text: str) -> bytes:
    """Bytes written as in SPEC.md ("10 81 00 02 ...")."""
    return bytes.fromhex(text)


# ---- property maps (§4) --------------------------------------------------------------------


def propmap(epcs) -> bytes:
    """The exact encoding: N, then N EPCs ascending when N < 16, else the 16-byte bitmap where
    byte i holds the EPCs of low nibble i and bit j stands for high nibble 8 + j."""
    epcs = sorted(set(epcs))
    if len(epcs) < 16:
        return bytes([len(epcs), *epcs])
    bitmap = bytearray(16)
    for epc in epcs:
        assert 0x80 <= epc <= 0xFF
        bitmap[epc & 0x0F] |= 1 << ((epc >> 4) - 8)
    return bytes([len(epcs)]) + bytes(bitmap)


def propmap_epcs(data: bytes) -> list[int]:
    """The EPCs of a property map (the suite's own decoder, used to read controllers' output)."""
    n = data[0]
    if n < 16:
        return list(data[1 : 1 + n])
    return sorted(((j + 8) << 4) | i for i in range(16) for j in range(8) if data[1 + i] >> j & 1)


# ---- the objects (§5) ----------------------------------------------------------------------


def addr_bytes(addr: str) -> bytes:
    return ipaddress.IPv4Address(addr).packed


def node_profile(addr: str) -> dict[int, bytes]:
    """EPC -> EDT of the node profile 0x0EF001 of a node whose ADDR is `addr`, in EPC order."""
    props = {
        0x80: h("30"),
        0x82: h("01 0E 01 00"),
        0x83: h("FE FF FF FF") + bytes(9) + addr_bytes(addr),
        0x8A: h("FF FF FF"),
        0x9D: propmap([0x80, 0xD5]),
        0x9E: propmap([]),
        0x9F: b"",  # filled in below: the get map lists every EPC of the object
        0xD3: h("00 00 01"),
        0xD4: h("00 02"),
        0xD5: h("01 01 30 01"),
        0xD6: h("01 01 30 01"),
        0xD7: h("01 01 30"),
    }
    props[0x9F] = propmap(props)
    return props


# The 12 EPCs of the node profile, in the order of the seed's Get and of `bench` (§6, §8).
NODE_PROFILE_EPCS = [0x80, 0x82, 0x83, 0x8A, 0x9D, 0x9E, 0x9F, 0xD3, 0xD4, 0xD5, 0xD6, 0xD7]

# What a Set accepts (§5): EPC -> the accepted one-byte values.
SETTABLE: dict[int, frozenset[int]] = {
    0x80: frozenset({0x30, 0x31}),
    0x81: frozenset(range(0x100)),
    0xA0: frozenset({*range(0x31, 0x39), 0x41}),
    0xB0: frozenset(range(0x40, 0x46)),
    0xB3: frozenset(range(0x00, 0x33)),
}


def aircon_initial() -> dict[int, bytes]:
    """EPC -> EDT of the home air conditioner 0x013001 at start, in EPC order."""
    props = {
        0x80: h("31"),
        0x81: h("00"),
        0x82: h("00 00 52 01"),
        0x88: h("42"),
        0x8A: h("FF FF FF"),
        0x8F: h("42"),
        0x93: h("42"),
        0x97: h("0C 00"),
        0x98: h("07 E6 01 01"),
        0x9D: propmap([0x80, 0x81, 0x88, 0xB0]),
        0x9E: propmap(SETTABLE),
        0x9F: b"",
        0xA0: h("41"),
        0xB0: h("41"),
        0xB1: h("41"),
        0xB3: h("14"),
        0xBA: h("32"),
        0xBB: h("14"),
    }
    props[0x9F] = propmap(props)
    return props


def objects(addr: str) -> dict[int, dict[int, bytes]]:
    return {NODE_PROFILE: node_profile(addr), AIRCON: aircon_initial()}


# The SPEC's own literals, against which the tables above are checked at import: a typo in
# either shows up here, not as a mysterious failure of every implementation.
_SPEC_AIRCON_9F = h("12 0D 09 01 0A 00 00 00 02 03 00 09 08 00 02 02 03")
_SPEC_NODE_9F = h("0C 80 82 83 8A 9D 9E 9F D3 D4 D5 D6 D7")
assert aircon_initial()[0x9F] == _SPEC_AIRCON_9F
assert aircon_initial()[0x9E] == h("05 80 81 A0 B0 B3")
assert aircon_initial()[0x9D] == h("04 80 81 88 B0")
assert node_profile("0.0.0.0")[0x9F] == _SPEC_NODE_9F
assert node_profile("0.0.0.0")[0x9D] == h("02 80 D5")
assert list(node_profile("0.0.0.0")) == NODE_PROFILE_EPCS
assert propmap_epcs(_SPEC_AIRCON_9F) == sorted(aircon_initial())
assert len(node_profile("0.0.0.0")[0x83]) == 17


# ---- frames (§3) ---------------------------------------------------------------------------

Prop = tuple[int, bytes]  # (EPC, EDT); the PDC is len(EDT)


def props_bytes(props: list[Prop]) -> bytes:
    out = bytearray([len(props)])
    for epc, edt in props:
        out += bytes([epc, len(edt)]) + edt
    return bytes(out)


def frame(tid: int, seoj: int, deoj: int, esv: int, props: list[Prop]) -> bytes:
    return (
        bytes([EHD1, FORMAT1]) + struct.pack(">H", tid) + eoj(seoj) + eoj(deoj) + bytes([esv])
        + props_bytes(props)
    )  # fmt: skip


def setget_frame(tid: int, seoj: int, deoj: int, esv: int, sets: list[Prop],
                 gets: list[Prop]) -> bytes:  # fmt: skip
    return (
        bytes([EHD1, FORMAT1]) + struct.pack(">H", tid) + eoj(seoj) + eoj(deoj) + bytes([esv])
        + props_bytes(sets) + props_bytes(gets)
    )  # fmt: skip


def get_request(tid: int, deoj: int, epcs: list[int], seoj: int = CONTROLLER) -> bytes:
    return frame(tid, seoj, deoj, GET, [(e, b"") for e in epcs])


@dataclass
class Frame:
    """A decoded format-1 frame (strict: anything malformed raises ValueError)."""

    tid: int
    seoj: int
    deoj: int
    esv: int
    props: list[Prop] = field(default_factory=list)
    gets: list[Prop] | None = None  # SetGet family: props are the set part

    @property
    def epcs(self) -> list[int]:
        return [e for e, _ in self.props]


def _read_props(data: bytes, i: int) -> tuple[list[Prop], int]:
    if i >= len(data):
        raise ValueError("no OPC")
    n, i = data[i], i + 1
    props = []
    for _ in range(n):
        if i + 2 > len(data):
            raise ValueError("OPC larger than the properties present")
        epc, pdc = data[i], data[i + 1]
        if i + 2 + pdc > len(data):
            raise ValueError("PDC past the end")
        props.append((epc, bytes(data[i + 2 : i + 2 + pdc])))
        i += 2 + pdc
    return props, i


def decode(data: bytes) -> Frame:
    if len(data) < 12 or data[0] != EHD1 or data[1] != FORMAT1:
        raise ValueError(f"not a format-1 frame: {data.hex()}")
    tid = struct.unpack(">H", data[2:4])[0]
    f = Frame(tid, int.from_bytes(data[4:7], "big"), int.from_bytes(data[7:10], "big"), data[10])
    f.props, i = _read_props(data, 11)
    if f.esv in (SETGET, SETGET_RES, SETGET_SNA):
        f.gets, i = _read_props(data, i)
    if i != len(data):
        raise ValueError(f"{len(data) - i} bytes after the last property")
    return f


# ---- replies (§6) --------------------------------------------------------------------------


def reply(request: bytes, answerer: int, esv: int, props: list[Prop],
          gets: list[Prop] | None = None) -> bytes:  # fmt: skip
    """The reply to `request` from object `answerer`: same TID, SEOJ = answerer, DEOJ = the
    request's SEOJ."""
    tid = struct.unpack(">H", request[2:4])[0]
    seoj = int.from_bytes(request[4:7], "big")
    if gets is None:
        return frame(tid, answerer, seoj, esv, props)
    return setget_frame(tid, answerer, seoj, esv, props, gets)


def get_reply(request: bytes, answerer: int, values: dict[int, bytes], epcs: list[int],
              ok: int = GET_RES, sna: int = GET_SNA) -> bytes:  # fmt: skip
    """Get_Res with each EDT, or Get_SNA (readable EPCs with their EDT, the others PDC 0, same
    order) as soon as one EPC is not readable."""
    props = [(e, values.get(e, b"")) for e in epcs]
    esv = ok if all(e in values for e in epcs) else sna
    return reply(request, answerer, esv, props)


def set_accepts(epc: int, edt: bytes) -> bool:
    return epc in SETTABLE and len(edt) == 1 and edt[0] in SETTABLE[epc]


# ---- the node's start INF (§6) --------------------------------------------------------------


def start_inf_matches(data: bytes) -> bool:
    """`10 81 TT TT 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01`, any TID."""
    want = h("10 81 00 00 0E F0 01 0E F0 01 73 01 D5 04 01 01 30 01")
    return len(data) == len(want) and data[:2] == want[:2] and data[4:] == want[4:]


# ---- the SPEC's 36-byte Get and its 94-byte reply (§6) --------------------------------------

SPEC_GET_36 = h(
    "10 81 00 02 0E F0 01 0E F0 01 62 0C 80 00 82 00 83 00 8A 00 9D 00 9E 00 9F 00 D3 00 D4 00 "
    "D5 00 D6 00 D7 00"
)
SPEC_REPLY_94_127_0_0_1 = h(
    "10 81 00 02 0E F0 01 0E F0 01 72 0C 80 01 30 82 04 01 0E 01 00 83 11 FE FF FF FF 00 00 00 00 "
    "00 00 00 00 00 7F 00 00 01 8A 03 FF FF FF 9D 03 02 80 D5 9E 01 00 9F 0D 0C 80 82 83 8A 9D 9E "
    "9F D3 D4 D5 D6 D7 D3 03 00 00 01 D4 02 00 02 D5 04 01 01 30 01 D6 04 01 01 30 01 D7 03 01 01 "
    "30"
)
assert len(SPEC_GET_36) == 36 and len(SPEC_REPLY_94_127_0_0_1) == 94
assert SPEC_GET_36 == get_request(2, NODE_PROFILE, NODE_PROFILE_EPCS, seoj=NODE_PROFILE)
assert SPEC_REPLY_94_127_0_0_1 == get_reply(
    SPEC_GET_36, NODE_PROFILE, node_profile("127.0.0.1"), NODE_PROFILE_EPCS
)


def spec_reply_94(addr: str) -> bytes:
    """The SPEC's 94-byte reply with `addr` in place of 127.0.0.1 inside 0x83."""
    r = bytearray(SPEC_REPLY_94_127_0_0_1)
    at = r.index(h("7F 00 00 01"), 30)  # ADDR: the last 4 of the 17 bytes of 0x83
    r[at : at + 4] = addr_bytes(addr)
    return bytes(r)
