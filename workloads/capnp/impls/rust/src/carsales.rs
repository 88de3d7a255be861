//! carsales (SPEC §3.2): a parking lot of up to 199 cars, each with many small numeric fields;
//! the server answers the lot's total value.

use crate::carsales_capnp::{car, parking_lot, total_value, Color};
use crate::modes::Case;
use crate::rng::FastRand;
use crate::Failure;

const MAKES: [&str; 5] = ["Toyota", "GM", "Ford", "Honda", "Tesla"];
const MODELS: [&str; 6] = ["Camry", "Prius", "Volt", "Accord", "Leaf", "Model S"];
// The enum in ordinal order: a draw of fastRand(9) picks one by its ordinal.
const COLORS: [Color; 9] = [
    Color::Black,
    Color::White,
    Color::Red,
    Color::Green,
    Color::Blue,
    Color::Cyan,
    Color::Magenta,
    Color::Yellow,
    Color::Silver,
];

/// The case (SPEC §3.2): `ParkingLot` in, `TotalValue` out, the client expects an amount.
pub struct CarSales;

impl Case for CarSales {
    type Request = parking_lot::Owned;
    type Response = total_value::Owned;
    type Expected = u64;

    fn build_request(rng: &mut FastRand, request: parking_lot::Builder<'_>) -> u64 {
        let count = rng.below(200);
        let mut cars = request.init_cars(count);
        let mut amount = 0u64;
        for i in 0..count {
            let car = CarDraw::draw(rng);
            car.write(cars.reborrow().get(i));
            amount = amount.wrapping_add(car.worth().value());
        }
        amount
    }

    fn serve(
        request: parking_lot::Reader<'_>,
        mut response: total_value::Builder<'_>,
    ) -> Result<(), Failure> {
        let mut amount = 0u64;
        for car in request.get_cars()? {
            amount = amount.wrapping_add(Worth::of(car)?.value());
        }
        response.set_amount(amount);
        Ok(())
    }

    fn check(response: total_value::Reader<'_>, expected: u64) -> Result<(), Failure> {
        let amount = response.get_amount();
        if amount == expected {
            Ok(())
        } else {
            Err(Failure(format!("expected amount {expected}, got {amount}")))
        }
    }
}

/// What a car's value is made of (SPEC §3.2), as the client set it or the server read it.
/// Every term is widened to u64 before it is multiplied, and sums wrap, so a hostile car gives
/// the same amount in every language.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Worth {
    pub seats: u8,
    pub doors: u8,
    /// Σ over the wheels of diameter² (+100 with snow tires), already widened and wrapped.
    pub wheels: u64,
    pub length: u16,
    pub width: u16,
    pub height: u16,
    pub horsepower: u16,
    pub uses_gas: bool,
    pub uses_electric: bool,
    pub has_power_windows: bool,
    pub has_power_steering: bool,
    pub has_cruise_control: bool,
    pub has_nav_system: bool,
    pub cup_holders: u8,
}

/// One wheel's share of a car's value.
fn wheel_value(diameter: u16, snow_tires: bool) -> u64 {
    let d = u64::from(diameter);
    (d * d).wrapping_add(if snow_tires { 100 } else { 0 })
}

impl Worth {
    /// The server's reading of one car: only the fields the value needs.
    pub fn of(car: car::Reader<'_>) -> Result<Worth, Failure> {
        let mut wheels = 0u64;
        for wheel in car.get_wheels()? {
            wheels = wheels.wrapping_add(wheel_value(wheel.get_diameter(), wheel.get_snow_tires()));
        }
        let engine = car.get_engine()?;
        Ok(Worth {
            seats: car.get_seats(),
            doors: car.get_doors(),
            wheels,
            length: car.get_length(),
            width: car.get_width(),
            height: car.get_height(),
            horsepower: engine.get_horsepower(),
            uses_gas: engine.get_uses_gas(),
            uses_electric: engine.get_uses_electric(),
            has_power_windows: car.get_has_power_windows(),
            has_power_steering: car.get_has_power_steering(),
            has_cruise_control: car.get_has_cruise_control(),
            has_nav_system: car.get_has_nav_system(),
            cup_holders: car.get_cup_holders(),
        })
    }

    /// The car's value (SPEC §3.2), in wrapping u64 arithmetic.
    pub fn value(&self) -> u64 {
        let flag = |set: bool, worth: u64| if set { worth } else { 0 };
        let volume = u64::from(self.length) * u64::from(self.width) * u64::from(self.height);
        let electric = if self.uses_electric {
            if self.uses_gas {
                5000
            } else {
                3000
            }
        } else {
            0
        };
        (u64::from(self.seats) * 200)
            .wrapping_add(u64::from(self.doors) * 350)
            .wrapping_add(self.wheels)
            .wrapping_add(volume / 50)
            .wrapping_add(u64::from(self.horsepower) * 40)
            .wrapping_add(electric)
            .wrapping_add(flag(self.has_power_windows, 100))
            .wrapping_add(flag(self.has_power_steering, 200))
            .wrapping_add(flag(self.has_cruise_control, 400))
            .wrapping_add(flag(self.has_nav_system, 2000))
            .wrapping_add(u64::from(self.cup_holders) * 25)
    }
}

/// One car's random values, drawn in the SPEC's order (§3.2) before anything is written:
/// the draws then run back to back with the generator in registers, with no library call in
/// between to make the compiler spill it.
#[derive(Debug, Clone, PartialEq)]
pub struct CarDraw {
    pub make: &'static str,
    pub model: &'static str,
    pub color: Color,
    pub seats: u8,
    pub doors: u8,
    /// (diameter, airPressure, snowTires) of the four wheels.
    pub wheels: [(u16, f32, bool); 4],
    pub length: u16,
    pub width: u16,
    pub height: u16,
    pub horsepower: u16,
    pub cylinders: u8,
    pub cc: u32,
    pub uses_electric: bool,
    pub fuel_capacity: f32,
    pub fuel_level: f32,
    pub has_power_windows: bool,
    pub has_power_steering: bool,
    pub has_cruise_control: bool,
    pub cup_holders: u8,
    pub has_nav_system: bool,
}

