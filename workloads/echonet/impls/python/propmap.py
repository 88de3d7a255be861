"""Property maps (SPEC §4): which EPCs an object announces, accepts Sets of, or answers Gets of.

First byte N = the number of properties. Below 16 the EPCs follow as a list; from 16 on a
16-byte bitmap follows, byte i holding the EPCs whose low nibble is i, bit j standing for high
nibble 8 + j. Known peers write N wrong in the bitmap form, so the decoder reads the bitmap and
never N.
"""

from __future__ import annotations

from collections.abc import Iterable

LIST_LIMIT = 16  # from this many EPCs on, the bitmap form
BITMAP_SIZE = 16


def encode(epcs: Iterable[int]) -> bytes:
    """The exact map of a set of EPCs (0x80-0xFF): the list form ascending, or the bitmap."""
    chosen = sorted(set(epcs))
    for epc in chosen:
        if not 0x80 <= epc <= 0xFF:
            raise ValueError(f"EPC {epc:#x} cannot be in a property map (0x80-0xFF)")
    if len(chosen) < LIST_LIMIT:
        return bytes((len(chosen), *chosen))
    bitmap = bytearray(BITMAP_SIZE)
    for epc in chosen:
        bitmap[epc & 0x0F] |= 1 << ((epc >> 4) - 8)
    return bytes((len(chosen),)) + bytes(bitmap)


def decode(data: bytes) -> list[int]:
    """The EPCs a map holds, ascending for the bitmap form, as written for the list form.

    Tolerant by design: an empty map is empty, a list shorter than N gives the EPCs present,
    a short bitmap the EPCs of the bytes present, and N is never trusted against the bitmap.
    """
    if not data:
        return []
    count = data[0]
    if count < LIST_LIMIT:
        return list(data[1 : 1 + count])
    bitmap = data[1 : 1 + BITMAP_SIZE]
    return [
        (high << 4) | low
        for high in range(8, 16)
        for low in range(len(bitmap))
        if bitmap[low] >> (high - 8) & 1
    ]
