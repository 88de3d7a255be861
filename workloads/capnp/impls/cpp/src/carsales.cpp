#include "carsales.hpp"

#include "errors.hpp"

#include <array>
#include <string>

namespace capbench {

namespace {

constexpr std::array<const char *, 5> kMakes = {"Toyota", "GM", "Ford", "Honda", "Tesla"};
constexpr std::array<const char *, 6> kModels = {"Camry",  "Prius", "Volt",
                                                 "Accord", "Leaf",  "Model S"};

// One car, each field drawn in the SPEC's order (one statement per draw: C++ leaves the order
// of evaluation of function arguments unspecified); returns the car's value, priced from the
// values set, after the float32 rounding (no priced field is a float).
std::uint64_t random_car(Rng &rng, Car::Builder car) {
    Worth worth;
    car.setMake(kMakes[rng.fastRand(kMakes.size())]);
    car.setModel(kModels[rng.fastRand(kModels.size())]);
    car.setColor(static_cast<Color>(rng.fastRand(9)));
    worth.seats = 2 + rng.fastRand(6);
    car.setSeats(static_cast<std::uint8_t>(worth.seats));
    worth.doors = 2 + rng.fastRand(3);
    car.setDoors(static_cast<std::uint8_t>(worth.doors));
    for (Wheel::Builder wheel : car.initWheels(4)) {
        const std::uint32_t diameter = 25 + rng.fastRand(15);
        wheel.setDiameter(static_cast<std::uint16_t>(diameter));
        wheel.setAirPressure(static_cast<float>(30 + rng.fastRandDouble(20)));
        const bool snow_tires = rng.fastRand(16) == 0;
        wheel.setSnowTires(snow_tires);
        worth.wheels += Worth::wheel_value(diameter, snow_tires);
    }
    worth.length = 170 + rng.fastRand(150);
    worth.width = 48 + rng.fastRand(36);
    worth.height = 54 + rng.fastRand(48);
    car.setLength(static_cast<std::uint16_t>(worth.length));
    car.setWidth(static_cast<std::uint16_t>(worth.width));
    car.setHeight(static_cast<std::uint16_t>(worth.height));
    car.setWeight(static_cast<std::uint32_t>(worth.length * worth.width * worth.height / 200));
    Engine::Builder engine = car.initEngine();
    worth.horsepower = 100 * rng.fastRand(400);
    engine.setHorsepower(static_cast<std::uint16_t>(worth.horsepower));
    engine.setCylinders(static_cast<std::uint8_t>(4 + 2 * rng.fastRand(3)));
    engine.setCc(800 + rng.fastRand(10000));
    worth.uses_gas = true;
    engine.setUsesGas(worth.uses_gas);
    worth.uses_electric = rng.fastRand(2) != 0;
    engine.setUsesElectric(worth.uses_electric);
    // fuelLevel is drawn against the float32 just stored, widened back to double.
    const float capacity = static_cast<float>(10 + rng.fastRandDouble(30));
    car.setFuelCapacity(capacity);
    car.setFuelLevel(static_cast<float>(rng.fastRandDouble(static_cast<double>(capacity))));
    worth.power_windows = rng.fastRand(2) != 0;
    car.setHasPowerWindows(worth.power_windows);
    worth.power_steering = rng.fastRand(2) != 0;
    car.setHasPowerSteering(worth.power_steering);
    worth.cruise_control = rng.fastRand(2) != 0;
    car.setHasCruiseControl(worth.cruise_control);
    worth.cup_holders = rng.fastRand(12);
    car.setCupHolders(static_cast<std::uint8_t>(worth.cup_holders));
    worth.nav_system = rng.fastRand(2) != 0;
    car.setHasNavSystem(worth.nav_system);
    return worth.value();
}

} // namespace

Worth Worth::of(Car::Reader car) {
    Worth worth;
    worth.seats = car.getSeats();
    worth.doors = car.getDoors();
    for (Wheel::Reader wheel : car.getWheels())
        worth.wheels += wheel_value(wheel.getDiameter(), wheel.getSnowTires());
    worth.length = car.getLength();
    worth.width = car.getWidth();
    worth.height = car.getHeight();
    const Engine::Reader engine = car.getEngine();
    worth.horsepower = engine.getHorsepower();
    worth.uses_gas = engine.getUsesGas();
    worth.uses_electric = engine.getUsesElectric();
    worth.power_windows = car.getHasPowerWindows();
    worth.power_steering = car.getHasPowerSteering();
    worth.cruise_control = car.getHasCruiseControl();
    worth.cup_holders = car.getCupHolders();
    worth.nav_system = car.getHasNavSystem();
    return worth;
}

std::uint64_t Worth::value() const noexcept {
    std::uint64_t v = seats * 200 + doors * 350 + wheels + length * width * height / 50;
    v += horsepower * 40;
    if (uses_electric)
        v += uses_gas ? 5000u : 3000u;
    v += power_windows ? 100u : 0u;
    v += power_steering ? 200u : 0u;
    v += cruise_control ? 400u : 0u;
    v += nav_system ? 2000u : 0u;
    v += cup_holders * 25;
    return v;
}

Carsales::Expectation Carsales::build(Rng &shared, ParkingLot::Builder request) {
    // The generator's state in a local for the loop: the setters' byte stores may alias
    // anything reachable by reference, so drawing from `shared` directly would reload and
    // store its four words around every field.
    Rng rng = shared;
    std::uint64_t amount = 0;
    for (Car::Builder car : request.initCars(rng.fastRand(200)))
        amount += random_car(rng, car);
    shared = rng;
    return amount;
}

void Carsales::serve(ParkingLot::Reader request, TotalValue::Builder response) {
    std::uint64_t amount = 0;
    for (Car::Reader car : request.getCars())
        amount += car_value(car);
    response.setAmount(amount);
}

void Carsales::check(TotalValue::Reader response, Expectation expected) {
    const std::uint64_t amount = response.getAmount();
    if (amount != expected)
        throw WrongAnswer("amount: expected " + std::to_string(expected) + ", got " +
                          std::to_string(amount));
}

} // namespace capbench