impl CarDraw {
    /// Draws one car. Every draw is below a small constant, so the narrowing casts never lose
    /// a bit; the float32 roundings are the ones storing into the fields would make.
    pub fn draw(rng: &mut FastRand) -> CarDraw {
        let make = MAKES[rng.below(5) as usize];
        let model = MODELS[rng.below(6) as usize];
        let color = COLORS[rng.below(9) as usize];
        let seats = 2 + rng.below(6) as u8;
        let doors = 2 + rng.below(3) as u8;
        let wheels = [(); 4].map(|()| {
            let diameter = 25 + rng.below(15) as u16;
            let air_pressure = (30.0 + rng.double(20.0)) as f32;
            (diameter, air_pressure, rng.below(16) == 0)
        });
        let length = 170 + rng.below(150) as u16;
        let width = 48 + rng.below(36) as u16;
        let height = 54 + rng.below(48) as u16;
        let horsepower = 100 * rng.below(400) as u16;
        let cylinders = 4 + 2 * rng.below(3) as u8;
        let cc = 800 + rng.below(10000);
        let uses_electric = rng.below(2) != 0;
        let fuel_capacity = (10.0 + rng.double(30.0)) as f32;
        // Drawn against the capacity as stored (float32, widened again).
        let fuel_level = rng.double(f64::from(fuel_capacity)) as f32;
        CarDraw {
            make,
            model,
            color,
            seats,
            doors,
            wheels,
            length,
            width,
            height,
            horsepower,
            cylinders,
            cc,
            uses_electric,
            fuel_capacity,
            fuel_level,
            has_power_windows: rng.below(2) != 0,
            has_power_steering: rng.below(2) != 0,
            has_cruise_control: rng.below(2) != 0,
            cup_holders: rng.below(12) as u8,
            has_nav_system: rng.below(2) != 0,
        }
    }

    /// Writes the car into the message.
    pub fn write(&self, mut car: car::Builder<'_>) {
        car.set_make(self.make);
        car.set_model(self.model);
        car.set_color(self.color);
        car.set_seats(self.seats);
        car.set_doors(self.doors);
        {
            let mut list = car.reborrow().init_wheels(4);
            for (i, &(diameter, air_pressure, snow_tires)) in (0..).zip(&self.wheels) {
                let mut wheel = list.reborrow().get(i);
                wheel.set_diameter(diameter);
                wheel.set_air_pressure(air_pressure);
                wheel.set_snow_tires(snow_tires);
            }
        }
        car.set_length(self.length);
        car.set_width(self.width);
        car.set_height(self.height);
        // At most 319 * 83 * 101: no u32 overflow.
        car.set_weight(
            u32::from(self.length) * u32::from(self.width) * u32::from(self.height) / 200,
        );
        {
            let mut engine = car.reborrow().init_engine();
            engine.set_horsepower(self.horsepower);
            engine.set_cylinders(self.cylinders);
            engine.set_cc(self.cc);
            engine.set_uses_gas(true);
            engine.set_uses_electric(self.uses_electric);
        }
        car.set_fuel_capacity(self.fuel_capacity);
        car.set_fuel_level(self.fuel_level);
        car.set_has_power_windows(self.has_power_windows);
        car.set_has_power_steering(self.has_power_steering);
        car.set_has_cruise_control(self.has_cruise_control);
        car.set_cup_holders(self.cup_holders);
        car.set_has_nav_system(self.has_nav_system);
    }

    /// What the car's value is made of, from the values set (SPEC §3.2's client side).
    pub fn worth(&self) -> Worth {
        Worth {
            seats: self.seats,
            doors: self.doors,
            wheels: self
                .wheels
                .iter()
                .fold(0, |sum, &(d, _, snow)| sum + wheel_value(d, snow)),
            length: self.length,
            width: self.width,
            height: self.height,
            horsepower: self.horsepower,
            uses_gas: true,
            uses_electric: self.uses_electric,
            has_power_windows: self.has_power_windows,
            has_power_steering: self.has_power_steering,
            has_cruise_control: self.has_cruise_control,
            has_nav_system: self.has_nav_system,
            cup_holders: self.cup_holders,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capnp::message;

    #[test]
    fn carsales_server_widens_before_multiplying() {
        let mut request = message::Builder::new_default();
        {
            let root: parking_lot::Builder<'_> = request.init_root();
            let mut c = root.init_cars(1).get(0);
            c.set_seats(255);
            c.set_doors(255);
            c.set_length(u16::MAX);
            c.set_width(u16::MAX);
            c.set_height(u16::MAX);
            c.set_cup_holders(255);
            let mut w = c.reborrow().init_wheels(1).get(0);
            w.set_diameter(u16::MAX);
            w.set_snow_tires(true);
            let mut e = c.init_engine();
            e.set_horsepower(u16::MAX);
            e.set_uses_electric(true);
        }
        let m = 65535u64;
        let expected =
            255 * 200 + 255 * 350 + m * m + 100 + m * m * m / 50 + m * 40 + 3000 + 255 * 25;
        let mut response = message::Builder::new_default();
        CarSales::serve(request.get_root_as_reader().unwrap(), response.init_root()).unwrap();
        CarSales::check(response.get_root_as_reader().unwrap(), expected).unwrap();
        assert!(CarSales::check(response.get_root_as_reader().unwrap(), expected + 1).is_err());
    }
}
