"""The suite's own model of SPEC.md §3: the generator, the three cases' requests and answers as
plain Python values, and the canonical content encoding (CCE, §3.5).

Written from the SPEC alone, in plain Python with no Cap'n Proto library, so that it is an
independent second computation of everything the implementations compute: the golden digests
are checked against it on every run, and the exact-server tests compare every response with it.
"""

from __future__ import annotations

import hashlib
import math
import struct
from dataclasses import dataclass

MASK32 = 0xFFFFFFFF
INT32_MAX = 2**31 - 1
INT32_MIN = -(2**31)

MAKES = ["Toyota", "GM", "Ford", "Honda", "Tesla"]
MODELS = ["Camry", "Prius", "Volt", "Accord", "Leaf", "Model S"]
WORDS = ["foo ", "bar ", "baz ", "qux ", "quux ", "corge ", "grault ", "garply ", "waldo ",
         "fred ", "plugh ", "xyzzy ", "thud "]  # fmt: skip
URL_PREFIX = "http://example.com/"
OPS = ["add", "subtract", "multiply", "divide", "modulus"]


class Rng:
    """Marsaglia's xorshift128 with the SPEC's seed (§3.1)."""

    def __init__(self) -> None:
        self.x, self.y, self.z, self.w = 0x1D2ACD47, 0x58CA3E14, 0xF563F232, 0x0BC76199

    def next(self) -> int:
        t = (self.x ^ (self.x << 11)) & MASK32
        self.x, self.y, self.z = self.y, self.z, self.w
        self.w = (self.w ^ (self.w >> 19) ^ t ^ (t >> 8)) & MASK32
        return self.w

    def rand(self, n: int) -> int:
        return self.next() % n

    def rand_double(self, r: float) -> float:
        return (float(self.next()) * r) / 4294967295.0


def f32(x: float) -> float:
    """Round a double to float32 (as storing it in a Float32 field does)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


# --- carsales -------------------------------------------------------------------------------


@dataclass
class Wheel:
    diameter: int
    air_pressure: float
    snow_tires: bool


@dataclass
class Engine:
    horsepower: int
    cylinders: int
    cc: int
    uses_gas: bool
    uses_electric: bool


@dataclass
class Car:
    make: str
    model: str
    color: int
    seats: int
    doors: int
    wheels: list[Wheel]
    length: int
    width: int
    height: int
    weight: int
    engine: Engine
    fuel_capacity: float
    fuel_level: float
    has_power_windows: bool
    has_power_steering: bool
    has_cruise_control: bool
    cup_holders: int
    has_nav_system: bool


def random_car(rng: Rng) -> Car:
    make = MAKES[rng.rand(5)]
    model = MODELS[rng.rand(6)]
    color = rng.rand(9)
    seats = 2 + rng.rand(6)
    doors = 2 + rng.rand(3)
    wheels = []
    for _ in range(4):
        diameter = 25 + rng.rand(15)
        air = f32(30 + rng.rand_double(20))
        snow = rng.rand(16) == 0
        wheels.append(Wheel(diameter, air, snow))
    length = 170 + rng.rand(150)
    width = 48 + rng.rand(36)
    height = 54 + rng.rand(48)
    weight = length * width * height // 200
    engine = Engine(100 * rng.rand(400), 4 + 2 * rng.rand(3), 800 + rng.rand(10000), True,
                    rng.rand(2) != 0)  # fmt: skip
    fuel_capacity = f32(10 + rng.rand_double(30))
    fuel_level = f32(rng.rand_double(fuel_capacity))
    windows = rng.rand(2) != 0
    steering = rng.rand(2) != 0
    cruise = rng.rand(2) != 0
    cup_holders = rng.rand(12)
    nav = rng.rand(2) != 0
    return Car(make, model, color, seats, doors, wheels, length, width, height, weight, engine,
               fuel_capacity, fuel_level, windows, steering, cruise, cup_holders, nav)  # fmt: skip


def car_value(car: Car) -> int:
    v = car.seats * 200 + car.doors * 350
    for w in car.wheels:
        v += w.diameter * w.diameter + (100 if w.snow_tires else 0)
    v += car.length * car.width * car.height // 50
    v += car.engine.horsepower * 40
    if car.engine.uses_electric:
        v += 5000 if car.engine.uses_gas else 3000
    v += 100 if car.has_power_windows else 0
    v += 200 if car.has_power_steering else 0
    v += 400 if car.has_cruise_control else 0
    v += 2000 if car.has_nav_system else 0
    v += car.cup_holders * 25
    return v


def carsales_request(rng: Rng) -> tuple[list[Car], int]:
    """One request and the amount the server must answer."""
    cars = [random_car(rng) for _ in range(rng.rand(200))]
    return cars, carsales_amount(cars)


def carsales_amount(cars: list[Car]) -> int:
    return sum(car_value(c) for c in cars) % 2**64


# --- catrank --------------------------------------------------------------------------------


@dataclass
class SearchResult:
    url: str
    score: float
    snippet: str


def catrank_request(rng: Rng) -> tuple[list[SearchResult], int]:
    """One request and its good count (cat and not dog)."""
    results = []
    good = 0
    for i in range(rng.rand(1000)):
        n = rng.rand(100)
        url = URL_PREFIX + "".join(chr(ord("a") + rng.rand(26)) for _ in range(n))
        is_cat = rng.rand(8) == 0
        is_dog = rng.rand(8) == 0
        good += is_cat and not is_dog
        parts = [" "]
        parts += [WORDS[rng.rand(13)] for _ in range(rng.rand(20))]
        if is_cat:
            parts.append("cat ")
        if is_dog:
            parts.append("dog ")
        parts += [WORDS[rng.rand(13)] for _ in range(rng.rand(20))]
        results.append(SearchResult(url, float(1000 - i), "".join(parts)))
    return results, good


def catrank_response(results: list[SearchResult]) -> list[SearchResult]:
    """The server's answer (§3.3); NaN last, equal scores in request order."""
    scored = []
    for r in results:
        score = r.score
        if " cat " in r.snippet:
            score *= 10000
        if " dog " in r.snippet:
            score /= 10000
        scored.append(SearchResult(r.url, score, r.snippet))
    return sorted(scored, key=lambda r: (True, 0.0) if math.isnan(r.score) else (False, -r.score))


