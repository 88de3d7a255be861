package main

import (
	"testing"
	"time"
)

func TestParseArgsDefaults(t *testing.T) {
	o, err := parseArgs([]string{"--port", "7600"})
	if err != nil {
		t.Fatal(err)
	}
	want := options{addr: "127.0.0.1:7600", clients: 16, messages: 1000, size: 4096,
		mode: "stream", end: "end"}
	if o != want {
		t.Fatalf("%+v", o)
	}
}

func TestParseArgsHost(t *testing.T) {
	o, err := parseArgs([]string{"--port", "7600", "--host", "127.0.0.2"})
	if err != nil || o.addr != "127.0.0.2:7600" {
		t.Fatalf("%+v, %v", o, err)
	}
}

func TestParseArgsRejects(t *testing.T) {
	for _, args := range [][]string{
		{}, {"--port", "1", "--clients", "0"}, {"--port", "1", "--messages", "-1"},
		{"--port", "1", "--size", "-1"}, {"--port", "1", "--type", "256"},
		{"--port", "1", "--type", "4"}, {"--port", "1", "--type", "8"},
		{"--port", "1", "--mode", "burst"}, {"--port", "1", "--end", "never"},
		{"--port", "1", "stray"}, {"--port", "1", "--host", ""},
		{"--port", "1", "--host", "nope"}, {"--port", "1", "--host", "300.1.1.1"},
	} {
		if _, err := parseArgs(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

func TestFiguresUseDecimalMegabytes(t *testing.T) {
	r := figures(options{clients: 16, messages: 1000, size: 4096}, 0.5)
	if r.Bytes != 65536000 || r.MBPerS != 131.072 || r.MsgsPerS != 32000 {
		t.Fatalf("%+v", r)
	}
}

func TestPercentilesNearestRank(t *testing.T) {
	d := make([]time.Duration, 0, 1000)
	for i := 1000; i >= 1; i-- { // unsorted on purpose
		d = append(d, time.Duration(i)*time.Microsecond)
	}
	p := percentiles(d)
	if p.P50 != 500 || p.P90 != 900 || p.P99 != 990 || p.P999 != 999 || p.Max != 1000 ||
		p.Mean != 500.5 {
		t.Fatalf("%+v", p)
	}
	if percentiles(nil) != nil {
		t.Fatal("percentiles of nothing")
	}
}

func TestQueueLenBoundsTheBodiesInFlight(t *testing.T) {
	for _, c := range []struct{ size, want int }{
		{0, 1024}, {64, 1024}, {1024, 256}, {4096, 64}, {65536, 16}, {1 << 20, 16},
	} {
		if got := queueLen(c.size); got != c.want {
			t.Errorf("queueLen(%d) = %d, want %d", c.size, got, c.want)
		}
	}
}
