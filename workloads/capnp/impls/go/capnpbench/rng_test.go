package capnpbench

import (
	"strconv"
	"testing"
)

func TestRNGFirstOutputs(t *testing.T) {
	g := loadGolden(t)
	r := NewRNG()
	for i, want := range g.FirstOutputs {
		w, err := strconv.ParseUint(want, 0, 32)
		if err != nil {
			t.Fatal(err)
		}
		if got := r.Next(); got != uint32(w) {
			t.Fatalf("output %d: got %#x, want %s", i, got, want)
		}
	}
}

func TestRNGDraws(t *testing.T) {
	a, b := NewRNG(), NewRNG()
	for range 100 {
		if got, want := a.Rand(7), b.Next()%7; got != want {
			t.Fatalf("Rand(7) = %d, want %d", got, want)
		}
	}
	// (double(next) * r) / 4294967295, multiplied first.
	n := b.Next()
	if got, want := a.Double(20), float64(n)*20/4294967295.0; got != want {
		t.Errorf("Double(20) = %v, want %v", got, want)
	}
	if NewRNG().Double(1) > 1 {
		t.Error("Double(1) above 1")
	}
}
