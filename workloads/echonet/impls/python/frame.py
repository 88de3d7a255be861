"""The ECHONET Lite wire format, format 1 (SPEC §3): constants, a bounds-checked decoder, encoders.

The decoder walks the datagram with bounds checks: every OPC and PDC is checked against the
bytes actually received before it is used, and nothing is sized from a length field. What
cannot be a format-1 frame raises Malformed, a format-2 frame raises Format2; the node counts
both and moves on, so these are the only exceptions decoding raises.
"""

from __future__ import annotations

from collections.abc import Sequence

PORT = 3610
MULTICAST_GROUP = "224.0.23.0"

EHD1 = 0x10
EHD2_FORMAT1 = 0x81
EHD2_FORMAT2 = 0x82
EHD = bytes((EHD1, EHD2_FORMAT1))

HEADER_SIZE = 12  # EHD1 EHD2 TID(2) SEOJ(3) DEOJ(3) ESV OPC
SETGET_MIN_SIZE = 14  # SetGet needs OPCSet and OPCGet
RECV_SIZE = 65536  # any IPv4 datagram is read whole (SPEC §2)
MAX_PAYLOAD = 65507  # the largest UDP payload IPv4 can carry

# Services (ESV). Requests:
SETI = 0x60
SETC = 0x61
GET = 0x62
INF_REQ = 0x63
SETGET = 0x6E
# Replies and notifications:
SET_RES = 0x71
GET_RES = 0x72
INF = 0x73
INFC = 0x74
INFC_RES = 0x7A
SETGET_RES = 0x7E
# Refusals:
SETI_SNA = 0x50
SETC_SNA = 0x51
GET_SNA = 0x52
INF_SNA = 0x53
SETGET_SNA = 0x5E

# The services whose body is OPCSet + set part + OPCGet + get part.
SETGET_FAMILY = frozenset((SETGET, SETGET_RES, SETGET_SNA))

# What a controller accepts as the answer to each request (SPEC §8: "a reply to the request's
# ESV"). SetI succeeds silently, so only its refusal is an answer.
REPLY_ESVS = {
    SETI: frozenset((SETI_SNA,)),
    SETC: frozenset((SET_RES, SETC_SNA)),
    GET: frozenset((GET_RES, GET_SNA)),
    INF_REQ: frozenset((INF, INF_SNA)),
    SETGET: frozenset((SETGET_RES, SETGET_SNA)),
    INFC: frozenset((INFC_RES,)),
}

# Objects (EOJ: class group, class, instance).
NODE_PROFILE = bytes.fromhex("0ef001")
AIR_CONDITIONER = bytes.fromhex("013001")
CONTROLLER = bytes.fromhex("05ff01")
ALL_INSTANCES = 0x00  # DEOJ instance 0: every instance of the class


class FrameError(Exception):
    """The datagram is not a format-1 frame this node answers."""


class Malformed(FrameError):
    """Not a frame at all (SPEC §3 'Malformed'): dropped and counted in dropped_malformed."""


class Format2(FrameError):
    """A well-formed format-2 frame (EHD2 0x82): dropped and counted in dropped_format2."""


class Frame:
    """One decoded format-1 frame.

    tid, seoj and deoj are bytes (2, 3 and 3 long); `properties` is a list of (EPC, EDT) with
    EDT bytes. For the
    SetGet family `properties` is the set part and `get_properties` the get part; for every
    other service `get_properties` is None.
    """

    __slots__ = ("tid", "seoj", "deoj", "esv", "properties", "get_properties")

    def __init__(self, tid, seoj, deoj, esv, properties, get_properties=None) -> None:
        self.tid = tid
        self.seoj = seoj
        self.deoj = deoj
        self.esv = esv
        self.properties = properties
        self.get_properties = get_properties

    def __repr__(self) -> str:
        return (
            f"Frame(tid={self.tid.hex()}, seoj={self.seoj.hex()}, deoj={self.deoj.hex()}, "
            f"esv={self.esv:02x}, properties={self.properties!r}, "
            f"get_properties={self.get_properties!r})"
        )


_EMPTY = b""


