// Package fuzzseed is what every Go fuzz target of the lab shares: the shared seed corpus
// loaded into the fuzzer, and a hang check (docs/robustness.md).
package fuzzseed

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"
	"time"
)

// HangLimit is how long one input may run: longer is a hang, a finding. go test -fuzz has no
// per-input timeout of its own (a hung input would only stall the campaign), so WatchHang ends
// the process with every goroutine's stack, and go test keeps the input as a failure.
const HangLimit = 10 * time.Second

// WatchHang arms the hang check for one input; the caller stops the timer when it is done.
func WatchHang(input []byte) *time.Timer {
	return time.AfterFunc(HangLimit, func() {
		debug.SetTraceback("all")
		panic(fmt.Sprintf("a fuzz input of %d bytes still running after %v: a hang", len(input), HangLimit))
	})
}

// AddCorpus seeds f with every file of a shared corpus folder (workloads/<w>/fuzz/corpus/<target>,
// given relative to the test's package), and fails when the folder is missing or empty: the
// seeds would silently be lost otherwise.
func AddCorpus(f *testing.F, dir string) {
	f.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		f.Fatalf("shared seed corpus %s: %v (it is checked in: the workload's fuzz/make_corpus.py writes it)", dir, err)
	}
	n := 0
	for _, e := range entries {
		if !e.Type().IsRegular() {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		n++
	}
	if n == 0 {
		f.Fatalf("shared seed corpus %s holds no seeds", dir)
	}
}
