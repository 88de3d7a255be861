// carsales (SPEC §3.2): a parking lot of random cars, priced by the server; records with many
// numeric fields.
#pragma once

#include "carsales.capnp.h"
#include "rng.hpp"

#include <cstdint>

namespace capbench {

struct Carsales {
    using Request = ParkingLot;
    using Response = TotalValue;
    using Expectation = std::uint64_t; // the amount the server must answer
    static constexpr const char *kName = "carsales";

    // Fills `request` with fastRand(200) random cars; returns their total value.
    static Expectation build(Rng &rng, ParkingLot::Builder request);
    // amount = the sum of the cars' values, wrapping in 64 bits.
    static void serve(ParkingLot::Reader request, TotalValue::Builder response);
    // Throws WrongAnswer unless the amount is `expected`.
    static void check(TotalValue::Reader response, Expectation expected);
};

// What a car's value is made of (SPEC §3.2): the fields the price reads, as the client set
// them or the server read them, each widened to 64 bits before any arithmetic, so that hostile
// values wrap exactly as in every other language instead of overflowing int.
struct Worth {
    std::uint64_t seats = 0, doors = 0;
    std::uint64_t wheels = 0; // the sum over the wheels of diameter² (+100 with snow tires)
    std::uint64_t length = 0, width = 0, height = 0, horsepower = 0, cup_holders = 0;
    bool uses_gas = false, uses_electric = false;
    bool power_windows = false, power_steering = false, cruise_control = false;
    bool nav_system = false;

    // One wheel's share of `wheels`.
    static std::uint64_t wheel_value(std::uint64_t diameter, bool snow_tires) noexcept {
        return diameter * diameter + (snow_tires ? 100u : 0u);
    }
    // The server's reading of a car. Not noexcept: reading a hostile message throws
    // kj::Exception (a wheel list overrunning its words, say), which must reach main as an
    // error, not std::terminate (found by fuzzing).
    static Worth of(Car::Reader car);
    // The car's value, wrapping in 64 bits.
    std::uint64_t value() const noexcept;
};

// A car's value as the server computes it; throws kj::Exception as Worth::of does.
inline std::uint64_t car_value(Car::Reader car) {
    return Worth::of(car).value();
}

} // namespace capbench
