"""carsales (SPEC §3.2): a parking lot of random cars; the server answers the lot's total value.

Speed, measured on a 179-car lot (pycapnp 2.2.4, CPython 3.11): fields are set and read through
`_set_by_field` / `_get_by_field` with the `_StructSchemaField` objects looked up once from the
schema. `car.seats = x` and `car.seats` go by name: a C++ field lookup per access, and every read
through `__getattr__` runs only after the normal attribute lookup has failed, so reading the lot
that way took 4.6 ms against 0.75 ms by field, and building it 1.95 ms against 1.14 ms. The
`_by_field` methods are cpdef methods declared in pycapnp's own `capnp.pxd` (its Cython API);
pyproject pins pycapnp 2.2.4 exactly. Texts are set from `bytes` constants (no UTF-8 encoding per
set), enums from their ordinals, list elements taken with the list's `_get` (no bounds check
and IndexError protocol of `__getitem__`; the C++ reader checks the index).
"""

from __future__ import annotations

from failures import Mismatch
from rng import UINT32_MAX_F

MAKES = (b"Toyota", b"GM", b"Ford", b"Honda", b"Tesla")
MODELS = (b"Camry", b"Prius", b"Volt", b"Accord", b"Leaf", b"Model S")
MASK64 = (1 << 64) - 1

CAR_FIELDS = (
    "make", "model", "color", "seats", "doors", "wheels", "length", "width", "height", "weight",
    "engine", "fuelCapacity", "fuelLevel", "hasPowerWindows", "hasPowerSteering",
    "hasCruiseControl", "cupHolders", "hasNavSystem",
)  # fmt: skip
WHEEL_FIELDS = ("diameter", "airPressure", "snowTires")
ENGINE_FIELDS = ("horsepower", "cylinders", "cc", "usesGas", "usesElectric")


class Carsales:
    """The case over its loaded schema (carsales.capnp)."""

    name = "carsales"

    def __init__(self, schema) -> None:
        self.request_type = schema.ParkingLot
        self.response_type = schema.TotalValue
        self._cars = schema.ParkingLot.schema.fields["cars"]
        self._amount = schema.TotalValue.schema.fields["amount"]
        car = schema.Car.schema.fields
        self._car = tuple(car[n] for n in CAR_FIELDS)
        self._wheel = tuple(schema.Wheel.schema.fields[n] for n in WHEEL_FIELDS)
        self._engine = tuple(schema.Engine.schema.fields[n] for n in ENGINE_FIELDS)

    def build_request(self, lot, rng) -> int:
        """Fill `lot` (a ParkingLot builder) with the next request's cars, drawing in the SPEC's
        order; return the amount the server must answer, summed from the values set."""
        (f_make, f_model, f_color, f_seats, f_doors, f_wheels, f_length, f_width, f_height,
         f_weight, f_engine, f_fuel_capacity, f_fuel_level, f_windows, f_steering, f_cruise,
         f_cup_holders, f_nav) = self._car  # fmt: skip
        f_diameter, f_air_pressure, f_snow_tires = self._wheel
        f_horsepower, f_cylinders, f_cc, f_uses_gas, f_uses_electric = self._engine
        nxt = rng.next
        count = nxt() % 200
        car_at = lot._init_by_field(self._cars, count)._get
        total = 0
        for i in range(count):
            car = car_at(i)
            put = car._set_by_field
            put(f_make, MAKES[nxt() % 5])
            put(f_model, MODELS[nxt() % 6])
            put(f_color, nxt() % 9)
            seats = 2 + nxt() % 6
            put(f_seats, seats)
            doors = 2 + nxt() % 3
            put(f_doors, doors)
            value = seats * 200 + doors * 350
            wheel_at = car._init_by_field(f_wheels, 4)._get
            for j in range(4):
                put_wheel = wheel_at(j)._set_by_field
                diameter = 25 + nxt() % 15
                put_wheel(f_diameter, diameter)
                # Stored as a Float32: the library rounds the double to nearest.
                put_wheel(f_air_pressure, 30.0 + nxt() * 20.0 / UINT32_MAX_F)
                if nxt() % 16 == 0:
                    put_wheel(f_snow_tires, True)
                    value += diameter * diameter + 100
                else:
                    value += diameter * diameter
            length = 170 + nxt() % 150
            width = 48 + nxt() % 36
            height = 54 + nxt() % 48
            put(f_length, length)
            put(f_width, width)
            put(f_height, height)
            volume = length * width * height
            put(f_weight, volume // 200)
            value += volume // 50
            put_engine = car._init_by_field(f_engine)._set_by_field
            horsepower = 100 * (nxt() % 400)
            put_engine(f_horsepower, horsepower)
            put_engine(f_cylinders, 4 + 2 * (nxt() % 3))
            put_engine(f_cc, 800 + nxt() % 10000)
            put_engine(f_uses_gas, True)
            value += horsepower * 40
            if nxt() % 2:
                put_engine(f_uses_electric, True)
                value += 5000  # electric and gas
            put(f_fuel_capacity, 10.0 + nxt() * 30.0 / UINT32_MAX_F)
            # fuelLevel draws against the Float32 just stored, widened: read it back.
            fuel_capacity = car._get_by_field(f_fuel_capacity)
            put(f_fuel_level, nxt() * fuel_capacity / UINT32_MAX_F)
            # A false Bool is the field's default (zero): only true ones need a set.
            if nxt() % 2:
                put(f_windows, True)
                value += 100
            if nxt() % 2:
                put(f_steering, True)
                value += 200
            if nxt() % 2:
                put(f_cruise, True)
                value += 400
            cup_holders = nxt() % 12
            put(f_cup_holders, cup_holders)
            value += cup_holders * 25
            if nxt() % 2:
                put(f_nav, True)
                value += 2000
            total += value
        return total & MASK64

    def serve(self, lot, response) -> None:
        """The server: the lot's total value (SPEC §3.2) into `response` (a TotalValue
        builder). Python ints do not overflow; the sum is reduced to u64 once at the end, which
        is the same as wrapping at every step."""
        (_, _, _, f_seats, f_doors, f_wheels, f_length, f_width, f_height, _, f_engine, _, _,
         f_windows, f_steering, f_cruise, f_cup_holders, f_nav) = self._car  # fmt: skip
        f_diameter, _, f_snow_tires = self._wheel
        f_horsepower, _, _, f_uses_gas, f_uses_electric = self._engine
        cars = lot._get_by_field(self._cars)
        car_at = cars._get
        total = 0
        for i in range(len(cars)):
            get = car_at(i)._get_by_field
            value = get(f_seats) * 200 + get(f_doors) * 350
            wheels = get(f_wheels)
            wheel_at = wheels._get
            for j in range(len(wheels)):
                get_wheel = wheel_at(j)._get_by_field
                diameter = get_wheel(f_diameter)
                value += diameter * diameter
                if get_wheel(f_snow_tires):
                    value += 100
            value += get(f_length) * get(f_width) * get(f_height) // 50
            get_engine = get(f_engine)._get_by_field
            value += get_engine(f_horsepower) * 40
            if get_engine(f_uses_electric):
                value += 5000 if get_engine(f_uses_gas) else 3000
            if get(f_windows):
                value += 100
            if get(f_steering):
                value += 200
            if get(f_cruise):
                value += 400
            if get(f_nav):
                value += 2000
            total += value + get(f_cup_holders) * 25
        response._set_by_field(self._amount, total & MASK64)

    def check(self, response, expected: int) -> None:
        amount = response._get_by_field(self._amount)
        if amount != expected:
            raise Mismatch(f"amount {amount}, expected {expected}")