def catrank_good(response: list[SearchResult]) -> int:
    """The client's count: leading results with a score above 1001."""
    n = 0
    for r in response:
        if not r.score > 1001:
            break
        n += 1
    return n


# --- eval -----------------------------------------------------------------------------------


@dataclass
class Expr:
    op: int
    left: int | Expr  # an int is a literal value
    right: int | Expr


def wrap32(v: int) -> int:
    return (v + 2**31) % 2**32 - 2**31


def apply(op: int, a: int, b: int) -> int:
    if op == 0:
        return wrap32(a + b)
    if op == 1:
        return wrap32(a - b)
    if op == 2:
        return wrap32(a * b)
    if op in (3, 4):
        if b == 0 or (a == INT32_MIN and b == -1):
            return INT32_MAX
        q = abs(a) // abs(b)
        q = q if (a >= 0) == (b >= 0) else -q  # truncation toward zero, as C's `/`
        return wrap32(q) if op == 3 else wrap32(a - q * b)
    raise ValueError(f"operation {op} is not 0-4")


def evaluate(e: int | Expr) -> int:
    if isinstance(e, int):
        return e
    return apply(e.op, evaluate(e.left), evaluate(e.right))


def make_expression(rng: Rng, depth: int) -> Expr:
    op = rng.rand(5)
    left: int | Expr = rng.rand(128) + 1 if rng.rand(8) < depth else make_expression(rng, depth + 1)
    right: int | Expr = (
        rng.rand(128) + 1 if rng.rand(8) < depth else make_expression(rng, depth + 1)
    )
    return Expr(op, left, right)


def eval_request(rng: Rng) -> tuple[Expr, int]:
    e = make_expression(rng, 0)
    return e, evaluate(e)


# --- the canonical content encoding (§3.5) --------------------------------------------------


def _text(s: str | bytes) -> bytes:
    b = s.encode() if isinstance(s, str) else s
    return struct.pack("<I", len(b)) + b


def cce_car(c: Car) -> bytes:
    out = [_text(c.make), _text(c.model), struct.pack("<HBB", c.color, c.seats, c.doors)]
    out.append(struct.pack("<I", len(c.wheels)))
    for w in c.wheels:
        out.append(struct.pack("<Hf?", w.diameter, w.air_pressure, w.snow_tires))
    e = c.engine
    out.append(struct.pack("<HHHI", c.length, c.width, c.height, c.weight))
    out.append(struct.pack("<HBI??", e.horsepower, e.cylinders, e.cc, e.uses_gas, e.uses_electric))
    out.append(struct.pack("<ff???B?", c.fuel_capacity, c.fuel_level, c.has_power_windows,
                           c.has_power_steering, c.has_cruise_control, c.cup_holders,
                           c.has_nav_system))  # fmt: skip
    return b"".join(out)


def cce_parking_lot(cars: list[Car]) -> bytes:
    return struct.pack("<I", len(cars)) + b"".join(cce_car(c) for c in cars)


def cce_total_value(amount: int) -> bytes:
    return struct.pack("<Q", amount)


def cce_results(results: list[SearchResult]) -> bytes:
    out = [struct.pack("<I", len(results))]
    for r in results:
        out += [_text(r.url), struct.pack("<d", r.score), _text(r.snippet)]
    return b"".join(out)


def cce_side(side: int | Expr) -> bytes:
    if isinstance(side, int):
        return struct.pack("<Hi", 0, side)
    return struct.pack("<H", 1) + cce_expression(side)


def cce_expression(e: Expr) -> bytes:
    return struct.pack("<H", e.op) + cce_side(e.left) + cce_side(e.right)


def cce_evaluation_result(value: int) -> bytes:
    return struct.pack("<i", value)


# How many requests the golden digests cover, per case.
DIGEST_REQUESTS = {"carsales": 8, "catrank": 4, "eval": 64}


def requests(case: str, count: int) -> list[tuple[object, object]]:
    """The first `count` requests of a fresh generator with their expected answers."""
    rng = Rng()
    make = {"carsales": carsales_request, "catrank": catrank_request, "eval": eval_request}[case]
    return [make(rng) for _ in range(count)]


def cce_request(case: str, request: object) -> bytes:
    if case == "carsales":
        return cce_parking_lot(request)  # type: ignore[arg-type]
    if case == "catrank":
        return cce_results(request)  # type: ignore[arg-type]
    return cce_expression(request)  # type: ignore[arg-type]


def digest(case: str, count: int | None = None) -> str:
    """SHA-256 (hex) of the CCE of the first requests of a case."""
    n = count or DIGEST_REQUESTS[case]
    h = hashlib.sha256()
    for request, _ in requests(case, n):
        h.update(cce_request(case, request))
    return h.hexdigest()
