"""The node's objects (SPEC §5): the node profile and a home air conditioner, with their values.

Each object keeps every property as the bytes a Get answers with (EPC, PDC, EDT), built once:
the node profile never changes, and a Set rebuilds only the property it changes. Answering a
Get is then a join of stored bytes. The three property maps are computed from the tables, so
they cannot disagree with what the object really answers and accepts.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import frame
import propmap

ANNOUNCE_MAP = 0x9D
SET_MAP = 0x9E
GET_MAP = 0x9F

EXPERIMENTAL_MAKER = b"\xff\xff\xff"  # manufacturer code reserved for experiments


class EchonetObject:
    """One object: its EOJ, its properties, and for each settable EPC the EDT bytes it accepts.

    Every settable property takes exactly one byte (PDC 1), as every one in SPEC §5 does.
    """

    __slots__ = ("eoj", "wire", "_accepts")

    def __init__(
        self,
        eoj: bytes,
        values: Mapping[int, bytes],
        announced: Iterable[int],
        accepts: Mapping[int, frozenset[int]],
    ) -> None:
        if len(eoj) != 3:
            raise ValueError("an EOJ is 3 bytes")
        self.eoj = bytes(eoj)
        self._accepts = dict(accepts)
        table = dict(values)
        table[ANNOUNCE_MAP] = propmap.encode(announced)
        table[SET_MAP] = propmap.encode(self._accepts)
        table[GET_MAP] = propmap.encode([*table, GET_MAP])
        # EPC -> the property as a Get_Res carries it.
        self.wire: dict[int, bytes] = {
            epc: frame.property_bytes(epc, edt) for epc, edt in sorted(table.items())
        }

    def edt(self, epc: int) -> bytes | None:
        """The property's current value, None if the object has no such property."""
        wire = self.wire.get(epc)
        return None if wire is None else wire[2:]

    def set(self, epc: int, edt) -> bool:
        """Apply one Set: True if accepted (and stored), False if refused (nothing changes)."""
        accepted = self._accepts.get(epc)
        if accepted is None or len(edt) != 1 or edt[0] not in accepted:
            return False
        self.wire[epc] = bytes((epc, 1, edt[0]))
        return True

    @property
    def epcs(self) -> list[int]:
        return sorted(self.wire)


def _byte_range(first: int, last: int) -> frozenset[int]:
    return frozenset(range(first, last + 1))


def air_conditioner(instance: int = 1) -> EchonetObject:
    """A home air conditioner (0x0130), off, automatic, 20 °C (SPEC §5 table)."""
    values = {
        0x80: b"\x31",  # operating status: off
        0x81: b"\x00",  # installation location: not set
        0x82: bytes.fromhex("00005201"),  # Appendix R rev. 1
        0x88: b"\x42",  # fault status: no fault
        0x8A: EXPERIMENTAL_MAKER,
        0x8F: b"\x42",  # power-saving operation: normal
        0x93: b"\x42",  # remote control setting
        0x97: bytes.fromhex("0c00"),  # current time 12:00
        0x98: bytes.fromhex("07e60101"),  # current date 2022-01-01
        0xA0: b"\x41",  # air flow rate: auto
        0xB0: b"\x41",  # operation mode: auto
        0xB1: b"\x41",  # automatic temperature control
        0xB3: b"\x14",  # set temperature 20 °C
        0xBA: b"\x32",  # room relative humidity 50 %
        0xBB: b"\x14",  # room temperature 20 °C
    }
    accepts = {
        0x80: frozenset((0x30, 0x31)),  # on, off
        0x81: _byte_range(0x00, 0xFF),  # any location code
        0xA0: _byte_range(0x31, 0x38) | {0x41},  # levels 1-8, auto
        0xB0: _byte_range(0x40, 0x45),  # other, auto, cool, heat, dry, fan
        0xB3: _byte_range(0x00, 0x32),  # 0-50 °C
    }
    eoj = frame.AIR_CONDITIONER[:2] + bytes((instance,))
    return EchonetObject(eoj, values, announced=(0x80, 0x81, 0x88, 0xB0), accepts=accepts)


def node_profile(addr: bytes, devices: Iterable[EchonetObject]) -> EchonetObject:
    """The node profile (0x0EF001) of a node at IPv4 `addr` (4 bytes) carrying `devices`."""
    if len(addr) != 4:
        raise ValueError("an IPv4 address is 4 bytes")
    instances = [d.eoj for d in devices]
    classes = list(dict.fromkeys(eoj[:2] for eoj in instances))  # first-seen order, unique
    instance_list = bytes((len(instances),)) + b"".join(instances)
    values = {
        0x80: b"\x30",  # operating status: on
        0x82: bytes.fromhex("010e0100"),  # version 1.14, format 1
        # Identification number: 0xFE, manufacturer code, then a unique ID: nine zeros and the
        # node's IPv4 address, unique among nodes on one network.
        0x83: b"\xfe" + EXPERIMENTAL_MAKER + bytes(9) + bytes(addr),
        0x8A: EXPERIMENTAL_MAKER,
        0xD3: len(instances).to_bytes(3, "big"),  # self-node instances
        0xD4: (len(classes) + 1).to_bytes(2, "big"),  # self-node classes, node profile included
        0xD5: instance_list,  # instance list notification
        0xD6: instance_list,  # self-node instance list S
        0xD7: bytes((len(classes),)) + b"".join(classes),  # self-node class list S
    }
    return EchonetObject(frame.NODE_PROFILE, values, announced=(0x80, 0xD5), accepts={})


def node_objects(addr: bytes) -> list[EchonetObject]:
    """Every object of one node, node profile first."""
    device = air_conditioner()
    return [node_profile(addr, [device]), device]
