"""The suite's two wire dialects (SPEC.md §3.5, §5, §7), each turning reference.py's plain
values into messages on a stream and back:

- `CapnpCodec`: Cap'n Proto messages through pycapnp (the stream framing — segment table,
  packing — is the suite's own code below, so that a framing mistake of an implementation is
  seen by code that does not share its library);
- `CceCodec`: the floor's canonical content encoding, u32 length-prefixed.

A request or response is decoded into reference.py's values, so comparisons are by content,
never by bytes (segment layouts differ between libraries).
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import BinaryIO

import capnp
import reference as R

capnp.remove_import_hook()
SCHEMA = Path(__file__).resolve().parent.parent / "schema"
carsales_capnp = capnp.load(str(SCHEMA / "carsales.capnp"))
catrank_capnp = capnp.load(str(SCHEMA / "catrank.capnp"))
eval_capnp = capnp.load(str(SCHEMA / "eval.capnp"))

CAP_WORDS = 8 * 1024 * 1024  # SPEC §6
MAX_SEGMENTS = 511  # SPEC §6: fewer than 512, as libcapnp
COLORS = ["black", "white", "red", "green", "blue", "cyan", "magenta", "yellow", "silver"]


class Truncated(Exception):
    """The stream ended inside a message."""


def read_exact(stream: BinaryIO, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = stream.read(n - len(data))
        if not chunk:
            raise Truncated(f"end of stream after {len(data)} of {n} bytes")
        data += chunk
    return data


# ---- Cap'n Proto packing (the suite's own, from the encoding's definition) ------------------


def pack(data: bytes) -> bytes:
    """Cap'n Proto packing of whole words: a tag byte per word (bit i = byte i is non-zero)
    followed by the non-zero bytes; after a zero tag a count of further zero words, after a
    0xFF tag a count of further words copied raw."""
    if len(data) % 8:
        raise ValueError("packing works on whole words")
    words = [data[i : i + 8] for i in range(0, len(data), 8)]
    out = bytearray()
    i = 0
    while i < len(words):
        w = words[i]
        tag = sum(1 << b for b in range(8) if w[b])
        out.append(tag)
        out += bytes(x for x in w if x)
        i += 1
        if tag == 0:
            n = 0
            while i < len(words) and n < 255 and words[i] == bytes(8):
                n += 1
                i += 1
            out.append(n)
        elif tag == 0xFF:
            n = 0
            # Copy raw the following words that have at most one zero byte.
            while i < len(words) and n < 255 and words[i].count(0) <= 1:
                n += 1
                i += 1
            out.append(n)
            out += b"".join(words[i - n : i])
    return bytes(out)


class Unpacker:
    """Reads unpacked words from a packed stream, a run of zeros or raw words possibly
    continuing into the next read (the suite is lenient; the implementations are not)."""

    def __init__(self, stream: BinaryIO) -> None:
        self.stream = stream
        self.zeros = 0  # zero words still owed by a run
        self.raw = 0  # raw words still owed by a run

    def read_words(self, n: int, at_start: bool = False) -> bytes | None:
        """n words; None if the stream ends cleanly before the first byte (when at_start)."""
        out = bytearray()
        while len(out) < 8 * n:
            if self.zeros:
                self.zeros -= 1
                out += bytes(8)
                continue
            if self.raw:
                self.raw -= 1
                out += read_exact(self.stream, 8)
                continue
            tag_b = self.stream.read(1)
            if not tag_b:
                if at_start and not out:
                    return None
                raise Truncated("packed stream ended inside a message")
            tag = tag_b[0]
            word = bytearray(8)
            for b in range(8):
                if tag & (1 << b):
                    word[b] = read_exact(self.stream, 1)[0]
            out += word
            if tag == 0:
                self.zeros = read_exact(self.stream, 1)[0]
            elif tag == 0xFF:
                self.raw = read_exact(self.stream, 1)[0]
        return bytes(out)


# ---- Cap'n Proto ------------------------------------------------------------------------------


def frame_words(first: bytes) -> tuple[int, int]:
    """From the first word of a message: (segment count, words of the rest of the segment
    table)."""
    count = struct.unpack_from("<I", first)[0] + 1
    table_words = (4 * (count + 1) + 7) // 8 - 1  # the table padded to a word, minus word 0
    return count, table_words


def read_capnp(stream: BinaryIO, packed: bool, unpacker: Unpacker | None = None) -> bytes | None:
    """One message's bytes (segment table included, unpacked); None at a clean end."""
    if packed:
        assert unpacker is not None
        first = unpacker.read_words(1, at_start=True)
        if first is None:
            return None
        count, rest = frame_words(first)
        table = first + (unpacker.read_words(rest) if rest else b"")
    else:
        first4 = stream.read(4)
        if not first4:
            return None
        if len(first4) < 4:
            first4 += read_exact(stream, 4 - len(first4))
        count = struct.unpack("<I", first4)[0] + 1
        table = first4 + read_exact(stream, 4 * count + (4 if count % 2 == 0 else 0))
    if count > MAX_SEGMENTS:
        raise ValueError(f"{count} segments")
    sizes = struct.unpack_from(f"<{count}I", table, 4)
    words = sum(sizes)
    if words > CAP_WORDS:
        raise ValueError(f"{words} words")
    body = unpacker.read_words(words) if packed else read_exact(stream, 8 * words)
    return table + body


