"""carsales: the request's draws and expected amount, the server's sum, the client's check
(SPEC §3.2)."""

from __future__ import annotations

import struct

import pytest
from capnp_py.failures import Mismatch
from capnp_py.rng import Rng
from conftest import GOLDEN, make_case


@pytest.fixture(scope="module")
def carsales():
    return make_case("carsales")


def request(case, rng):
    lot = case.request_type.new_message()
    return lot, case.build_request(lot, rng)


def f32(x: float) -> float:
    return struct.unpack("<f", struct.pack("<f", x))[0]


def test_first_requests_have_the_golden_counts_and_amounts(carsales):
    rng = Rng()
    counts, amounts = [], []
    for _ in range(len(GOLDEN["carsales"]["first_counts"])):
        lot, amount = request(carsales, rng)
        counts.append(len(lot.cars))
        amounts.append(amount)
    assert counts == GOLDEN["carsales"]["first_counts"]
    assert amounts == GOLDEN["carsales"]["first_amounts"]


def test_first_car_is_the_specs(carsales):
    lot, _ = request(carsales, Rng())
    car = lot.as_reader().cars[0]
    head = (car.make, car.model, str(car.color), car.seats, car.doors)
    assert head == ("GM", "Prius", "black", 2, 4)
    wheels = [(w.diameter, w.airPressure, w.snowTires) for w in car.wheels]
    assert wheels == [(34, f32(48.475872), False), (33, f32(46.546158), False),
                      (36, f32(39.139904), False), (36, f32(32.082848), False)]  # fmt: skip
    assert (car.length, car.width, car.height, car.weight) == (178, 72, 57, 3652)
    e = car.engine
    engine = (e.horsepower, e.cylinders, e.cc, e.usesGas, e.usesElectric)
    assert engine == (12900, 8, 5195, True, True)
    assert car.fuelCapacity == f32(31.613008)
    assert car.fuelLevel == f32(5.6485276)
    assert (car.hasPowerWindows, car.hasPowerSteering, car.hasCruiseControl) == (True, True, True)
    assert (car.cupHolders, car.hasNavSystem) == (8, False)


def test_server_sum_equals_the_clients_expected_amount(carsales):
    rng = Rng()
    for _ in range(20):
        lot, amount = request(carsales, rng)
        total = carsales.response_type.new_message()
        carsales.serve(lot.as_reader(), total)
        assert total.amount == amount
        carsales.check(total.as_reader(), amount)


def test_server_widens_before_multiplying(carsales):
    lot = carsales.request_type.new_message()
    cars = lot.init("cars", 3)
    for car in cars:
        car.length, car.width, car.height = 65535, 65535, 65535
        car.engine.horsepower = 65535
        car.init("wheels", 1)[0].diameter = 65535
    one = 65535**3 // 50 + 65535 * 40 + 65535 * 65535
    total = carsales.response_type.new_message()
    carsales.serve(lot.as_reader(), total)
    assert total.amount == 3 * one


def test_electric_without_gas_is_worth_3000(carsales):
    lot = carsales.request_type.new_message()
    car = lot.init("cars", 1)[0]
    car.engine.usesElectric = True
    total = carsales.response_type.new_message()
    carsales.serve(lot.as_reader(), total)
    assert total.amount == 3000


def test_check_refuses_a_wrong_amount(carsales):
    total = carsales.response_type.new_message()
    total.amount = 41
    with pytest.raises(Mismatch, match="41.*42"):
        carsales.check(total.as_reader(), 42)
