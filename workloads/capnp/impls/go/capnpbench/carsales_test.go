package capnpbench

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"testing"

	capnp "capnproto.org/go/capnp/v3"

	"msgbench/workloads/capnp/impls/go/schema/carsales"
)

func TestCarsalesGolden(t *testing.T) {
	g := loadGolden(t).Carsales
	c := &Carsales{rng: NewRNG()}
	h := sha256.New()
	for i := range max(len(g.FirstCounts), g.Requests) {
		msg := newRequest(t, c)
		cars := must(must(carsales.ReadRootParkingLot(msg)).Cars())
		if i < len(g.FirstCounts) {
			if cars.Len() != g.FirstCounts[i] || c.want != g.FirstAmounts[i] {
				t.Errorf("request %d: %d cars worth %d, want %d worth %d", i, cars.Len(), c.want,
					g.FirstCounts[i], g.FirstAmounts[i])
			}
		}
		if i < g.Requests {
			h.Write(cceParkingLot(cars))
		}
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != g.SHA256 {
		t.Errorf("CCE digest of the first %d requests: %s, want %s", g.Requests, got, g.SHA256)
	}
}

// The first car of the first request, as SPEC §3.5 spells it out.
func TestCarsalesFirstCar(t *testing.T) {
	msg := newRequest(t, &Carsales{rng: NewRNG()})
	car := must(must(carsales.ReadRootParkingLot(msg)).Cars()).At(0)
	engine := must(car.Engine())
	if must(car.Make()) != "GM" || must(car.Model()) != "Prius" || car.Color() != carsales.Color_black ||
		car.Seats() != 2 || car.Doors() != 4 || car.Length() != 178 || car.Width() != 72 ||
		car.Height() != 57 || car.Weight() != 3652 || engine.Horsepower() != 12900 ||
		engine.Cylinders() != 8 || engine.Cc() != 5195 || !engine.UsesGas() || !engine.UsesElectric() ||
		car.FuelCapacity() != 31.613008 || car.FuelLevel() != 5.6485276 ||
		!car.HasPowerWindows() || !car.HasPowerSteering() || !car.HasCruiseControl() ||
		car.CupHolders() != 8 || car.HasNavSystem() {
		t.Errorf("first car: %v", car)
	}
	type wheel struct {
		diameter  uint16
		pressure  float32
		snowTires bool
	}
	want := []wheel{{34, 48.475872, false}, {33, 46.546158, false}, {36, 39.139904, false},
		{36, 32.082848, false}}
	wheels := must(car.Wheels())
	if wheels.Len() != len(want) {
		t.Fatalf("%d wheels", wheels.Len())
	}
	for i := range want {
		w := wheels.At(i)
		if got := (wheel{w.Diameter(), w.AirPressure(), w.SnowTires()}); got != want[i] {
			t.Errorf("wheel %d: %v, want %v", i, got, want[i])
		}
	}
}

// Hostile field values sum the same everywhere: every field widened to 64 bits, sums wrapping.
func TestCarsalesValueWidensAndWraps(t *testing.T) {
	w := worth{seats: 255, doors: 255, cupHolders: 255, length: 65535, width: 65535, height: 65535,
		horsepower: 65535, wheels: math.MaxUint64, usesElectric: true}
	// 255·200 + 255·350 + (2⁶⁴ − 1) wraps to 140249; 65535³ / 50 needs 48 bits.
	want := uint64(255*200+255*350-1) + 65535*65535*65535/50 + 65535*40 + 3000 + 255*25
	if got := w.value(); got != want {
		t.Errorf("value %d, want %d", got, want)
	}
}

func TestCarsalesServeAndCheck(t *testing.T) {
	c := &Carsales{rng: NewRNG()}
	req := newRequest(t, c)
	respMsg, respSeg := capnp.NewSingleSegmentMessage(nil)
	if err := c.Serve(req, respSeg); err != nil {
		t.Fatal(err)
	}
	if err := c.Check(respMsg); err != nil {
		t.Fatal(err)
	}
	must(carsales.ReadRootTotalValue(respMsg)).SetAmount(c.want + 1)
	if c.Check(respMsg) == nil {
		t.Error("a wrong amount passed")
	}
}

func cceParkingLot(cars carsales.Car_List) []byte {
	b := cce(nil).u32(uint32(cars.Len()))
	for i := range cars.Len() {
		c := cars.At(i)
		b = b.text(must(c.Make())).text(must(c.Model())).u16(uint16(c.Color())).u8(c.Seats()).u8(c.Doors())
		wheels := must(c.Wheels())
		b = b.u32(uint32(wheels.Len()))
		for j := range wheels.Len() {
			w := wheels.At(j)
			b = b.u16(w.Diameter()).f32(w.AirPressure()).bool(w.SnowTires())
		}
		b = b.u16(c.Length()).u16(c.Width()).u16(c.Height()).u32(c.Weight())
		e := must(c.Engine())
		b = b.u16(e.Horsepower()).u8(e.Cylinders()).u32(e.Cc()).bool(e.UsesGas()).bool(e.UsesElectric())
		b = b.f32(c.FuelCapacity()).f32(c.FuelLevel()).bool(c.HasPowerWindows()).
			bool(c.HasPowerSteering()).bool(c.HasCruiseControl()).u8(c.CupHolders()).bool(c.HasNavSystem())
	}
	return b
}
