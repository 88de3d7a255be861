// carsales (SPEC §3.2): the requests against golden.json and the SPEC's first car, the
// server's sum, the client's check.
#include "carsales.hpp"

#include "errors.hpp"
#include "support.hpp"

#include <gtest/gtest.h>

namespace capbench {
namespace {

TEST(Carsales, RequestsMatchGolden) {
    const auto counts = test::golden("carsales", "first_counts");
    const auto amounts = test::golden("carsales", "first_amounts");
    ASSERT_EQ(counts.size(), amounts.size());
    Rng rng;
    for (std::size_t i = 0; i < counts.size(); ++i) {
        capnp::MallocMessageBuilder request, response;
        auto lot = request.initRoot<ParkingLot>();
        const std::uint64_t expected = Carsales::build(rng, lot);
        EXPECT_EQ(static_cast<std::uint64_t>(counts[i]), lot.getCars().size()) << i;
        EXPECT_EQ(static_cast<std::uint64_t>(amounts[i]), expected) << i;
        auto total = response.initRoot<TotalValue>();
        Carsales::serve(lot.asReader(), total);
        EXPECT_EQ(expected, total.getAmount()) << i;
        EXPECT_NO_THROW(Carsales::check(total.asReader(), expected));
    }
}

TEST(Carsales, FirstCarIsTheSpecs) {
    Rng rng;
    capnp::MallocMessageBuilder request;
    auto lot = request.initRoot<ParkingLot>();
    Carsales::build(rng, lot);
    const Car::Reader car = lot.asReader().getCars()[0];
    EXPECT_EQ("GM", std::string_view(car.getMake().cStr()));
    EXPECT_EQ("Prius", std::string_view(car.getModel().cStr()));
    EXPECT_EQ(Color::BLACK, car.getColor());
    EXPECT_EQ(2, car.getSeats());
    EXPECT_EQ(4, car.getDoors());
    const struct {
        std::uint16_t diameter;
        float pressure;
    } wheels[] = {{34, 48.475872f}, {33, 46.546158f}, {36, 39.139904f}, {36, 32.082848f}};
    ASSERT_EQ(4u, car.getWheels().size());
    for (unsigned i = 0; i < 4; ++i) {
        EXPECT_EQ(wheels[i].diameter, car.getWheels()[i].getDiameter());
        EXPECT_FLOAT_EQ(wheels[i].pressure, car.getWheels()[i].getAirPressure());
        EXPECT_FALSE(car.getWheels()[i].getSnowTires());
    }
    EXPECT_EQ(178, car.getLength());
    EXPECT_EQ(72, car.getWidth());
    EXPECT_EQ(57, car.getHeight());
    EXPECT_EQ(3652u, car.getWeight());
    EXPECT_EQ(12900, car.getEngine().getHorsepower());
    EXPECT_EQ(8, car.getEngine().getCylinders());
    EXPECT_EQ(5195u, car.getEngine().getCc());
    EXPECT_TRUE(car.getEngine().getUsesGas());
    EXPECT_TRUE(car.getEngine().getUsesElectric());
    EXPECT_FLOAT_EQ(31.613008f, car.getFuelCapacity());
    EXPECT_FLOAT_EQ(5.6485276f, car.getFuelLevel());
    EXPECT_TRUE(car.getHasPowerWindows());
    EXPECT_TRUE(car.getHasPowerSteering());
    EXPECT_TRUE(car.getHasCruiseControl());
    EXPECT_EQ(8, car.getCupHolders());
    EXPECT_FALSE(car.getHasNavSystem());
}

TEST(Carsales, ValueWidensBeforeMultiplying) {
    // Every field at its maximum: in int arithmetic 65535 * 65535 would overflow (undefined
    // behaviour); widened to 64 bits it is exact.
    capnp::MallocMessageBuilder message;
    auto car = message.initRoot<Car>();
    car.setSeats(255);
    car.setDoors(255);
    for (auto wheel : car.initWheels(2)) {
        wheel.setDiameter(65535);
        wheel.setSnowTires(true);
    }
    car.setLength(65535);
    car.setWidth(65535);
    car.setHeight(65535);
    car.initEngine().setHorsepower(65535);
    car.getEngine().setUsesElectric(true); // usesGas false: 3000
    car.setHasPowerWindows(true);
    car.setHasNavSystem(true);
    car.setCupHolders(255);
    const std::uint64_t m = 65535;
    const std::uint64_t expected = 255 * 200 + 255 * 350 + 2 * (m * m + 100) + m * m * m / 50 +
                                   m * 40 + 3000 + 100 + 2000 + 255 * 25;
    EXPECT_EQ(expected, car_value(car.asReader()));
}

TEST(Carsales, EmptyLotIsWorthNothing) {
    capnp::MallocMessageBuilder request, response;
    request.initRoot<ParkingLot>();
    auto total = response.initRoot<TotalValue>();
    Carsales::serve(request.getRoot<ParkingLot>().asReader(), total);
    EXPECT_EQ(0u, total.getAmount());
}

TEST(Carsales, CheckRejectsAWrongAmount) {
    capnp::MallocMessageBuilder response;
    auto total = response.initRoot<TotalValue>();
    total.setAmount(135060641);
    EXPECT_THROW(Carsales::check(total.asReader(), 135060640), WrongAnswer);
    total.setAmount(135060640);
    EXPECT_NO_THROW(Carsales::check(total.asReader(), 135060640));
}

} // namespace
} // namespace capbench