class CapnpCodec:
    name = "capnp"

    def __init__(self, packed: bool) -> None:
        self.packed = packed
        self._unpackers: dict[int, Unpacker] = {}

    def read(self, stream: BinaryIO) -> bytes | None:
        u = self._unpackers.setdefault(id(stream), Unpacker(stream)) if self.packed else None
        return read_capnp(stream, self.packed, u)

    def frame(self, message) -> bytes:
        """A builder's bytes as written on a stream (packed when asked)."""
        data = message.to_bytes()
        return pack(data) if self.packed else data

    def _reader(self, struct_type, data: bytes):
        return struct_type.from_bytes(data, traversal_limit_in_words=CAP_WORDS, nesting_limit=64)

    # requests ---------------------------------------------------------------------------------

    def encode_request(self, case: str, request) -> bytes:
        return self.frame(build_request(case, request))

    def decode_request(self, case: str, data: bytes):
        struct_type = {"carsales": carsales_capnp.ParkingLot,
                       "catrank": catrank_capnp.SearchResultList,
                       "eval": eval_capnp.Expression}[case]  # fmt: skip
        with self._reader(struct_type, data) as r:
            if case == "carsales":
                return [car_of(c) for c in r.cars]
            if case == "catrank":
                return [R.SearchResult(x.url, x.score, x.snippet) for x in r.results]
            return expression_of(r)

    # responses --------------------------------------------------------------------------------

    def encode_response(self, case: str, answer) -> bytes:
        if case == "carsales":
            m = carsales_capnp.TotalValue.new_message()
            m.amount = answer % 2**64
        elif case == "catrank":
            m = catrank_capnp.SearchResultList.new_message()
            fill_results(m.init("results", len(answer)), answer)
        else:
            m = eval_capnp.EvaluationResult.new_message()
            m.value = answer
        return self.frame(m)

    def decode_response(self, case: str, data: bytes):
        if case == "carsales":
            with self._reader(carsales_capnp.TotalValue, data) as r:
                return r.amount
        if case == "catrank":
            with self._reader(catrank_capnp.SearchResultList, data) as r:
                return [R.SearchResult(x.url, x.score, x.snippet) for x in r.results]
        with self._reader(eval_capnp.EvaluationResult, data) as r:
            return r.value


def build_request(case: str, request):
    if case == "carsales":
        m = carsales_capnp.ParkingLot.new_message()
        cars = m.init("cars", len(request))
        for b, c in zip(cars, request, strict=True):
            fill_car(b, c)
        return m
    if case == "catrank":
        m = catrank_capnp.SearchResultList.new_message()
        fill_results(m.init("results", len(request)), request)
        return m
    m = eval_capnp.Expression.new_message()
    fill_expression(m, request)
    return m


def fill_car(b, c: R.Car) -> None:
    b.make, b.model, b.color = c.make, c.model, COLORS[c.color]
    b.seats, b.doors = c.seats, c.doors
    for wb, w in zip(b.init("wheels", len(c.wheels)), c.wheels, strict=True):
        wb.diameter, wb.airPressure, wb.snowTires = w.diameter, w.air_pressure, w.snow_tires
    b.length, b.width, b.height, b.weight = c.length, c.width, c.height, c.weight
    e = b.init("engine")
    e.horsepower, e.cylinders, e.cc = c.engine.horsepower, c.engine.cylinders, c.engine.cc
    e.usesGas, e.usesElectric = c.engine.uses_gas, c.engine.uses_electric
    b.fuelCapacity, b.fuelLevel = c.fuel_capacity, c.fuel_level
    b.hasPowerWindows, b.hasPowerSteering = c.has_power_windows, c.has_power_steering
    b.hasCruiseControl, b.cupHolders = c.has_cruise_control, c.cup_holders
    b.hasNavSystem = c.has_nav_system


def car_of(r) -> R.Car:
    e = r.engine
    return R.Car(
        r.make, r.model, r.color.raw, r.seats, r.doors,
        [R.Wheel(w.diameter, w.airPressure, w.snowTires) for w in r.wheels],
        r.length, r.width, r.height, r.weight,
        R.Engine(e.horsepower, e.cylinders, e.cc, e.usesGas, e.usesElectric),
        r.fuelCapacity, r.fuelLevel, r.hasPowerWindows, r.hasPowerSteering,
        r.hasCruiseControl, r.cupHolders, r.hasNavSystem,
    )  # fmt: skip


def fill_results(lb, results: list[R.SearchResult]) -> None:
    for b, x in zip(lb, results, strict=True):
        b.url, b.score, b.snippet = x.url, x.score, x.snippet


