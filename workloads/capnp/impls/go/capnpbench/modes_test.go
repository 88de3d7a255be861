package capnpbench

import (
	"io"
	"strings"
	"testing"
	"time"

	capnp "capnproto.org/go/capnp/v3"

	"msgbench/workloads/capnp/impls/go/schema/carsales"
)

var iterations = map[string]int{"carsales": 40, "catrank": 20, "eval": 200}

func TestObjectAndBytesModes(t *testing.T) {
	for _, name := range Cases {
		for _, reuse := range []bool{false, true} {
			cfg := Config{Case: name, Mode: "object", Reuse: reuse, Iterations: iterations[name]}
			rep, err := RunObject(cfg, time.Now())
			if err != nil || rep.Checked != cfg.Iterations+cfg.Warmup() || rep.RequestBytes != 0 {
				t.Errorf("%+v: %+v, %v", cfg, rep, err)
			}
			for _, isPacked := range []bool{false, true} {
				cfg.Mode, cfg.Packed = "bytes", isPacked
				rep, err := RunBytes(cfg, time.Now())
				if err != nil || rep.Checked != cfg.Iterations+cfg.Warmup() ||
					rep.RequestBytes <= 0 || rep.ResponseBytes <= 0 {
					t.Errorf("%+v: %+v, %v", cfg, rep, err)
				}
			}
		}
	}
}

// runClientServer joins a client and a server of this package by two pipes.
func runClientServer(t *testing.T, cfg Config) (Report, int, error, error) {
	t.Helper()
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	type served struct {
		n   int
		err error
	}
	done := make(chan served)
	go func() {
		n, err := RunServer(cfg, reqR, respW)
		_ = respW.Close()
		_ = reqR.CloseWithError(io.ErrClosedPipe) // a failed server's client must not hang
		done <- served{n, err}
	}()
	rep, err := RunClient(cfg, time.Now(), respR, reqW)
	_ = reqW.Close()
	s := <-done
	return rep, s.n, err, s.err
}

func TestClientAgainstServer(t *testing.T) {
	for _, name := range Cases {
		for _, isPacked := range []bool{false, true} {
			cfg := Config{Case: name, Mode: "client", Packed: isPacked, Iterations: iterations[name]}
			rep, served, cerr, serr := runClientServer(t, cfg)
			total := cfg.Iterations + cfg.Warmup()
			if cerr != nil || serr != nil || served != total || rep.Checked != total {
				t.Errorf("%+v: client %+v %v, server %d %v", cfg, rep, cerr, served, serr)
			}
		}
	}
}

// The client checks every answer: a server off by one fails it on the first, naming the
// iteration, the expected and the received value.
func TestClientRefusesWrongAnswers(t *testing.T) {
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	go func() {
		in, out := newFrameReader(reqR, false), newFrameWriter(respW, false)
		rd := newMessageReader()
		c := &Carsales{}
		for {
			frame, err := in.next()
			if err != nil {
				_ = respW.Close()
				return
			}
			msg, seg := capnp.NewSingleSegmentMessage(nil)
			_ = c.Serve(must(rd.read(frame)), seg)
			v := must(carsales.ReadRootTotalValue(msg))
			v.SetAmount(v.Amount() + 1)
			if out.write(msg) != nil {
				return
			}
		}
	}()
	cfg := Config{Case: "carsales", Mode: "client", Iterations: 40}
	_, err := RunClient(cfg, time.Now(), respR, reqW)
	_ = reqW.Close()
	if err == nil || !strings.Contains(err.Error(), "iteration 1 (warm-up): expected amount 135060640, got 135060641") {
		t.Errorf("error: %v", err)
	}
}

func TestClientReportsAServerThatStops(t *testing.T) {
	reqR, reqW := io.Pipe()
	respR, respW := io.Pipe()
	go func() {
		_, _ = io.CopyN(io.Discard, reqR, 8)
		_ = respW.Close()
		_ = reqR.Close()
	}()
	_, err := RunClient(Config{Case: "eval", Mode: "client", Iterations: 5}, time.Now(), respR, reqW)
	if err == nil {
		t.Fatal("no error")
	}
}

// With reuse, an object-mode iteration allocates nothing once the pools are warm, and a
// bytes-mode one only what capnp.Encoder.Encode allocates per message (its net.Buffers
// escapes); the readers allocate nothing for one-segment messages.
func TestAllocationsPerIteration(t *testing.T) {
	for _, tc := range []struct {
		name, mode string
		reuse      bool
		max        float64
	}{
		{"carsales", "object", true, 0},
		{"carsales", "bytes", true, 2},
		{"eval", "object", true, 0},
		// No reuse: a new message and arena per message (the library's NewMessage).
		{"carsales", "object", false, 8},
	} {
		c, _ := NewCase(tc.name)
		reqs, resps := builder{reuse: tc.reuse}, builder{reuse: tc.reuse}
		step := objectStep(c, &reqs, &resps)
		if tc.mode == "bytes" {
			step = newBytesLoop(c, &reqs, &resps, false).step
		}
		for range 50 { // warm the pools and grow the buffers
			if err := step(); err != nil {
				t.Fatal(err)
			}
		}
		allocs := testing.AllocsPerRun(200, func() {
			if err := step(); err != nil {
				t.Fatal(err)
			}
		})
		if allocs > tc.max {
			t.Errorf("%s %s reuse=%v: %.1f allocations per iteration, want <= %v", tc.name, tc.mode,
				tc.reuse, allocs, tc.max)
		}
		t.Logf("%s %s reuse=%v: %.1f allocations per iteration", tc.name, tc.mode, tc.reuse, allocs)
	}
}

// One benchmark per case and mode, for profiling (go test -bench . -cpuprofile ...).
func benchMode(b *testing.B, run func(Config, time.Time) (Report, error), cfg Config) {
	cfg.Iterations = b.N
	b.ReportAllocs()
	b.ResetTimer()
	if _, err := run(cfg, time.Now()); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkCarsalesObjectReuse(b *testing.B) {
	benchMode(b, RunObject, Config{Case: "carsales", Mode: "object", Reuse: true})
}

func BenchmarkCarsalesObject(b *testing.B) {
	benchMode(b, RunObject, Config{Case: "carsales", Mode: "object"})
}

func BenchmarkCarsalesBytes(b *testing.B) {
	benchMode(b, RunBytes, Config{Case: "carsales", Mode: "bytes"})
}

func BenchmarkCarsalesPackedBytes(b *testing.B) {
	benchMode(b, RunBytes, Config{Case: "carsales", Mode: "bytes", Packed: true})
}

func BenchmarkCatrankObject(b *testing.B) {
	benchMode(b, RunObject, Config{Case: "catrank", Mode: "object"})
}

func BenchmarkCatrankBytes(b *testing.B) {
	benchMode(b, RunBytes, Config{Case: "catrank", Mode: "bytes"})
}

func BenchmarkEvalObject(b *testing.B) {
	benchMode(b, RunObject, Config{Case: "eval", Mode: "object"})
}

func BenchmarkEvalBytes(b *testing.B) {
	benchMode(b, RunBytes, Config{Case: "eval", Mode: "bytes"})
}
