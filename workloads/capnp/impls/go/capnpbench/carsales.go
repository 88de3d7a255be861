package capnpbench

import (
	"fmt"

	capnp "capnproto.org/go/capnp/v3"

	"msgbench/workloads/capnp/impls/go/schema/carsales"
)

var (
	carMakes  = [...]string{"Toyota", "GM", "Ford", "Honda", "Tesla"}
	carModels = [...]string{"Camry", "Prius", "Volt", "Accord", "Leaf", "Model S"}
)

// Carsales is the carsales case (SPEC §3.2): a parking lot of random cars, valued by the
// server, the total checked by the client.
type Carsales struct {
	rng  *RNG
	want uint64 // the total value of the last request built
}

// Request builds a parking lot of fastRand(200) cars and remembers its total value.
func (c *Carsales) Request(seg *capnp.Segment) error {
	lot, err := carsales.NewRootParkingLot(seg)
	if err != nil {
		return err
	}
	cars, err := lot.NewCars(int32(c.rng.Rand(200)))
	if err != nil {
		return err
	}
	var total uint64
	for i := range cars.Len() {
		w, err := randomCar(c.rng, cars.At(i))
		if err != nil {
			return err
		}
		total += w.value()
	}
	c.want = total
	return nil
}

// worth is what a car's value is made of, as the client set it or the server read it.
type worth struct {
	seats, doors, cupHolders        uint8
	length, width, height           uint16
	horsepower                      uint16
	wheels                          uint64 // Σ diameter² (+100 with snow tires), wrapping
	usesGas, usesElectric           bool
	powerWindows, powerSteering     bool
	cruiseControl, navigationSystem bool
}

// value is the SPEC's value of one car, in wrapping uint64 arithmetic with every field
// widened before it is multiplied, so a hostile request sums the same in every language.
func (w *worth) value() uint64 {
	v := uint64(w.seats)*200 + uint64(w.doors)*350 + w.wheels
	v += uint64(w.length) * uint64(w.width) * uint64(w.height) / 50
	v += uint64(w.horsepower) * 40
	if w.usesElectric {
		if w.usesGas {
			v += 5000
		} else {
			v += 3000
		}
	}
	if w.powerWindows {
		v += 100
	}
	if w.powerSteering {
		v += 200
	}
	if w.cruiseControl {
		v += 400
	}
	if w.navigationSystem {
		v += 2000
	}
	return v + uint64(w.cupHolders)*25
}

func wheelWorth(diameter uint16, snowTires bool) uint64 {
	d := uint64(diameter)
	if snowTires {
		return d*d + 100
	}
	return d * d
}

// randomCar fills car in the SPEC's draw order and returns the worth of what it set (the
// client's expectation comes from its own values, not from reading the message back).
func randomCar(rng *RNG, car carsales.Car) (worth, error) {
	var w worth
	if err := car.SetMake(carMakes[rng.Rand(uint32(len(carMakes)))]); err != nil {
		return w, err
	}
	if err := car.SetModel(carModels[rng.Rand(uint32(len(carModels)))]); err != nil {
		return w, err
	}
	car.SetColor(carsales.Color(rng.Rand(9)))
	w.seats = uint8(2 + rng.Rand(6))
	w.doors = uint8(2 + rng.Rand(3))
	car.SetSeats(w.seats)
	car.SetDoors(w.doors)
	wheels, err := car.NewWheels(4)
	if err != nil {
		return w, err
	}
	for i := range wheels.Len() {
		wheel := wheels.At(i)
		diameter := uint16(25 + rng.Rand(15))
		wheel.SetDiameter(diameter)
		wheel.SetAirPressure(float32(30 + rng.Double(20)))
		snowTires := rng.Rand(16) == 0
		wheel.SetSnowTires(snowTires)
		w.wheels += wheelWorth(diameter, snowTires)
	}
	w.length = uint16(170 + rng.Rand(150))
	w.width = uint16(48 + rng.Rand(36))
	w.height = uint16(54 + rng.Rand(48))
	car.SetLength(w.length)
	car.SetWidth(w.width)
	car.SetHeight(w.height)
	car.SetWeight(uint32(w.length) * uint32(w.width) * uint32(w.height) / 200)
	engine, err := car.NewEngine()
	if err != nil {
		return w, err
	}
	w.horsepower = uint16(100 * rng.Rand(400))
	engine.SetHorsepower(w.horsepower)
	engine.SetCylinders(uint8(4 + 2*rng.Rand(3)))
	engine.SetCc(800 + rng.Rand(10000))
	w.usesGas = true
	w.usesElectric = rng.Rand(2) != 0
	engine.SetUsesGas(w.usesGas)
	engine.SetUsesElectric(w.usesElectric)
	fuelCapacity := float32(10 + rng.Double(30))
	car.SetFuelCapacity(fuelCapacity)
	car.SetFuelLevel(float32(rng.Double(float64(fuelCapacity)))) // the float32 as stored, widened
	w.powerWindows = rng.Rand(2) != 0
	w.powerSteering = rng.Rand(2) != 0
	w.cruiseControl = rng.Rand(2) != 0
	w.cupHolders = uint8(rng.Rand(12))
	w.navigationSystem = rng.Rand(2) != 0
	car.SetHasPowerWindows(w.powerWindows)
	car.SetHasPowerSteering(w.powerSteering)
	car.SetHasCruiseControl(w.cruiseControl)
	car.SetCupHolders(w.cupHolders)
	car.SetHasNavSystem(w.navigationSystem)
	return w, nil
}

// readWorth reads what the value needs from a car of the request.
func readWorth(car carsales.Car) (worth, error) {
	w := worth{
		seats: car.Seats(), doors: car.Doors(), cupHolders: car.CupHolders(),
		length: car.Length(), width: car.Width(), height: car.Height(),
		powerWindows: car.HasPowerWindows(), powerSteering: car.HasPowerSteering(),
		cruiseControl: car.HasCruiseControl(), navigationSystem: car.HasNavSystem(),
	}
	wheels, err := car.Wheels()
	if err != nil {
		return w, fmt.Errorf("wheels: %w", err)
	}
	for i := range wheels.Len() {
		wheel := wheels.At(i)
		w.wheels += wheelWorth(wheel.Diameter(), wheel.SnowTires())
	}
	engine, err := car.Engine()
	if err != nil {
		return w, fmt.Errorf("engine: %w", err)
	}
	w.horsepower = engine.Horsepower()
	w.usesGas, w.usesElectric = engine.UsesGas(), engine.UsesElectric()
	return w, nil
}

// Serve sums the values of the request's cars into a TotalValue.
func (c *Carsales) Serve(req *capnp.Message, seg *capnp.Segment) error {
	lot, err := carsales.ReadRootParkingLot(req)
	if err != nil {
		return err
	}
	cars, err := lot.Cars()
	if err != nil {
		return err
	}
	var total uint64
	for i := range cars.Len() {
		w, err := readWorth(cars.At(i))
		if err != nil {
			return fmt.Errorf("car %d: %w", i, err)
		}
		total += w.value()
	}
	resp, err := carsales.NewRootTotalValue(seg)
	if err != nil {
		return err
	}
	resp.SetAmount(total)
	return nil
}

// Check compares the response's amount with the last request's total.
func (c *Carsales) Check(resp *capnp.Message) error {
	tv, err := carsales.ReadRootTotalValue(resp)
	if err != nil {
		return err
	}
	if got := tv.Amount(); got != c.want {
		return fmt.Errorf("expected amount %d, got %d", c.want, got)
	}
	return nil
}