def fill_expression(b, e: R.Expr) -> None:
    """Iterative over the left spine, so that a hostile 10,000-deep chain builds without
    exhausting Python's recursion."""
    b.op = R.OPS[e.op]
    for side_name in ("left", "right"):
        side = getattr(e, side_name)
        holder = getattr(b, side_name)
        if isinstance(side, int):
            holder.value = side
        else:
            fill_expression(holder.init("expression"), side)


def expression_of(r) -> R.Expr:
    def side(s):
        return s.value if s.which() == "value" else expression_of(s.expression)

    return R.Expr(r.op.raw, side(r.left), side(r.right))


# ---- the floor's canonical content encoding ---------------------------------------------------


class CceError(ValueError):
    pass


class _Cursor:
    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, fmt: str):
        size = struct.calcsize(fmt)
        if self.at + size > len(self.data):
            raise CceError(f"needs {size} bytes at {self.at}, {len(self.data) - self.at} left")
        v = struct.unpack_from(fmt, self.data, self.at)
        self.at += size
        return v if len(v) > 1 else v[0]

    def text(self) -> str:
        n = self.take("<I")
        if self.at + n > len(self.data):
            raise CceError(f"text of {n} bytes at {self.at}, {len(self.data) - self.at} left")
        s = self.data[self.at : self.at + n].decode()
        self.at += n
        return s

    def done(self) -> None:
        if self.at != len(self.data):
            raise CceError(f"{len(self.data) - self.at} bytes left over")


def cce_car(c: _Cursor) -> R.Car:
    make, model = c.text(), c.text()
    color, seats, doors = c.take("<HBB")
    wheels = [R.Wheel(*c.take("<Hf?")) for _ in range(c.take("<I"))]
    length, width, height, weight = c.take("<HHHI")
    engine = R.Engine(*c.take("<HBI??"))
    cap, level, pw, ps, cc, cup, nav = c.take("<ff???B?")
    return R.Car(make, model, color, seats, doors, wheels, length, width, height, weight, engine,
                 cap, level, pw, ps, cc, cup, nav)  # fmt: skip


def cce_results(c: _Cursor) -> list[R.SearchResult]:
    out = []
    for _ in range(c.take("<I")):
        url = c.text()
        score = c.take("<d")
        out.append(R.SearchResult(url, score, c.text()))
    return out


def cce_expression(c: _Cursor, depth: int = 0) -> R.Expr:
    if depth > 64:
        raise CceError("nested deeper than 64")
    op = c.take("<H")
    sides = []
    for _ in range(2):
        tag = c.take("<H")
        sides.append(c.take("<i") if tag == 0 else cce_expression(c, depth + 1))
    return R.Expr(op, sides[0], sides[1])


class CceCodec:
    name = "cce"

    def __init__(self, packed: bool) -> None:
        self.packed = packed
        self._unpackers: dict[int, Unpacker] = {}

    def read(self, stream: BinaryIO) -> bytes | None:
        if self.packed:
            u = self._unpackers.setdefault(id(stream), Unpacker(stream))
            first = u.read_words(1, at_start=True)
            if first is None:
                return None
            n = struct.unpack_from("<I", first)[0]
            if n > 8 * CAP_WORDS:
                raise ValueError(f"length {n}")
            rest = (4 + n + 7) // 8 - 1
            data = first + (u.read_words(rest) if rest else b"")
            return data[4 : 4 + n]
        head = stream.read(4)
        if not head:
            return None
        if len(head) < 4:
            head += read_exact(stream, 4 - len(head))
        n = struct.unpack("<I", head)[0]
        if n > 8 * CAP_WORDS:
            raise ValueError(f"length {n}")
        return read_exact(stream, n)

    def frame(self, body: bytes) -> bytes:
        framed = struct.pack("<I", len(body)) + body
        if not self.packed:
            return framed
        return pack(framed + bytes(-len(framed) % 8))

    def encode_request(self, case: str, request) -> bytes:
        return self.frame(R.cce_request(case, request))

    def decode_request(self, case: str, data: bytes):
        c = _Cursor(data)
        if case == "carsales":
            v = [cce_car(c) for _ in range(c.take("<I"))]
        elif case == "catrank":
            v = cce_results(c)
        else:
            v = cce_expression(c)
        c.done()
        return v

    def encode_response(self, case: str, answer) -> bytes:
        if case == "carsales":
            return self.frame(R.cce_total_value(answer % 2**64))
        if case == "catrank":
            return self.frame(R.cce_results(answer))
        return self.frame(R.cce_evaluation_result(answer))

    def decode_response(self, case: str, data: bytes):
        c = _Cursor(data)
        v = (
            c.take("<Q")
            if case == "carsales"
            else cce_results(c)
            if case == "catrank"
            else c.take("<i")
        )
        c.done()
        return v


def codec(dialect: str, packed: bool):
    return (CapnpCodec if dialect == "capnp" else CceCodec)(packed)