def _properties(data: bytes, p: int, end: int, count: int) -> tuple[list, int]:
    """`count` (EPC, EDT) pairs from offset p, each checked against `end`; (list, next offset)."""
    out = []
    append = out.append
    for _ in range(count):
        if p + 2 > end:
            raise Malformed("OPC is larger than the properties the datagram holds")
        pdc = data[p + 1]
        q = p + 2 + pdc
        if q > end:
            raise Malformed("a PDC runs past the end of the datagram")
        # A Get's EDTs are nearly always empty: share one empty object instead of a slice.
        append((data[p], data[p + 2 : q] if pdc else _EMPTY))
        p = q
    return out, p


def decode(data: bytes) -> Frame:
    """The frame a datagram holds. Raises Malformed or Format2, nothing else.

    `data` is exactly the datagram, as bytes: the node copies it out of its receive buffer
    once (memoryview.tobytes), so every field is a plain slice and the buffer can be reused.
    """
    end = len(data)
    if end < HEADER_SIZE:
        raise Malformed("shorter than 12 bytes")
    if data[0] != EHD1:
        raise Malformed("EHD1 is not 0x10")
    ehd2 = data[1]
    if ehd2 != EHD2_FORMAT1:
        if ehd2 == EHD2_FORMAT2:
            raise Format2("format 2 (EHD2 0x82) is not supported")
        raise Malformed("EHD2 is neither 0x81 nor 0x82")
    esv = data[10]
    if esv in SETGET_FAMILY:
        if end < SETGET_MIN_SIZE:
            raise Malformed("a SetGet shorter than 14 bytes")
        set_count = data[11]
        set_part, p = _properties(data, 12, end, set_count)
        if p >= end:
            raise Malformed("a SetGet without OPCGet")
        get_count = data[p]
        if set_count + get_count == 0:
            raise Malformed("a SetGet with OPCSet + OPCGet = 0")
        get_part, p = _properties(data, p + 1, end, get_count)
    else:
        count = data[11]
        if count == 0:
            raise Malformed("OPC is 0")
        set_part, p = _properties(data, 12, end, count)
        get_part = None
    if p != end:
        raise Malformed("bytes left over after the last property")
    return Frame(data[2:4], data[4:7], data[7:10], esv, set_part, get_part)


def property_bytes(epc: int, edt=_EMPTY) -> bytes:
    """One property as it travels: EPC, PDC, EDT."""
    if not 0 <= epc <= 0xFF:
        raise ValueError(f"EPC {epc} is not a byte")
    if len(edt) > 0xFF:
        raise ValueError(f"EDT of EPC {epc:02x} is {len(edt)} bytes, more than a PDC can say")
    return bytes((epc, len(edt))) + bytes(edt)


def _part(properties: Sequence[tuple[int, bytes]]) -> bytes:
    if len(properties) > 0xFF:
        raise ValueError(f"{len(properties)} properties, more than an OPC can say")
    return bytes((len(properties),)) + b"".join(property_bytes(e, d) for e, d in properties)


def encode(
    tid: bytes,
    seoj: bytes,
    deoj: bytes,
    esv: int,
    properties: Sequence[tuple[int, bytes]],
    get_properties: Sequence[tuple[int, bytes]] | None = None,
) -> bytes:
    """A whole format-1 frame. For the SetGet family pass both parts (either may be empty).

    Raises ValueError for what the format cannot carry (a field of the wrong size, more than
    255 properties or EDT bytes, a datagram larger than IPv4 can send).
    """
    if len(tid) != 2 or len(seoj) != 3 or len(deoj) != 3:
        raise ValueError("TID is 2 bytes, SEOJ and DEOJ 3 bytes each")
    body = _part(properties)
    if esv in SETGET_FAMILY:
        body += _part(get_properties or ())
    elif get_properties is not None:
        raise ValueError(f"ESV {esv:02x} has no get part")
    out = b"".join((EHD, bytes(tid), bytes(seoj), bytes(deoj), bytes((esv,)), body))
    if len(out) > MAX_PAYLOAD:
        raise ValueError(f"a frame of {len(out)} bytes does not fit in one UDP datagram")
    return out
