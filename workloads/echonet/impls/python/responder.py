"""One request in, its replies out (SPEC §6): Get, SetI, SetC, SetGet, INF_REQ, INFC.

A request is answered by every object its DEOJ names (instance 0x00: each object of the
class, once, with its own EOJ as SEOJ). Replies copy the TID, go back to the request's SEOJ and
list the properties in request order, duplicates as often as asked.
"""

from __future__ import annotations

from collections.abc import Iterable

import frame
from frame import EHD, Frame
from objects import EchonetObject

# EPC followed by PDC 0: an accepted Set, an unreadable Get, an acknowledged INFC.
_BARE = [bytes((epc, 0)) for epc in range(256)]
# ESV and OPC as one slice of a reply header.
_ESV_OPC = {
    esv: [bytes((esv, opc)) for opc in range(256)]
    for esv in (
        frame.GET_RES, frame.GET_SNA, frame.SET_RES, frame.SETC_SNA, frame.SETI_SNA,
        frame.INF, frame.INF_SNA, frame.INFC_RES,
    )
}  # fmt: skip
_ESV = {esv: bytes((esv,)) for esv in (frame.SETGET_RES, frame.SETGET_SNA)}


def _read(obj: EchonetObject, properties: list) -> tuple[list[bytes], bool]:
    """The get part of a reply: each EPC with its EDT, or with PDC 0 where unreadable."""
    wire = obj.wire
    try:
        return [wire[epc] for epc, _ in properties], True
    except KeyError:
        return [wire.get(epc) or _BARE[epc] for epc, _ in properties], False


def _write(obj: EchonetObject, properties: list) -> tuple[list[bytes], bool]:
    """Apply Sets in order; the set part: accepted EPCs with PDC 0, refused ones as sent."""
    out = []
    ok = True
    for epc, edt in properties:
        if obj.set(epc, edt):
            out.append(_BARE[epc])
        else:
            out.append(bytes((epc, len(edt))) + edt)
            ok = False
    return out, ok


def _reply(request: Frame, obj: EchonetObject, esv: int, parts: list[bytes]) -> bytes:
    return b"".join((EHD, request.tid, obj.eoj, request.seoj, _ESV_OPC[esv][len(parts)], *parts))


def _get(obj: EchonetObject, request: Frame) -> bytes:
    parts, ok = _read(obj, request.properties)
    return _reply(request, obj, frame.GET_RES if ok else frame.GET_SNA, parts)


def _inf_req(obj: EchonetObject, request: Frame) -> bytes:
    parts, ok = _read(obj, request.properties)
    return _reply(request, obj, frame.INF if ok else frame.INF_SNA, parts)


def _seti(obj: EchonetObject, request: Frame) -> bytes | None:
    parts, ok = _write(obj, request.properties)
    return None if ok else _reply(request, obj, frame.SETI_SNA, parts)


def _setc(obj: EchonetObject, request: Frame) -> bytes:
    parts, ok = _write(obj, request.properties)
    return _reply(request, obj, frame.SET_RES if ok else frame.SETC_SNA, parts)


def _infc(obj: EchonetObject, request: Frame) -> bytes:
    return _reply(request, obj, frame.INFC_RES, [_BARE[epc] for epc, _ in request.properties])


def _setget(obj: EchonetObject, request: Frame) -> bytes:
    # Sets first, so the get part reads what this request wrote.
    set_parts, set_ok = _write(obj, request.properties)
    get_parts, get_ok = _read(obj, request.get_properties)
    esv = frame.SETGET_RES if set_ok and get_ok else frame.SETGET_SNA
    return b"".join(
        (
            EHD, request.tid, obj.eoj, request.seoj, _ESV[esv],
            bytes((len(set_parts),)), *set_parts, bytes((len(get_parts),)), *get_parts,
        )
    )  # fmt: skip


_SERVICES = {
    frame.GET: _get,
    frame.SETI: _seti,
    frame.SETC: _setc,
    frame.SETGET: _setget,
    frame.INF_REQ: _inf_req,
    frame.INFC: _infc,
}

_NO_REPLY: tuple[bytes, ...] = ()


class Responder:
    """Answers the requests addressed to a node's objects."""

    __slots__ = ("objects", "_targets")

    def __init__(self, objects: Iterable[EchonetObject]) -> None:
        self.objects = list(objects)
        # DEOJ -> the objects that answer it: each object's own EOJ, and instance 0x00 of its
        # class for all of them.
        targets: dict[bytes, list[EchonetObject]] = {}
        for obj in self.objects:
            targets.setdefault(obj.eoj, []).append(obj)
            targets.setdefault(obj.eoj[:2] + bytes((frame.ALL_INSTANCES,)), []).append(obj)
        self._targets = {deoj: tuple(objs) for deoj, objs in targets.items()}

    def answer(self, request: Frame) -> tuple[bytes, ...] | None:
        """The datagrams that answer `request`, in order; () for a request that needs none (a
        SetI that succeeded); None when the node ignores it (not a request, or its DEOJ names
        no object of this node).
        """
        service = _SERVICES.get(request.esv)
        if service is None:
            return None
        targets = self._targets.get(request.deoj)
        if targets is None:
            return None
        if len(targets) == 1:
            reply = service(targets[0], request)
            return _NO_REPLY if reply is None else (reply,)
        replies = (service(obj, request) for obj in targets)
        return tuple(r for r in replies if r is not None)

    def announcement(self, tid: bytes) -> bytes:
        """The INF a node multicasts at start: its node profile's instance list (EPC 0xD5)."""
        profile = self._targets[frame.NODE_PROFILE][0]
        return frame.encode(
            tid, profile.eoj, frame.NODE_PROFILE, frame.INF, [(0xD5, profile.edt(0xD5))]
        )
